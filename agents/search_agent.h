// SearchAgent: beam search over whole episodes on env forks, the strongest
// built-in baseline. When it meets a state it has no plan for, it plans the
// rest of the episode and then replays the plan step by step.
//
// Planning: the greedy and xla policies are rolled out to the end first,
// and xla once more from where greedy stops changing anything (these runs
// are the seeds). Then a beam of `beam` states is grown step by
// step: each state's children are the xla choice, the greedy run's choice
// where the state is on the greedy run, and `branch` random variations of
// them (one choice group changed), each one env step on a fork. The best state seen anywhere (lowest runtime, seeds
// included) is the plan's target: the path to it, then keeping the
// originals (all-0 choices), which leaves the module as it is. So under a
// deterministic runtime source the search never ends worse than greedy or
// xla from the same state.
//
// `budget` counts the env steps of the beam (each is one runtime
// measurement); the seed rollouts (with the greedy policy's lookahead
// evaluations) come on top, so a plan costs about one greedy episode plus
// `budget` steps.
//
// Measurement budget (`measure` = k > 0): the env's runtimes may be a model
// (the main job plans on the CPU cost model, which mis-ranks some plans).
// Where a measured source is at hand (AgentContext::measured, else the env's
// own source if it is measured), the plan's target is chosen by measuring
// instead: the k best distinct states by the env's runtimes, and the end
// states of the seeds (xla from the start, greedy, xla after greedy), are
// compiled and timed against one another there (MeasureInterleaved: rounds
// that rotate the order, so load changes hit all alike; not cached, so a
// later Runtime() of the chosen module is a fresh measurement and not the
// lucky draw that picked it). The xla seed's end state is the reference:
// another state is chosen only when its median is below xla's by more than
// the noise, max(2%, 2 x the mean of the two spreads (p90 - p10) / median
// over sqrt(n), n the fewer of their timed runs; about 3 sigma of the
// difference of two medians), both from at least 3 timed runs, and then the
// fastest one, if a second timing of it against xla's alone agrees. xla's end is timed
// alone first: a module too slow for 3 runs within the source's time per
// module (max_seconds) gets 3 runs each for as many candidates as fit 3 s
// (the seeds' ends first), and keeps xla's end when that is fewer than two
// (the slowest modules, seconds a run). `measure_ms` sets the time per
// candidate instead of the source's (the main job times a few hundred
// plans); xla's end is then probed with a single timed run, and the module
// is slow where three such runs do not fit measure_ms. Candidates that do not compile
// there are dropped; if the xla seed's end does not (or the timing fails),
// the plan keeps the best state by the env's runtimes. With a deterministic
// source only, the option changes nothing.
// The timing runs in an arena of all cores while search's planning on other
// threads pauses between env steps (Agent::times_modules says why).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "agents/greedy_agent.h"
#include "agents/xla_agent.h"
#include "envs/runtime_source.h"

namespace hlogym {

struct SearchOptions {
  int64_t budget = 64;  // env steps of the beam, per plan
  int64_t beam = 4;     // states kept per depth
  int64_t branch = 4;   // random variations per state
  // Wall-time budget of one plan in seconds (0: none). When it runs out the
  // seed that is running stops, xla carries on from there, and the beam
  // is skipped; the plan is the best state found so far, or with `measure`
  // the fastest of the seeds' ends timed against xla's (the model's best
  // states are not timed then). Timing candidates comes on top of it, and
  // so do waits while another episode times (MachineGate).
  int64_t seconds = 0;
  // End states timed on the measured source per plan, besides the seeds'
  // (0: none; see above).
  int64_t measure = 0;
  static constexpr int64_t kMaxMeasure = 64;
  // Milliseconds of timed runs per candidate (0: the source's own time per
  // module, max_seconds). With it, xla's end is probed with one warm-up and
  // one timed run instead of a full measurement: what decides whether the
  // module is too slow for three runs in that time.
  int64_t measure_ms = 0;
  static constexpr int64_t kMaxMeasureMs = 10000;
};

// What the last plan's measurement found (empty when it measured nothing).
struct SearchMeasurement {
  std::string source;                 // the measured source's name
  std::vector<uint64_t> fingerprints;  // of the end modules timed; [0] is xla's
  std::vector<double> median_seconds;
  std::vector<double> spreads;
  std::vector<int> runs;               // timed runs each
  // xla's end and the fastest other, timed again against each other when
  // the first timing chose the other (empty otherwise).
  std::vector<double> recheck_median_seconds;
  int64_t chosen = -1;                // index of the plan's target, -1: none
  std::string error;                  // why the measurement was not used
  bool seeds_only = false;            // the plan ran out of time: seeds' ends alone
  double seconds = 0;                 // compiling and timing the candidates
  double compile_seconds = 0;         // of which compiling (Prepare)
};

class SearchAgent : public Agent {
 public:
  SearchAgent(SearchOptions options, uint64_t seed,
              std::shared_ptr<RuntimeSource> measured = nullptr)
      : options_(options), rng_(seed), measured_(std::move(measured)) {}
  std::string name() const override;
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) override;
  // The runtime the current plan ends at, and how many plans were made.
  double planned_runtime() const { return planned_runtime_; }
  int64_t plans() const { return plans_; }
  const SearchMeasurement& last_measurement() const { return last_measurement_; }
  MeasuringTime measuring_time() const override { return measuring_time_; }
  bool following_plan() const override { return following_plan_; }
  // The fork the plan made from `env`'s state ends on, once: the plan's
  // steps again would give that state.
  std::unique_ptr<HloRewriteEnv> TakePlannedState(const HloRewriteEnv& env) override;
  // A plan runs greedy and xla (twice) to the end, then the beam: 4x xla's
  // over the main job's modules (144 against 35.5 s).
  double relative_work() const override { return 4; }
  bool times_modules(const HloRewriteEnv& env) const override {
    return MeasuredSource(env) != nullptr;
  }

 private:
  struct PlanStep {
    uint64_t fingerprint;  // the state the step is taken from
    int64_t step;
    std::vector<int64_t> choices;
  };
  struct Node;
  absl::Status Plan(const HloRewriteEnv& env);
  // Where the plans' candidates are timed: null when nowhere.
  RuntimeSource* MeasuredSource(const HloRewriteEnv& env) const;
  // Times `candidates` (the xla seed's end first) on `source` and returns
  // the index of the plan's target, or an error saying why none was chosen.
  absl::StatusOr<size_t> ChooseByMeasurement(RuntimeSource& source,
                                             const std::vector<const Node*>& candidates);

  SearchOptions options_;
  std::mt19937_64 rng_;
  std::shared_ptr<RuntimeSource> measured_;
  SearchMeasurement last_measurement_;
  MeasuringTime measuring_time_;
  GreedyAgent greedy_;
  XlaAgent xla_;
  std::vector<PlanStep> plan_;
  uint64_t final_fingerprint_ = 0;  // after the plan: keep originals
  int64_t final_step_ = 0;
  double planned_runtime_ = 0;
  int64_t plans_ = 0;
  bool following_plan_ = false;  // the last Act's choices came from plan_
  // The state plan_ leads to, until taken (TakePlannedState) or the episode
  // moves on without it.
  std::unique_ptr<HloRewriteEnv> planned_state_;
};

}  // namespace hlogym

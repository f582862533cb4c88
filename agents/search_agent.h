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
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "agents/greedy_agent.h"
#include "agents/xla_agent.h"

namespace hlogym {

struct SearchOptions {
  int64_t budget = 64;  // env steps of the beam, per plan
  int64_t beam = 4;     // states kept per depth
  int64_t branch = 4;   // random variations per state
  // Wall-time budget of one plan in seconds (0: none). When it runs out the
  // seed that is running stops, xla carries on from there, and the beam
  // is skipped; the plan is the best state found so far.
  int64_t seconds = 0;
};

class SearchAgent : public Agent {
 public:
  SearchAgent(SearchOptions options, uint64_t seed) : options_(options), rng_(seed) {}
  std::string name() const override;
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) override;
  // The runtime the current plan ends at, and how many plans were made.
  double planned_runtime() const { return planned_runtime_; }
  int64_t plans() const { return plans_; }

 private:
  struct PlanStep {
    uint64_t fingerprint;  // the state the step is taken from
    int64_t step;
    std::vector<int64_t> choices;
  };
  absl::Status Plan(const HloRewriteEnv& env);

  SearchOptions options_;
  std::mt19937_64 rng_;
  GreedyAgent greedy_;
  XlaAgent xla_;
  std::vector<PlanStep> plan_;
  uint64_t final_fingerprint_ = 0;  // after the plan: keep originals
  int64_t final_step_ = 0;
  double planned_runtime_ = 0;
  int64_t plans_ = 0;
};

}  // namespace hlogym

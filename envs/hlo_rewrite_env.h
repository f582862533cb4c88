// HloRewriteEnv: one environment. An episode takes a benchmark through its
// pre-passes, then alternates: a dry pass offers alternatives (the
// observation), the agent chooses (the action), the choices are applied, dead
// code pruned and the post-passes run, and the runtime change is the reward.
// It ends (terminated) when no dry pass offers anything, or is truncated at
// max_steps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/features/graph_features.h"
#include "core/rewrite/decisions.h"
#include "envs/benchmark_set.h"
#include "envs/graph_limits.h"

namespace hlogym {

struct EnvSpec {
  std::string id;                         // "fusion-v0", ...
  // Where each step's alternatives come from: either dry_passes, tried in
  // turn from the one after the last that offered (one pass per step), or
  // dry_stages, which mirror a pipeline of fixed-point stages: a pass is
  // offered again while it has something and the agent takes some of it,
  // then the next pass of its stage (a step that takes nothing moves on, as
  // a fixed-point loop moves on from a pass that changed nothing); a stage
  // ends when a whole round of it changes nothing, and never comes back.
  // Exactly one of the two is set.
  std::vector<std::string> dry_passes;
  std::vector<std::vector<std::string>> dry_stages;
  std::vector<std::string> post_passes;   // run after each decision
  int64_t max_steps = 32;
  FeatureLimits limits;
  // Which computations are observed (and so count towards the limits).
  NodeScope node_scope = NodeScope::kAll;
};

// What the caller learns about the episode after reset and each step.
struct EnvInfo {
  int64_t benchmark = -1;           // index into the BenchmarkSet
  std::string benchmark_name;
  int64_t step = 0;                 // steps taken this episode
  double original_runtime = 0;      // after the pre-passes, seconds
  double default_runtime = 0;       // after the default pipeline
  double current_runtime = 0;       // now
  uint64_t fingerprint = 0;         // of the module without alternatives
  int64_t num_alternatives = 0;     // offered now
  int64_t rewrites_applied = 0;     // non-zero choices so far
  std::string dry_pass;             // the pass that offered them
  bool terminated = false;
  bool truncated = false;
};

// Enough to replay an episode: its benchmark and every step's choices.
struct EpisodeRecord {
  int64_t benchmark = -1;
  std::vector<std::vector<int64_t>> choices;
  std::vector<double> rewards;
};

class HloRewriteEnv {
 public:
  // Checks every pass spec up front.
  static absl::StatusOr<std::unique_ptr<HloRewriteEnv>> Create(
      EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks, uint64_t seed);

  // Starts an episode on `benchmark`, or on one drawn from the env's random
  // generator (reseeded first when `seed` is given). A graph that does not
  // fit spec().limits is an error naming the limit and the benchmark; the
  // episode in progress is then kept as it was (the random generator has
  // still advanced, so the next reset draws afresh).
  absl::Status Reset(std::optional<uint64_t> seed = std::nullopt,
                     std::optional<int64_t> benchmark = std::nullopt);

  // Applies one choice per alternatives node (FindAlternatives order; 0 keeps
  // the original) and advances. Returns the reward: the runtime saved by this
  // step relative to the original runtime, (t_prev - t_new) / t_original.
  // On error (bad choices, a step after the episode ended, a resulting
  // graph that does not fit spec().limits, a failing reward source) nothing
  // changes. The module is edited in place; a step that fails after that is
  // undone by replaying the episode (its graph near the limits, a step
  // keeps the module before instead, so that the common failure is cheap).
  absl::StatusOr<double> Step(absl::Span<const int64_t> choices);

  // Writes the current (alternative) graph into `view`; with `extent`, a
  // view written before, clearing only what the last write used, and by
  // `writers` (see WriteObservation).
  absl::StatusOr<GraphCounts> Observe(const ObservationView& view,
                                      GraphCounts* extent = nullptr,
                                      RowWriters writers = RowWriters::kCallingThread) const;

  const EnvInfo& info() const { return info_; }
  const EpisodeRecord& record() const { return record_; }
  const Module& module() const { return *module_; }
  const EnvSpec& spec() const { return spec_; }
  const BenchmarkSet& benchmarks() const { return *benchmarks_; }
  bool in_episode() const { return module_ != nullptr; }
  // Choices at each alternatives node now offered (FindAlternatives order);
  // never more than spec().limits.max_alternatives entries.
  const std::vector<int32_t>& choice_counts() const { return choice_counts_; }
  // The steps in a row that the offering pass has been asked (with
  // dry_stages, while the agent takes some of it) are one round of it, as
  // one run of the pass in a pipeline: instructions with ids from this one
  // on were made in the current round (rewrites taken, or the candidates
  // offered now). An agent retracing an apply-mode run can tell what that
  // run would not have seen yet. With dry_passes every step is a round.
  int64_t round_first_id() const { return dry_.round_first_id; }
  // The module the current round began on, without alternatives: the one
  // its first step was offered on, as EndModule would give it then (the
  // current end module when this step begins the round). One apply-mode run
  // of the pass there is what the pipeline's run makes of the round; later
  // steps see a module partly rewritten by the round, where a run would
  // merge more (multi-output fusion's siblings of a fusion it just made).
  absl::StatusOr<std::unique_ptr<Module>> RoundStartModule() const;
  // The alternatives nodes now offered (FindAlternatives(module()), kept
  // from when they were offered: agents need not walk every candidate again).
  const std::vector<AlternativeNode>& alternatives() const { return alternatives_; }

  // An independent copy in the same state (same module, step, record; the
  // random generator continues identically).
  std::unique_ptr<HloRewriteEnv> Fork() const;
  // Moves `fork`'s state into this env: a Fork of it stepped further (an
  // agent's planned end state) stands for stepping this env there, which
  // gives the same module, record and generator state. An env of another
  // spec or dataset, or one that is not as far on in this episode's record,
  // is an error and changes nothing.
  absl::Status TakeStateOf(HloRewriteEnv&& fork);

 private:
  HloRewriteEnv(EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks,
                uint64_t seed);
  // Which dry pass comes next (see EnvSpec).
  struct DryCursor {
    size_t stage = 0;
    size_t pass = 0;  // in dry_passes, or in the stage
    size_t idle = 0;  // passes of the stage in a row that changed nothing
    // Whether the pass is asked again after a step that took some of it
    // (the same round), and the first instruction id of its round.
    bool continues_round = false;
    int64_t round_first_id = 0;
  };
  // Runs dry passes on `module` from `cursor` until one offers alternatives;
  // returns its spec, or "" when none did (the episode is over).
  absl::StatusOr<std::string> RunDryPasses(Module& module, DryCursor& cursor) const;
  // Runs the dry passes on module_, checks that the graph fits the limits
  // and records what is offered (or that the episode is terminated).
  absl::Status OfferAlternatives();
  // Whether the graph offered now is over half of a limit: a step from it
  // keeps the module before (see Step), as its graph may not fit.
  bool NearLimits() const;
  // Puts the episode back where the failed step began, by replaying its
  // record, and returns `failure`; when even that fails, ends the episode
  // (a reset is needed) and says so.
  absl::Status UndoByReplay(absl::Status failure);

  EnvSpec spec_;
  std::shared_ptr<const BenchmarkSet> benchmarks_;
  std::mt19937_64 rng_;
  std::unique_ptr<Module> module_;
  DryCursor dry_;
  EnvInfo info_;
  EpisodeRecord record_;
  std::vector<int32_t> choice_counts_;
  // module_'s alternatives nodes (FindAlternatives), found when they are
  // offered and used by the next step.
  std::vector<AlternativeNode> alternatives_;
  // module_'s entry in post-order (MakePostOrder), kept from the walk that
  // found alternatives_ so that the next step (which stores the entry in
  // that order, less what it prunes) need not walk it again; empty when
  // that walk did not order the entry.
  std::vector<Instruction*> entry_order_;
  // With dry_stages, while a round goes on past its first step: the module
  // of that step, with the alternatives then offered (kept rather than
  // freed at the step; shared by forks, never changed). Empty otherwise.
  struct RoundStart {
    std::shared_ptr<const Module> module;
    std::vector<AlternativeNode> alternatives;
  };
  RoundStart round_start_;
  // What the graph offered now holds (MeasureGraph), for NearLimits.
  GraphSize graph_size_;
  // A replica replaying an episode for UndoByReplay: its steps measure no
  // runtime (the env it stands for has them already).
  bool replaying_ = false;
};

}  // namespace hlogym

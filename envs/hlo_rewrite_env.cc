#include "envs/hlo_rewrite_env.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "envs/graph_limits.h"

namespace hlogym {

HloRewriteEnv::HloRewriteEnv(EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks,
                             uint64_t seed)
    : spec_(std::move(spec)), benchmarks_(std::move(benchmarks)), rng_(seed) {}

absl::StatusOr<std::unique_ptr<HloRewriteEnv>> HloRewriteEnv::Create(
    EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks, uint64_t seed) {
  if (benchmarks == nullptr || benchmarks->size() == 0) {
    return absl::InvalidArgumentError("an environment needs at least one benchmark");
  }
  if (spec.dry_passes.empty() == spec.dry_stages.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "env `", spec.id, "` needs dry passes or dry stages (one of the two): ",
        spec.dry_passes.empty() ? "it has neither, so there is nothing to decide"
                                : "it has both"));
  }
  for (const std::vector<std::string>& stage : spec.dry_stages) {
    if (stage.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("env `", spec.id, "` has an empty dry stage"));
    }
    for (const std::string& pass : stage) RETURN_IF_ERROR(CreatePass(pass).status());
  }
  if (spec.max_steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_steps must be positive, got ", spec.max_steps));
  }
  for (const auto* list : {&spec.dry_passes, &spec.post_passes}) {
    for (const std::string& pass : *list) RETURN_IF_ERROR(CreatePass(pass).status());
  }
  return std::unique_ptr<HloRewriteEnv>(
      new HloRewriteEnv(std::move(spec), std::move(benchmarks), seed));
}

absl::Status HloRewriteEnv::Reset(std::optional<uint64_t> seed,
                                  std::optional<int64_t> benchmark) {
  if (seed) rng_.seed(*seed);
  int64_t index;
  if (benchmark) {
    index = *benchmark;
  } else {
    std::uniform_int_distribution<int64_t> pick(0, benchmarks_->size() - 1);
    index = pick(rng_);
  }
  ASSIGN_OR_RETURN(const PreparedBenchmark* prepared, benchmarks_->Prepared(index));
  // The episode in progress comes back if the new one cannot start.
  std::unique_ptr<Module> saved_module = std::move(module_);
  EnvInfo saved_info = std::move(info_);
  EpisodeRecord saved_record = std::move(record_);
  std::vector<int32_t> saved_counts = std::move(choice_counts_);
  std::vector<AlternativeNode> saved_alternatives = std::move(alternatives_);
  std::vector<Instruction*> saved_entry_order = std::move(entry_order_);
  const DryCursor saved_dry = dry_;
  RoundStart saved_round_start = std::move(round_start_);
  round_start_ = RoundStart();
  module_ = prepared->module->Clone();
  dry_ = DryCursor();
  info_ = EnvInfo();
  info_.benchmark = index;
  info_.benchmark_name = benchmarks_->name(index);
  info_.original_runtime = prepared->original_runtime;
  info_.default_runtime = prepared->default_runtime;
  info_.current_runtime = prepared->original_runtime;
  info_.fingerprint = prepared->fingerprint;
  record_ = EpisodeRecord();
  record_.benchmark = index;
  absl::Status offered = OfferAlternatives();
  if (!offered.ok()) {
    module_ = std::move(saved_module);
    info_ = std::move(saved_info);
    record_ = std::move(saved_record);
    choice_counts_ = std::move(saved_counts);
    alternatives_ = std::move(saved_alternatives);
    entry_order_ = std::move(saved_entry_order);
    dry_ = saved_dry;
    round_start_ = std::move(saved_round_start);
  }
  return offered;
}

absl::StatusOr<std::string> HloRewriteEnv::RunDryPasses(Module& module,
                                                        DryCursor& cursor) const {
  auto offers = [&](const std::string& spec) -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(spec));
    ASSIGN_OR_RETURN(int64_t alternatives, RunDryPass(*pass, module));
    return alternatives > 0;
  };
  if (spec_.dry_stages.empty()) {
    const size_t n = spec_.dry_passes.size();
    for (size_t tried = 0; tried < n; ++tried) {
      const std::string& spec = spec_.dry_passes[cursor.pass];
      cursor.pass = (cursor.pass + 1) % n;
      cursor.round_first_id = module.next_unique_id();
      ASSIGN_OR_RETURN(const bool offered, offers(spec));
      if (offered) return spec;
    }
    return std::string();
  }
  while (cursor.stage < spec_.dry_stages.size()) {
    const std::vector<std::string>& stage = spec_.dry_stages[cursor.stage];
    if (cursor.idle == stage.size()) {
      cursor = DryCursor{cursor.stage + 1, 0, 0};
      continue;
    }
    if (!cursor.continues_round) cursor.round_first_id = module.next_unique_id();
    const std::string& spec = stage[cursor.pass];
    ASSIGN_OR_RETURN(const bool offered, offers(spec));
    if (offered) return spec;  // asked again next step if the agent takes some
    cursor.pass = (cursor.pass + 1) % stage.size();
    ++cursor.idle;
    cursor.continues_round = false;
  }
  return std::string();
}

absl::Status HloRewriteEnv::OfferAlternatives() {
  info_.num_alternatives = 0;
  choice_counts_.clear();
  alternatives_.clear();
  entry_order_.clear();
  ASSIGN_OR_RETURN(info_.dry_pass, RunDryPasses(*module_, dry_));
  // Checked before anything indexes alternatives by slot: a graph larger
  // than the observation must never reach an action row of width A_max.
  // The alternatives nodes (FindAlternatives) are found by the same walk.
  std::vector<AlternativeNode> found;
  std::vector<Instruction*> entry_order;
  const GraphSize size = MeasureGraph(*module_, &found, &entry_order, spec_.node_scope);
  RETURN_IF_ERROR(
      CheckGraphFits(size, spec_.limits, spec_.id, info_.benchmark_name, module_->name()));
  graph_size_ = size;
  if (info_.dry_pass.empty()) {
    info_.terminated = true;
    return absl::OkStatus();
  }
  alternatives_ = std::move(found);
  entry_order_ = std::move(entry_order);
  for (const AlternativeNode& alt : alternatives_) {
    choice_counts_.push_back(static_cast<int32_t>(alt.num_choices()));
  }
  info_.num_alternatives = static_cast<int64_t>(choice_counts_.size());
  return absl::OkStatus();
}

bool HloRewriteEnv::NearLimits() const {
  const FeatureLimits& l = spec_.limits;
  return 2 * graph_size_.nodes > l.max_nodes || 2 * graph_size_.edges > l.max_edges ||
         2 * graph_size_.alternatives > l.max_alternatives ||
         2 * graph_size_.max_choices > l.max_choices;
}

absl::StatusOr<double> HloRewriteEnv::Step(absl::Span<const int64_t> choices) {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("step before reset: call reset first");
  }
  if (info_.terminated || info_.truncated) {
    return absl::FailedPreconditionError(
        "the episode is over (terminated or truncated): call reset");
  }
  // Checked first, so that an error from ApplyChoices below comes after
  // editing and is undone.
  RETURN_IF_ERROR(CheckChoices(alternatives_, choices));
  const bool takes_some =
      std::any_of(choices.begin(), choices.end(), [](int64_t c) { return c != 0; });
  // The step edits the module in place, as a copy of it with the choices
  // would be stored (ApplyChoices, then StoreAsCloned: passes depend on
  // storage and user order, so a fork, which is such a copy, takes each
  // step to the same module). The module before is kept, by choosing into a
  // copy, only where it is needed after: as the first module of a round of
  // dry stages, or to put back cheaply after a step whose graph may outgrow
  // the limits. A step that fails after editing in place is undone by
  // replaying the episode (rare: the limits, a failing reward source).
  const bool starts_round =
      !spec_.dry_stages.empty() && takes_some && round_start_.module == nullptr;
  std::unique_ptr<Module> before;
  if (starts_round || NearLimits()) {
    ASSIGN_OR_RETURN(std::unique_ptr<Module> next,
                     CloneWithChoices(*module_, alternatives_, choices, entry_order_));
    before = std::exchange(module_, std::move(next));
  } else if (absl::Status s = ApplyChoices(*module_, alternatives_, choices, entry_order_);
             !s.ok()) {
    return UndoByReplay(std::move(s));
  }
  module_->StoreAsCloned();
  EnvInfo saved_info = info_;
  std::vector<int32_t> saved_counts = std::move(choice_counts_);
  std::vector<AlternativeNode> saved_alternatives = std::move(alternatives_);
  std::vector<Instruction*> saved_entry_order = std::move(entry_order_);
  const DryCursor saved_dry = dry_;
  auto undo = [&](absl::Status failure) -> absl::Status {
    info_ = std::move(saved_info);
    dry_ = saved_dry;
    if (before == nullptr) return UndoByReplay(std::move(failure));
    module_ = std::move(before);
    choice_counts_ = std::move(saved_counts);
    alternatives_ = std::move(saved_alternatives);
    entry_order_ = std::move(saved_entry_order);
    return failure;
  };
  if (absl::Status s = RunPassSpecs(spec_.post_passes, *module_); !s.ok()) return undo(s);
  double runtime = info_.current_runtime;
  if (!replaying_) {
    absl::StatusOr<double> measured = benchmarks_->runtime().Runtime(*module_);
    if (!measured.ok()) return undo(measured.status());
    runtime = *measured;
  }
  info_.fingerprint = Fingerprint(*module_);
  if (!spec_.dry_stages.empty()) {
    // A pass that changed the module is asked again: its round goes on.
    // Once its offers are all declined its round (one run of the pass) is
    // over and the next pass of the stage is asked. A round that changed
    // nothing counts towards the stage's end; one that changed something
    // does not, as a fixed-point loop runs every pass once more after an
    // iteration that changed something (the pass too: a second run of
    // multi-output fusion can merge what the first made).
    const bool round_changed = dry_.continues_round;
    dry_.continues_round = takes_some;
    if (dry_.continues_round) {
      dry_.idle = 0;
    } else {
      dry_.pass = (dry_.pass + 1) % spec_.dry_stages[dry_.stage].size();
      if (!round_changed) ++dry_.idle;
    }
  }
  if (absl::Status s = OfferAlternatives(); !s.ok()) return undo(s);
  // The round goes on (the same pass offers again): its first step's module
  // is kept, once; a new round starts from the module now offered.
  if (!dry_.continues_round) {
    round_start_ = RoundStart();
  } else if (round_start_.module == nullptr) {
    round_start_.module = std::move(before);
    round_start_.alternatives = std::move(saved_alternatives);
  }
  const double reward = info_.original_runtime > 0
                            ? (info_.current_runtime - runtime) / info_.original_runtime
                            : 0.0;
  info_.current_runtime = runtime;
  info_.step += 1;
  for (int64_t c : choices) info_.rewrites_applied += c != 0;
  if (!info_.terminated && info_.step >= spec_.max_steps) info_.truncated = true;
  record_.choices.emplace_back(choices.begin(), choices.end());
  record_.rewards.push_back(reward);
  return reward;
}

absl::Status HloRewriteEnv::UndoByReplay(absl::Status failure) {
  // The module was edited in place: the episode is replayed to where this
  // step began (every step is deterministic) without measuring runtimes;
  // info_ and the random generator are this env's already.
  std::unique_ptr<HloRewriteEnv> replica(new HloRewriteEnv(spec_, benchmarks_, 0));
  replica->replaying_ = true;
  absl::Status replayed = replica->Reset(std::nullopt, record_.benchmark);
  for (size_t i = 0; replayed.ok() && i < record_.choices.size(); ++i) {
    replayed = replica->Step(record_.choices[i]).status();
  }
  if (!replayed.ok()) {
    module_.reset();  // in_episode() is false: the next call must be reset
    return absl::InternalError(absl::StrCat(
        failure.message(), "; and the episode could not be put back as it was before this step (",
        replayed.message(), "): call reset"));
  }
  module_ = std::move(replica->module_);
  dry_ = replica->dry_;
  choice_counts_ = std::move(replica->choice_counts_);
  alternatives_ = std::move(replica->alternatives_);
  entry_order_ = std::move(replica->entry_order_);
  graph_size_ = replica->graph_size_;
  round_start_ = std::move(replica->round_start_);
  return failure;
}

absl::StatusOr<GraphCounts> HloRewriteEnv::Observe(const ObservationView& view,
                                                   GraphCounts* extent,
                                                   RowWriters writers) const {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("observe before reset: call reset first");
  }
  if (extent != nullptr) {
    return WriteObservation(*module_, spec_.limits, view, extent, writers, spec_.node_scope);
  }
  return WriteObservation(*module_, spec_.limits, view, spec_.node_scope);
}

absl::StatusOr<std::unique_ptr<Module>> HloRewriteEnv::RoundStartModule() const {
  if (module_ == nullptr) {
    return absl::FailedPreconditionError("no round before reset: call reset first");
  }
  if (round_start_.module == nullptr) {
    return CloneWithChoices(*module_, alternatives_,
                            std::vector<int64_t>(alternatives_.size(), 0));
  }
  return CloneWithChoices(*round_start_.module, round_start_.alternatives,
                          std::vector<int64_t>(round_start_.alternatives.size(), 0));
}

std::unique_ptr<HloRewriteEnv> HloRewriteEnv::Fork() const {
  std::unique_ptr<HloRewriteEnv> copy(new HloRewriteEnv(spec_, benchmarks_, 0));
  copy->rng_ = rng_;
  if (module_) {
    copy->module_ = module_->Clone();
    copy->alternatives_ = FindAlternatives(*copy->module_);
  }
  copy->dry_ = dry_;
  copy->round_start_ = round_start_;
  copy->info_ = info_;
  copy->record_ = record_;
  copy->choice_counts_ = choice_counts_;
  copy->graph_size_ = graph_size_;
  return copy;
}

absl::Status HloRewriteEnv::TakeStateOf(HloRewriteEnv&& fork) {
  if (fork.benchmarks_ != benchmarks_ || fork.spec_.id != spec_.id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "can only take the state of a fork of this env (", spec_.id, "), not of an env of ",
        fork.spec_.id, " or of another dataset"));
  }
  // The fork must have come from this episode: it starts on the same
  // benchmark and its record begins with this env's steps.
  const size_t steps = record_.choices.size();
  if (!in_episode() || !fork.in_episode() || fork.info_.benchmark != info_.benchmark ||
      fork.record_.choices.size() < steps ||
      !std::equal(record_.choices.begin(), record_.choices.end(), fork.record_.choices.begin())) {
    return absl::InvalidArgumentError(
        "can only take the state of a fork of this env's episode that is as far on as it");
  }
  rng_ = fork.rng_;
  module_ = std::move(fork.module_);
  dry_ = fork.dry_;
  info_ = std::move(fork.info_);
  record_ = std::move(fork.record_);
  choice_counts_ = std::move(fork.choice_counts_);
  alternatives_ = std::move(fork.alternatives_);
  entry_order_ = std::move(fork.entry_order_);
  graph_size_ = fork.graph_size_;
  round_start_ = std::move(fork.round_start_);
  return absl::OkStatus();
}

}  // namespace hlogym

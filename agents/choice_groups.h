// Choice groups: alternatives nodes that offer the same candidates for the
// same original (one node per rewritten use, so a consumer with two users has
// two). Agents decide per group, since choosing a fusion for only some of a
// value's uses keeps the original alive as well and rarely pays.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/cost_after_choices.h"
#include "envs/hlo_rewrite_env.h"

namespace hlogym {

struct ChoiceGroup {
  std::vector<int64_t> members;  // indices in FindAlternatives order
  int64_t num_choices = 0;       // operands of each member (0 keeps the original)
  Instruction* original = nullptr;
  std::vector<Instruction*> candidates;  // operands 1..num_choices-1
};

// The groups of `alternatives` (a module's, in FindAlternatives order), in
// the order of their first member.
std::vector<ChoiceGroup> GroupAlternatives(absl::Span<const AlternativeNode> alternatives);

// Per-alternative choices that give every member of group g the choice
// group_choices[g].
std::vector<int64_t> ExpandGroupChoices(const std::vector<ChoiceGroup>& groups,
                                        absl::Span<const int64_t> group_choices,
                                        int64_t num_alternatives);

// The runtime `env` would reach with `choices` (the module copied, the
// choices applied, the post-passes run, the env's runtime source asked),
// without stepping the env.
absl::StatusOr<double> LookaheadRuntime(const HloRewriteEnv& env,
                                        absl::Span<const int64_t> choices);

// LookaheadRuntime for many choices on one state of `env`. Where the env's
// runtimes are the cost model's and its post-passes only clean up (CSE,
// DCE), the estimates come from a view of the module (CostAfterChoices):
// the same numbers for a walk over the graph instead of a copy per call.
// Thread-safe; `env` must not step while this lives.
class Lookahead {
 public:
  explicit Lookahead(const HloRewriteEnv& env);
  absl::StatusOr<double> Runtime(absl::Span<const int64_t> choices) const;
  // Whether the numbers come from the view (false: a copy per call).
  bool viewed() const { return view_.has_value(); }
  // The calls so far that the view could not serve and a copy did.
  int64_t copies() const { return copies_.load(std::memory_order_relaxed); }

 private:
  const HloRewriteEnv* env_;
  std::optional<CostAfterChoices> view_;
  mutable std::atomic<int64_t> copies_{0};
};

// Whether a dry pass spec is producer-consumer fusion ("fusion", "fusion(...)").
bool IsProducerConsumerFusion(const std::string& dry_pass);

// For a producer-consumer fusion candidate: the producer it took into the
// group's original consumer (the one operand the candidate no longer reads;
// operands seen through alternatives nodes). Null when that is not exactly
// one operand.
const Instruction* FusedProducer(const Instruction& consumer, const Instruction& candidate);

// An env with no episode running, or one that has ended, cannot be acted on.
absl::Status CheckActable(const HloRewriteEnv& env);

}  // namespace hlogym

// Which instructions the fusion passes may merge. Two modes:
//  - general: every merge whose result the backend can emit
//    (fusion_emittable.h), as HloEnv's GeneralFusion: the agent decides;
//  - xla: XLA:GPU's legality and heuristics on top (hlo-text-and-xla-passes.md
//    §3.3-3.7): no duplication of expensive producers, XLA's "globally
//    unfusible" rule, reductions only into convert/bitcast epilogues, no
//    transposing producer into a reduction, no expensive producer into a
//    consumer that reuses its elements, the 96 operands+outputs budget, a
//    FusionMerger-style byte model for duplicating fusions.
// Every check here is cheap and local (on fusion_analysis.h's summaries);
// the fusion builder makes the final emittability check on the merged
// computation.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/ir/module.h"
#include "core/passes/fusion_analysis.h"

namespace hlogym {

enum class FusionMode { kXla, kGeneral };

struct FusionOptions {
  FusionMode mode = FusionMode::kXla;
  // Whether a producer with other users may be copied into a consumer.
  bool may_duplicate = true;
  bool xla() const { return mode == FusionMode::kXla; }
};

// XLA's MaxOperandsAndOutputsPerFusion(): the operand budget in xla mode.
inline constexpr int64_t kMaxFusionOperands = 96;
// XLA's limits on one reduction kernel: unnested reduction outputs, and the
// static shared memory of a block.
inline constexpr int64_t kMaxReductionOutputs = 8;
inline constexpr int64_t kMaxSharedMemoryBytes = 48 * 1024;

// Why a merge is or is not allowed. `reason` names the rule that refused
// (a static string, so tests can compare it).
struct FusionDecision {
  bool ok = true;
  std::string_view reason;
  static FusionDecision Allow() { return {true, ""}; }
  static FusionDecision Forbid(std::string_view why) { return {false, why}; }
  explicit operator bool() const { return ok; }
};

// A consumer and the producers planned into it so far: what becomes one
// fusion. Apply mode plans a consumer's whole fusion, producer after
// producer, and builds it once; a lone consumer is a group of one.
class FusionGroup {
 public:
  FusionGroup(Instruction* consumer, FusionAnalysis& analysis);
  // Plans `producer` (an operand of the group, checked by CanFuseIntoGroup).
  void Add(Instruction* producer, FusionAnalysis& analysis);

  Instruction* consumer() const { return members_.front(); }
  // The consumer first, then producers in the order they were added.
  const std::vector<Instruction*>& members() const { return members_; }
  bool Contains(const Instruction* inst) const { return member_set_.contains(inst); }
  // The distinct instructions outside the group that members read.
  const std::vector<Instruction*>& operands() const { return operands_; }
  // The merged analysis: what the fusion would be.
  const FusibleInfo& info() const { return info_; }
  int64_t outputs() const;
  // Members found to be computed inside the fusion only (no copy stays
  // outside for readers outside the group). A member stays so as the group
  // grows: adding a producer only moves readers from outside in. Kept so
  // that asking about each new producer does not walk the group again.
  bool KnownInsideOnly(const Instruction* member) const {
    return inside_only_.contains(member);
  }
  void NoteInsideOnly(const Instruction* member) const { inside_only_.insert(member); }

 private:
  std::vector<Instruction*> members_;
  absl::flat_hash_set<const Instruction*> member_set_;
  mutable absl::flat_hash_set<const Instruction*> inside_only_;
  std::vector<Instruction*> operands_;
  FusibleInfo info_;
};

// Producer-consumer fusion: `producer` (an operand of the group) computed
// inside the fusion the group becomes; duplicated when it has users outside
// the group.
FusionDecision CanFuseIntoGroup(const Instruction& producer, const FusionGroup& group,
                                const FusionOptions& options, FusionAnalysis& analysis);

// CanFuseIntoGroup for a lone consumer.
FusionDecision CanFuseProducerConsumer(const Instruction& producer, Instruction& consumer,
                                       const FusionOptions& options, FusionAnalysis& analysis);

// A lone consumer as the checks see it: its analysis and distinct operands.
// Made once and asked about each operand in turn, where a dry pass offers
// every operand of a consumer (making it per pair was most of the checks'
// own cost). Valid while the analysis lives and the consumer's operands
// stay as they are.
class LoneConsumer {
 public:
  LoneConsumer(Instruction* consumer, FusionAnalysis& analysis);
  Instruction* consumer() const { return consumer_; }
  const FusibleInfo& info() const { return info_; }
  // The distinct operands, in operand order.
  absl::Span<Instruction* const> operands() const { return operands_; }

 private:
  Instruction* consumer_;
  const FusibleInfo& info_;
  absl::InlinedVector<Instruction*, 8> operands_;
};

// CanFuseProducerConsumer with the consumer's view made beforehand.
FusionDecision CanFuseProducerConsumer(const Instruction& producer, const LoneConsumer& consumer,
                                       const FusionOptions& options, FusionAnalysis& analysis);

// Sibling multi-output fusion of `a` and `b` (which share an operand) into
// one fusion with both results. The caller checks that neither depends on
// the other.
FusionDecision CanFuseSiblings(const Instruction& a, const Instruction& b,
                               const FusionOptions& options, FusionAnalysis& analysis);

// Producer-consumer multi-output fusion: `producer` fused into `consumer` and
// also returned, so its other users read it from the fusion. The caller
// checks that no other path leads from producer to consumer.
FusionDecision CanFuseProducerConsumerMultiOutput(const Instruction& producer,
                                                  Instruction& consumer,
                                                  const FusionOptions& options,
                                                  FusionAnalysis& analysis);

// Whether a shared operand is worth a sibling fusion: not an effective
// scalar, a constant, or a broadcast of an effective scalar (reading those
// costs nothing to share).
bool IsProfitableSharedOperand(const Instruction& operand);

// A member of a horizontal fusion: a single-output kLoop fusion or an
// elementwise op with operands (xla mode also bounds its size, as XLA's
// IsProfitableFusionCandidate).
bool IsHorizontalCandidate(const Instruction& instruction, const FusionOptions& options,
                           FusionAnalysis& analysis);

}  // namespace hlogym

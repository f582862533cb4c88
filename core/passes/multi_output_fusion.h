// Multi-output fusion ("multi-output-fusion"), as XLA:GPU's MultiOutputFusion:
//  - sibling: two fusible users of one operand, iterating over the same
//    shape and independent of each other, become one fusion with a tuple
//    root; the shared operand is read once. Each sibling's users then read a
//    get-tuple-element of it (in dry mode: one alternatives node per use, and
//    keeping one sibling while taking the other's element stays correct);
//  - producer-consumer: a producer with other users is fused into a consumer
//    and also returned, so its other users read it from the fusion.
// Option mode=xla (default; XLA's conditions, including at most 8 reductions
// and 48 KiB of shared memory per kernel) or mode=general (every emittable
// merge). Apply mode visits instructions uses before defs, as XLA does: for
// each, first merges its users pairwise (as siblings, repeatedly), then
// fuses one of its producers into it with the producer exported; run it to a
// fixed point to grow fusions beyond pairs. Dry mode offers pairs against
// the unchanged graph, at most kMaxSiblingOffers sibling candidates per
// instruction. Only the outputs something reads are carried into a merge.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/passes/fusion_legality.h"
#include "core/rewrite/pass.h"

namespace hlogym {

// Sibling candidates offered per instruction in dry mode: a wide fan-out
// (one input read by 50 kernels) would otherwise offer every pair.
inline constexpr int64_t kMaxSiblingOffers = 8;

class MultiOutputFusionPass : public Pass {
 public:
  explicit MultiOutputFusionPass(FusionMode mode = FusionMode::kXla) { options_.mode = mode; }
  std::string_view name() const override { return "multi-output-fusion"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;

  // Apply mode: called after each merge with the instructions merged (two
  // siblings, or a producer and its consumer; either may be a fusion the
  // run made before) and the fusion that took them in. They are freed when
  // the pass ends: keep their ids, not the pointers. What one run merges
  // into what cannot always be read off the result: a member whose readers
  // all joined another fusion leaves no trace outside of where it went.
  using MergeObserver =
      std::function<void(const std::vector<const Instruction*>& members, const Instruction& fusion)>;
  void set_merge_observer(MergeObserver observer) { observer_ = std::move(observer); }

 private:
  FusionOptions options_;
  MergeObserver observer_;
};

}  // namespace hlogym

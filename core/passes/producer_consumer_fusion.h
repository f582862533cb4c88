// Producer-consumer fusion ("fusion"): a producer computed inside the fusion
// that replaces its consumer (merging fused computations when either is a
// fusion; the producer is duplicated when it keeps other users).
//
// Options: mode=xla (default: XLA:GPU's legality and heuristics) or
// mode=general (every emittable pair, as HloEnv's GeneralFusion);
// may_duplicate=true (default) or false (fuse only into a sole user).
//
// Apply mode is XLA's greedy instruction fusion: consumers in reverse
// post-order (root first), each absorbing its fusible operands, the latest in
// post-order first, until none is left; run it to a fixed point. Dry mode
// offers, for every consumer, one candidate per fusible operand: the
// consumer with that producer fused in.
#pragma once

#include <functional>

#include "core/passes/fusion_legality.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class ProducerConsumerFusionPass : public Pass {
 public:
  explicit ProducerConsumerFusionPass(FusionOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;

 private:
  // Apply mode's fallback: fuses producers into `consumer` one at a time,
  // building each step (latest operand in `position` order first).
  absl::StatusOr<bool> FuseStepByStep(Rewriter& rewriter, Instruction* consumer,
                                      FusionAnalysis& analysis,
                                      const std::function<int64_t(const Instruction*)>& position);

  FusionOptions options_;
};

}  // namespace hlogym

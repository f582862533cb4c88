// Producer-consumer fusion ("fusion"): fuses a producer into a consumer,
// making or growing `fusion` instructions. Options: mode=xla (XLA's GPU
// heuristics, the default) or mode=general (every emittable pair, as HloEnv's
// GeneralFusion).
//
// Apply mode works like XLA's instruction fusion: consumers in reverse
// post-order, each absorbing its fusible operands one by one (run it to a
// fixed point). Dry mode offers, for every consumer, one candidate per
// fusible operand: the consumer with that producer fused in.
#pragma once

#include "core/passes/fusion_legality.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class FusionPass : public Pass {
 public:
  explicit FusionPass(FusionMode mode = FusionMode::kXla) : mode_(mode) {}
  std::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;

 private:
  FusionMode mode_;
};

}  // namespace hlogym

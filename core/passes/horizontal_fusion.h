// Horizontal fusion ("horizontal-fusion"), as XLA:GPU's HorizontalLoopFusion:
// independent small kernels (single-output loop fusions, elementwise ops)
// that are operands of one consumer (typically the ROOT tuple, as in an
// optimizer update) become one kLoop fusion with a tuple root, saving their
// launches; each member's users then read a get-tuple-element of it.
//
// Members of one horizontal fusion have outputs of the same dimensions (one
// loop); XLA's other form, concatenating differently shaped outputs into a
// kInput fusion, is not made. Option mode=xla (default: XLA's size limits
// and 96-operand budget) or mode=general. Dry mode offers, per consumer and
// shape, the largest group it can form.
#pragma once

#include "core/passes/fusion_legality.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class HorizontalFusionPass : public Pass {
 public:
  explicit HorizontalFusionPass(FusionMode mode = FusionMode::kXla) { options_.mode = mode; }
  std::string_view name() const override { return "horizontal-fusion"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;

 private:
  FusionOptions options_;
};

}  // namespace hlogym

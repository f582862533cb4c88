// TopK as k row reductions ("topk-to-reductions"), a backend's lowering for
// small k: reduction j is a variadic (value, index) reduce over the last
// dimension that picks the largest (smallest) element among those the
// earlier j reductions did not pick, floats in total order (NaN above
// +inf) and ties to the lower index, as topk orders them; the picks are
// then concatenated. Each reduction is one fusion that recomputes which
// elements are taken from the earlier picks, so the operand is read k
// times and nothing else is written. On a GPU that is k row-reduction
// kernels where topk ran on the host.
//
// TopKs with k above kMaxK (or above the row length) or of types other than
// integers and floats are left, as are those CommonLoweringRefusal names
// (core/passes/lowering_walk.h); TopKRefusal says why. Apply mode only.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/instruction.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class TopKToReductionsPass : public Pass {
 public:
  // The most reductions one topk becomes (each reads the whole operand).
  static constexpr int64_t kMaxK = 32;

  std::string_view name() const override { return "topk-to-reductions"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  bool idempotent() const override { return true; }
};

// Why the pass leaves `topk` as it is; "" when it lowers it.
std::string TopKRefusal(const Instruction& topk);

}  // namespace hlogym

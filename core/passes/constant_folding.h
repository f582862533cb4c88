// Constant folding ("constant-folding"): an instruction whose operands are
// all constants is evaluated by the reference interpreter and replaced by a
// constant. An elementwise op whose operands are all scalar constants or
// broadcasts of them becomes a broadcast of the folded scalar, so that no
// large constant appears. Like XLA's pass it leaves alone parameters,
// constants, broadcasts and iotas (folding them only grows memory), tuples,
// control flow, calls, fusions, custom-calls, rng, side effects and
// collectives, and results or operands over kMaxFoldedElements elements.
// XLA's limit is 45M elements; ours is lower so that a pass stays fast on
// the reference interpreter. Computations nested in fusions are skipped.
//
// Dry mode evaluates chains too (an instruction over instructions it would
// fold), so it offers in one run what apply mode folds in one run.
#pragma once

#include <cstdint>

#include "core/rewrite/pass.h"

namespace hlogym {

inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

class ConstantFoldingPass : public Pass {
 public:
  std::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

// Tuple simplification ("tuple-simplifier"): get-tuple-element(tuple(a, b,
// ...), i) becomes the i-th operand, and tuple(gte(x, 0), ..., gte(x, n-1))
// of a tuple x of that shape becomes x, in every computation (entry root
// included: the result is the same value). Instructions with control
// dependencies are left alone.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class TupleSimplifierPass : public Pass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

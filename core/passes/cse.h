// Common subexpression elimination ("cse"): a later instruction identical to
// an earlier one (opcode, shape, operands (either order for commutative ops),
// attributes, called computations) is replaced by the earlier one. Side
// effects, parameters and alternatives are never merged. In dry mode each
// duplicate offers its representative.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class CsePass : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

// Call inlining ("call-inliner"): replaces each `call` by a copy of the called
// computation's body in the caller; computations left uncalled go away. Calls
// inside called computations are inlined first (computations are visited
// callees first), so one apply-mode run flattens nested calls. In dry mode
// the inlined copy is offered as the call's replacement; calls whose body has
// side effects are not offered there, since the unchosen copy of a side
// effect could not be pruned again.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class CallInlinerPass : public Pass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

// Call inlining ("call-inliner"): replaces each `call` by a copy of the
// called computation's body in the caller. Computations left uncalled go
// away. In dry mode the inlined copy is offered as the call's replacement.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class CallInlinerPass : public Pass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

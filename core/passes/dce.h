// Dead code elimination: removes instructions nothing uses (except side
// effects), parameters of fused computations their fusion no longer reads,
// and computations nothing calls. It offers no alternatives in dry mode:
// deleting an unused instruction changes no use, so there is nothing to choose.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class DcePass : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  // Pruning repeats until nothing more is dead.
  bool idempotent() const override { return true; }
};

}  // namespace hlogym

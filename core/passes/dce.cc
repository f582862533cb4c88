#include "core/passes/dce.h"

namespace hlogym {

absl::StatusOr<bool> DcePass::Run(Module&, Rewriter& rewriter) {
  return rewriter.PruneDeadCode() > 0;
}

}  // namespace hlogym

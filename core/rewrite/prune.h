// Pruning: removing what a rewrite or a decision left unused. Shared by the
// rewriter, decisions and the DCE pass.
#pragma once

#include <cstdint>

#include "core/ir/module.h"

namespace hlogym {

// Whether an instruction may be deleted once nothing uses it: not a
// parameter, not the root, and free of side effects.
bool IsRemovableWhenDead(const Instruction& instruction);

// Removes dead instructions from every computation, the parameters of fused
// computations that their fusion no longer reads (dropping the matching
// fusion operands), and computations nothing reachable from the entry calls.
// Returns the number of instructions removed.
int64_t Prune(Module& module);

}  // namespace hlogym

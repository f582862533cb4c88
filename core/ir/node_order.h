// The canonical order of a module's instructions: computations in module
// order (callees first), each in post-order. Observations number nodes in this
// order, and decisions name alternatives by these indices, so a cloned or
// re-parsed module replays identically.
#pragma once

#include <vector>

#include "core/ir/module.h"

namespace hlogym {

std::vector<Instruction*> NodeOrder(const Module& module);

}  // namespace hlogym

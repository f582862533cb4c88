// Dead outputs of multi-output fusions: XLA's DCE step that shrinks a
// tuple-rooted fusion to the outputs something reads. Decisions on
// multi-output and horizontal candidates are per use, so an agent may take
// one element of a merged fusion and keep the other original: the unread
// outputs would be computed for nothing and carried into later merges.
// Meant to run with pruning after decisions (core/rewrite/prune.cc), and in
// DCE; it needs only the IR.
#pragma once

#include <cstdint>

#include "core/ir/module.h"

namespace hlogym {

// For every fusion of a non-fusion computation whose fused root is a tuple
// and whose users are all get-tuple-elements: drops the unread outputs
// (renumbering the users; a single output left becomes the fusion's value),
// removes what only they computed, and re-derives the fusion kind (a fusion
// that lost its reductions becomes kLoop). Returns the outputs removed.
int64_t RemoveDeadFusionOutputs(Module& module);

}  // namespace hlogym

// Building fusion instructions: the one place that creates and merges fused
// computations, used by every fusion pass.
#pragma once

#include "absl/status/statusor.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

// Makes a new fusion computing `consumer` with `producer` (one of its
// operands) inside, merging fused computations when either is a fusion.
// `producer` itself is left in place for its other users. The new fusion is
// added through the rewriter but replaces nothing: the caller states the
// rewrite. Kind: kInput when it contains a reduce, else kLoop.
absl::StatusOr<Instruction*> FuseProducerIntoConsumer(Rewriter& rewriter,
                                                      Instruction* producer,
                                                      Instruction* consumer);

}  // namespace hlogym

// FusionChain: the instructions of one fusion to be, as a lowering pass
// (conv-to-gemm, select-and-scatter-to-scatter, topk-to-reductions) builds
// them: added to a computation through the rewriter as they are made, then
// replaced by one fusion computing the last of them.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

class FusionChain {
 public:
  FusionChain(Rewriter& rewriter, Computation* computation)
      : rewriter_(rewriter), computation_(computation) {}

  // A member of the chain (it must read only earlier members and values from
  // outside the chain).
  Instruction* Add(std::unique_ptr<Instruction> instruction);
  Instruction* Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands);
  Instruction* Constant(Literal value);
  // Result dimension i is operand dimension perm[i]; `x` itself for the
  // identity.
  Instruction* Transpose(Instruction* x, const std::vector<int64_t>& perm);
  // `x` itself when it has these dimensions already.
  Instruction* Reshape(Instruction* x, const std::vector<int64_t>& dims);
  Instruction* Slice(Instruction* x, SliceAttrs attrs);
  // `x`'s dimension i becomes dimension dimensions[i] of `dims`.
  Instruction* Broadcast(Instruction* x, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& dimensions);

  // Replaces `result` (a member, usually the last) by one fusion of the
  // chain: its value, or each element of a tuple-shaped result (a variadic
  // reduce's). A chain of at most a reshape needs no kernel and is left as
  // it is, as is one the emitter cannot take (CheckEmittableFusion), which
  // then runs unfused. Returns what now stands for `result`.
  absl::StatusOr<Instruction*> Fuse(Instruction* result);

 private:
  Rewriter& rewriter_;
  Computation* computation_;
  std::vector<Instruction*> members_;
};

}  // namespace hlogym

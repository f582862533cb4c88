#include "core/passes/tuple_simplifier.h"

#include "core/base/status_macros.h"

namespace hlogym {
namespace {

// The tuple x when `tuple` is exactly (gte(x, 0), ..., gte(x, n-1)).
Instruction* RebuiltTuple(const Instruction& tuple) {
  Instruction* source = nullptr;
  for (int64_t i = 0; i < tuple.operand_count(); ++i) {
    const Instruction* gte = tuple.operand(i);
    if (gte->opcode() != Opcode::kGetTupleElement || gte->tuple_index() != i) return nullptr;
    if (source == nullptr) source = gte->operand(0);
    if (gte->operand(0) != source) return nullptr;
  }
  if (source == nullptr || !source->shape().Compatible(tuple.shape())) return nullptr;
  return source;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifierPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (Computation* computation : computations) {
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst)) continue;
      Instruction* replacement = nullptr;
      if (inst->opcode() == Opcode::kGetTupleElement &&
          inst->operand(0)->opcode() == Opcode::kTuple) {
        replacement = inst->operand(0)->operand(inst->tuple_index());
      } else if (inst->opcode() == Opcode::kTuple) {
        replacement = RebuiltTuple(*inst);
      }
      if (replacement == nullptr) continue;
      RETURN_IF_ERROR(rewriter.Replace(inst, replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

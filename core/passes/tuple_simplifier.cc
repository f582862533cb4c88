#include "core/passes/tuple_simplifier.h"

#include "core/base/status_macros.h"

namespace hlogym {
namespace {

// The tuple x when `tuple` is exactly (gte(x, 0), ..., gte(x, n-1)) and x has
// no further elements.
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

// The element a get-tuple-element reads from a `tuple` instruction.
Instruction* ForwardedElement(const Instruction& gte) {
  const Instruction* tuple = gte.operand(0);
  if (tuple->opcode() != Opcode::kTuple || gte.tuple_index() < 0 ||
      gte.tuple_index() >= tuple->operand_count()) {
    return nullptr;
  }
  Instruction* element = tuple->operand(gte.tuple_index());
  return element->shape().Compatible(gte.shape()) ? element : nullptr;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifierPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (Computation* computation : computations) {
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst) || !inst->control_predecessors().empty() ||
          !inst->control_successors().empty()) {
        continue;
      }
      Instruction* replacement = nullptr;
      if (inst->opcode() == Opcode::kGetTupleElement) {
        replacement = ForwardedElement(*inst);
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

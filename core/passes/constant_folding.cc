#include "core/passes/constant_folding.h"

#include "core/base/status_macros.h"
#include "core/eval/interpreter.h"

namespace hlogym {
namespace {

bool Foldable(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kBroadcast:
    case Opcode::kIota: case Opcode::kTuple: case Opcode::kWhile: case Opcode::kConditional:
    case Opcode::kCall: case Opcode::kFusion: case Opcode::kCustomCall: case Opcode::kRng:
    case Opcode::kRngBitGenerator: case Opcode::kAlternatives: case Opcode::kAfterAll:
      return false;
    default:
      break;
  }
  if (HasSideEffect(inst.opcode()) || !inst.shape().IsArray() || inst.operand_count() == 0) {
    return false;
  }
  if (inst.shape().element_count() > kMaxFoldedElements) return false;
  for (const Instruction* operand : inst.operands()) {
    if (operand->opcode() != Opcode::kConstant || operand->literal().is_elided()) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> ConstantFoldingPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation()) computations.push_back(c.get());
  }
  for (Computation* computation : computations) {
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst) || !Foldable(*inst)) continue;
      // Evaluate the instruction alone, over copies of its constant operands.
      Computation scratch("constant_folding");
      std::vector<Instruction*> operands;
      for (const Instruction* operand : inst->operands()) {
        operands.push_back(scratch.AddInstruction(Instruction::CreateConstant(operand->literal())));
      }
      scratch.set_root(scratch.AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands)));
      absl::StatusOr<Literal> value = EvaluateComputation(scratch, {});
      if (!value.ok()) continue;  // unsupported: leave it unfolded
      Instruction* constant = rewriter.Add(computation, Instruction::CreateConstant(*std::move(value)));
      constant->mutable_shape() = inst->shape();
      RETURN_IF_ERROR(rewriter.Replace(inst, constant));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

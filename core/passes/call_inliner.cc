#include "core/passes/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<bool> CallInlinerPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (Computation* caller : computations) {
    for (Instruction* call : caller->MakePostOrder()) {
      if (call->opcode() != Opcode::kCall || rewriter.IsRemoved(call) ||
          call->called_computations().empty()) {
        continue;
      }
      const Computation* callee = call->to_apply();
      absl::flat_hash_map<const Instruction*, Instruction*> copies;
      for (int64_t i = 0; i < callee->parameter_count(); ++i) {
        copies[callee->parameter(i)] = call->operand(i);
      }
      for (Instruction* inst : callee->MakePostOrder()) {
        if (inst->opcode() == Opcode::kParameter) continue;
        std::vector<Instruction*> operands;
        for (Instruction* operand : inst->operands()) operands.push_back(copies.at(operand));
        auto copy = inst->CloneWithNewOperands(inst->shape(), operands);
        copy->set_name(module.UniqueInstructionName(inst->name()));
        copies[inst] = rewriter.Add(caller, std::move(copy));
      }
      RETURN_IF_ERROR(rewriter.Replace(call, copies.at(callee->root())));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

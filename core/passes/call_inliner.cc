#include "core/passes/call_inliner.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rewrite/prune.h"

namespace hlogym {
namespace {

// Whether a copy of `callee`'s body could be deleted again if unused.
bool BodyIsPrunable(const Computation& callee) {
  for (const auto& inst : callee.instructions()) {
    if (inst->opcode() == Opcode::kParameter || inst.get() == callee.root()) continue;
    if (!IsRemovableWhenDead(*inst)) return false;
  }
  return callee.root() == nullptr || callee.root()->opcode() == Opcode::kParameter ||
         !HasSideEffect(callee.root()->opcode());
}

// What a copy of `callee` needs: what its root reaches, and side effects.
// Instructions a rewrite of this pass already unlinked, and unused dry-mode
// candidates, are left out.
absl::flat_hash_set<const Instruction*> LiveInstructions(const Computation& callee,
                                                         const Rewriter& rewriter) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack = {callee.root()};
  for (const auto& inst : callee.instructions()) {
    if (!rewriter.IsRemoved(inst.get()) && !IsRemovableWhenDead(*inst)) stack.push_back(inst.get());
  }
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (!live.insert(inst).second) continue;
    for (const Instruction* operand : inst->operands()) stack.push_back(operand);
    for (const Instruction* pred : inst->control_predecessors()) stack.push_back(pred);
  }
  return live;
}

// Copies `callee`'s body into `caller` over the call's operands; returns the
// copy of the root.
absl::StatusOr<Instruction*> InlineBody(const Instruction& call, Computation& caller,
                                        Module& module, Rewriter& rewriter) {
  const Computation& callee = *call.to_apply();
  if (callee.parameter_count() != call.operand_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "call `", call.name(), "` passes ", call.operand_count(), " operands to `",
        callee.name(), "`, which has ", callee.parameter_count(), " parameters"));
  }
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  for (int64_t i = 0; i < callee.parameter_count(); ++i) {
    copies[callee.parameter(i)] = call.operand(i);
  }
  const absl::flat_hash_set<const Instruction*> live = LiveInstructions(callee, rewriter);
  for (Instruction* inst : callee.MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter || !live.contains(inst)) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : inst->operands()) operands.push_back(copies.at(operand));
    auto copy = inst->CloneWithNewOperands(inst->shape(), operands);
    copy->set_name(module.UniqueInstructionName(inst->name()));
    copies[inst] = rewriter.Add(&caller, std::move(copy));
  }
  // Control edges inside the body keep their order in the copy.
  for (const auto& inst : callee.instructions()) {
    if (!live.contains(inst.get())) continue;
    for (Instruction* successor : inst->control_successors()) {
      if (inst->opcode() == Opcode::kParameter || successor->opcode() == Opcode::kParameter ||
          !live.contains(successor)) {
        continue;
      }
      copies.at(inst.get())->AddControlDependencyTo(copies.at(successor));
    }
  }
  return copies.at(callee.root());
}

}  // namespace

absl::StatusOr<bool> CallInlinerPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation()) computations.push_back(c.get());
  }
  for (Computation* caller : computations) {
    for (Instruction* call : caller->MakePostOrder()) {
      if (call->opcode() != Opcode::kCall || rewriter.IsRemoved(call) ||
          call->called_computations().size() != 1 || call->to_apply()->root() == nullptr ||
          !call->control_predecessors().empty() || !call->control_successors().empty()) {
        continue;
      }
      if (rewriter.dry() && !BodyIsPrunable(*call->to_apply())) continue;
      ASSIGN_OR_RETURN(Instruction * root, InlineBody(*call, *caller, module, rewriter));
      RETURN_IF_ERROR(rewriter.Replace(call, root));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

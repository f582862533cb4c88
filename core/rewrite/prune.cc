#include "core/rewrite/prune.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/base/prefetch.h"

namespace hlogym {

bool IsRemovableWhenDead(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kParameter || instruction.IsRoot()) {
    return false;
  }
  if (HasSideEffect(instruction.opcode())) return false;
  if (instruction.opcode() == Opcode::kCustomCall) {
    const std::string* effect =
        instruction.FindRawAttribute("custom_call_has_side_effect");
    if (effect != nullptr && *effect == "true") return false;
  }
  return true;
}

namespace {

// Removes instructions without users, repeatedly, in one sweep per
// computation: a worklist walks from each dead instruction to its operands.
// Sets `*removed_calls` when a removed instruction called computations.
int64_t RemoveDeadInstructions(Computation& computation, bool* removed_calls) {
  absl::flat_hash_set<const Instruction*> dead;
  std::vector<Instruction*> worklist;
  const auto& stored = computation.instructions();
  for (size_t i = 0; i < stored.size(); ++i) {
    PrefetchAhead(stored, i, kCacheLine);  // a step's copy is cold
    if (stored[i]->user_count() == 0 && IsRemovableWhenDead(*stored[i])) {
      worklist.push_back(stored[i].get());
    }
  }
  while (!worklist.empty()) {
    Instruction* inst = worklist.back();
    worklist.pop_back();
    if (!dead.insert(inst).second) continue;
    *removed_calls |= !inst->called_computations().empty();
    std::vector<Instruction*> operands(inst->operands().begin(),
                                       inst->operands().end());
    inst->DetachOperands();
    inst->DropAllControlDependencies();
    for (Instruction* operand : operands) {
      if (operand->user_count() == 0 && IsRemovableWhenDead(*operand) &&
          !dead.contains(operand)) {
        worklist.push_back(operand);
      }
    }
  }
  if (!dead.empty()) {
    computation.RemoveInstructionsIf(
        [&](const Instruction* inst) { return dead.contains(inst); });
  }
  return static_cast<int64_t>(dead.size());
}

// Drops fused-computation parameters that nothing reads, with the fusion
// operands that fed them. Fused computations shared by several fusions are
// left alone. Only the computations in `only` are looked at (all when null);
// the computations of the fusions that lost operands go into `*callers`.
int64_t RemoveDeadFusionParameters(Module& module,
                                   const absl::flat_hash_set<const Computation*>* only,
                                   absl::flat_hash_set<const Computation*>* callers) {
  int64_t removed = 0;
  for (const auto& computation : module.computations()) {
    Instruction* fusion = computation->fusion_instruction();
    if (fusion == nullptr || fusion->fused_computation() != computation.get()) {
      continue;
    }
    if (only != nullptr && !only->contains(computation.get())) continue;
    for (int64_t i = computation->parameter_count() - 1; i >= 0; --i) {
      Instruction* param = computation->parameter(i);
      if (param->user_count() != 0 || param->IsRoot()) continue;
      if (i >= fusion->operand_count()) continue;
      if (!computation->RemoveParameter(i).ok()) continue;
      // Rebuild the operand list without operand i.
      std::vector<Instruction*> operands(fusion->operands().begin(),
                                         fusion->operands().end());
      operands.erase(operands.begin() + i);
      fusion->DetachOperands();
      for (Instruction* operand : operands) fusion->AppendOperand(operand);
      callers->insert(fusion->parent());
      ++removed;
    }
  }
  return removed;
}

}  // namespace

int64_t Prune(Module& module) {
  int64_t removed = 0;
  // Removing fusion operands can kill their producers, so repeat until
  // stable. The first round looks at everything; a later one only where the
  // round before can have left something: dead instructions only in the
  // computations whose fusions lost operands (a sweep leaves none behind
  // elsewhere, and nothing else changes a computation's uses), unused
  // parameters only where instructions were just removed (the round before
  // removed every other), unreachable computations only after a call went.
  // The same removals as sweeping everything every round, in the same
  // order, without the sweeps that find nothing (a second full round was
  // half of pruning an env step's copy).
  absl::flat_hash_set<const Computation*> scan;  // a later round's computations
  for (bool first = true;; first = false) {
    int64_t round = 0;
    bool removed_calls = false;
    absl::flat_hash_set<const Computation*> swept;  // where instructions were removed
    for (const auto& computation : module.computations()) {
      if (!first && !scan.contains(computation.get())) continue;
      const int64_t n = RemoveDeadInstructions(*computation, &removed_calls);
      if (n > 0) swept.insert(computation.get());
      round += n;
    }
    // Fused computations of fusions just removed go now: their back-pointers
    // would dangle otherwise.
    if (first || removed_calls) module.RemoveUnreachableComputations();
    scan.clear();
    round += RemoveDeadFusionParameters(module, first ? nullptr : &swept, &scan);
    removed += round;
    if (round == 0) break;
  }
  return removed;
}

}  // namespace hlogym

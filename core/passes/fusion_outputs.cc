#include "core/passes/fusion_outputs.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/passes/fusion_emittable.h"

namespace hlogym {
namespace {

// Removes the instructions of `computation` the root does not need
// (parameters stay: the fusion's operands still map to them).
void RemoveUnneeded(Computation& computation) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack = {computation.root()};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (!live.insert(inst).second) continue;
    for (const Instruction* operand : inst->operands()) stack.push_back(operand);
  }
  std::vector<Instruction*> dead;
  for (const auto& inst : computation.instructions()) {
    if (!live.contains(inst.get()) && inst->opcode() != Opcode::kParameter) {
      dead.push_back(inst.get());
    }
  }
  if (dead.empty()) return;
  // Unlink first: dead instructions may use each other in any order.
  for (Instruction* inst : dead) inst->DetachOperands();
  const absl::flat_hash_set<const Instruction*> dead_set(dead.begin(), dead.end());
  computation.RemoveInstructionsIf(
      [&](const Instruction* inst) { return dead_set.contains(inst); });
}

// Shrinks one fusion; returns the outputs removed.
int64_t Shrink(Instruction& fusion) {
  if (fusion.called_computations().empty() || fusion.IsRoot()) return 0;
  Computation& fused = *fusion.fused_computation();
  Instruction* root = fused.root();
  if (fused.fusion_instruction() != &fusion || root == nullptr ||
      root->opcode() != Opcode::kTuple || !fusion.shape().IsTuple()) {
    return 0;
  }
  const int64_t n = root->operand_count();
  std::vector<bool> read(n, false);
  for (const Instruction* user : fusion.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return 0;
    if (user->tuple_index() < 0 || user->tuple_index() >= n) return 0;
    read[user->tuple_index()] = true;
  }
  std::vector<int64_t> new_index(n, -1);
  std::vector<Instruction*> kept;
  for (int64_t k = 0; k < n; ++k) {
    if (!read[k]) continue;
    new_index[k] = static_cast<int64_t>(kept.size());
    kept.push_back(root->operand(k));
  }
  if (kept.empty() || static_cast<int64_t>(kept.size()) == n) return 0;

  const std::vector<Instruction*> users(fusion.users().begin(), fusion.users().end());
  if (kept.size() == 1) {
    // One output left: it is the fusion's value, read directly.
    fused.set_root(kept.front());
    fusion.mutable_shape() = kept.front()->shape();
    for (Instruction* user : users) {
      user->ReplaceAllUsesWith(&fusion);
      user->DetachOperands();
      (void)user->parent()->RemoveInstruction(user);  // no users, not the root
    }
  } else {
    std::vector<Shape> shapes;
    for (const Instruction* e : kept) shapes.push_back(e->shape());
    Shape shape = Shape::Tuple(shapes);
    Instruction* tuple =
        fused.AddInstruction(Instruction::Create(Opcode::kTuple, shape, kept));
    fused.set_root(tuple);
    fusion.mutable_shape() = std::move(shape);
    for (Instruction* user : users) user->set_index(new_index[user->tuple_index()]);
  }
  RemoveUnneeded(fused);
  if (absl::StatusOr<FusionKind> kind = CheckEmittableFusion(fused); kind.ok()) {
    fusion.mutable_attrs<FusionAttrs>().kind = *kind;
  }
  return n - static_cast<int64_t>(kept.size());
}

}  // namespace

int64_t RemoveDeadFusionOutputs(Module& module) {
  int64_t removed = 0;
  for (const auto& computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    std::vector<Instruction*> fusions;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kFusion) fusions.push_back(inst.get());
    }
    for (Instruction* fusion : fusions) removed += Shrink(*fusion);
  }
  return removed;
}

}  // namespace hlogym

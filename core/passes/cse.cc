#include "core/passes/cse.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "core/base/status_macros.h"
#include "core/rewrite/prune.h"

namespace hlogym {
namespace {

bool Mergeable(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kParameter || op == Opcode::kAlternatives || HasSideEffect(op)) return false;
  if (op == Opcode::kRngBitGenerator || op == Opcode::kRng) return false;
  if (op == Opcode::kCustomCall) return IsRemovableWhenDead(inst);
  return true;
}

// Operands in a canonical order (sorted for commutative ops).
std::vector<const Instruction*> CanonicalOperands(const Instruction& inst) {
  std::vector<const Instruction*> operands(inst.operands().begin(), inst.operands().end());
  if (IsCommutative(inst.opcode())) std::sort(operands.begin(), operands.end());
  return operands;
}

bool Identical(const Instruction& a, const Instruction& b) {
  return a.opcode() == b.opcode() && a.shape() == b.shape() &&
         CanonicalOperands(a) == CanonicalOperands(b) && a.dimensions() == b.dimensions() &&
         a.parameter_number() == b.parameter_number() && a.op_attrs() == b.op_attrs() &&
         a.called_computations() == b.called_computations() &&
         a.raw_attributes() == b.raw_attributes() &&
         a.control_predecessors().empty() && b.control_predecessors().empty();
}

// A hash over what Identical compares cheaply (within one process only).
size_t Key(const Instruction& inst) {
  size_t h = absl::HashOf(static_cast<int>(inst.opcode()), inst.shape().ToString());
  for (const Instruction* operand : CanonicalOperands(inst)) h = absl::HashOf(h, operand);
  for (int64_t d : inst.dimensions()) h = absl::HashOf(h, d);
  return h;
}

}  // namespace

absl::StatusOr<bool> CsePass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (Computation* computation : computations) {
    absl::flat_hash_map<size_t, std::vector<Instruction*>> seen;
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst) || !Mergeable(*inst)) continue;
      std::vector<Instruction*>& bucket = seen[Key(*inst)];
      Instruction* representative = nullptr;
      for (Instruction* candidate : bucket) {
        if (!rewriter.IsRemoved(candidate) && Identical(*candidate, *inst)) {
          representative = candidate;
          break;
        }
      }
      if (representative == nullptr) {
        bucket.push_back(inst);
        continue;
      }
      RETURN_IF_ERROR(rewriter.Replace(inst, representative));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

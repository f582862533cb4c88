#include "core/passes/cse.h"

#include <algorithm>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllToAll: case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
    case Opcode::kRaggedAllToAll: case Opcode::kReduceScatter: case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

bool Mergeable(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kParameter || op == Opcode::kAlternatives || HasSideEffect(op) ||
      IsCollective(op)) {
    return false;
  }
  switch (op) {
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
    case Opcode::kOptimizationBarrier: case Opcode::kAfterAll: case Opcode::kAddDependency:
    case Opcode::kCopyStart: case Opcode::kCopyDone: case Opcode::kDomain:
      return false;
    default:
      break;
  }
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  if (op == Opcode::kCustomCall) {
    const std::string* effect = inst.FindRawAttribute("custom_call_has_side_effect");
    if (effect != nullptr && *effect == "true") return false;
  }
  // An elided constant's value is unknown: two of them need not be equal.
  if (op == Opcode::kConstant && inst.literal().is_elided()) return false;
  return true;
}

using Operands = absl::InlinedVector<const Instruction*, 4>;

// Value numbering: the representative each merged instruction stands for.
class ValueNumbers {
 public:
  const Instruction* Of(const Instruction* inst) const {
    auto it = representative_.find(inst);
    return it == representative_.end() ? inst : it->second;
  }
  void Merge(const Instruction* duplicate, const Instruction* representative) {
    representative_[duplicate] = representative;
  }

  // Operands by value number, in a canonical order for commutative ops.
  Operands CanonicalOperands(const Instruction& inst) const {
    Operands operands;
    for (const Instruction* operand : inst.operands()) operands.push_back(Of(operand));
    if (IsCommutative(inst.opcode())) {
      std::sort(operands.begin(), operands.end(), [](const Instruction* a, const Instruction* b) {
        return a->unique_id() < b->unique_id();
      });
    }
    return operands;
  }

 private:
  absl::flat_hash_map<const Instruction*, const Instruction*> representative_;
};

// Raw attributes other than metadata, which says where an op came from and
// not what it computes.
bool SameRawAttributes(const Instruction& a, const Instruction& b) {
  auto next = [](const std::vector<RawAttribute>& list, size_t i) {
    while (i < list.size() && list[i].name == "metadata") ++i;
    return i;
  };
  const auto& x = a.raw_attributes();
  const auto& y = b.raw_attributes();
  size_t i = next(x, 0), j = next(y, 0);
  while (i < x.size() && j < y.size()) {
    if (!(x[i] == y[j])) return false;
    i = next(x, i + 1);
    j = next(y, j + 1);
  }
  return i == x.size() && j == y.size();
}

bool Identical(const Instruction& a, const Operands& a_operands, const Instruction& b,
               const ValueNumbers& numbers) {
  return a.opcode() == b.opcode() && a.shape() == b.shape() &&
         a.dimensions() == b.dimensions() && a.parameter_number() == b.parameter_number() &&
         a_operands == numbers.CanonicalOperands(b) &&
         a.called_computations() == b.called_computations() && a.op_attrs() == b.op_attrs() &&
         SameRawAttributes(a, b);
}

// A hash of what Identical compares cheaply (pointers: within one run only).
size_t Key(const Instruction& inst, const Operands& operands) {
  const Shape& shape = inst.shape();
  size_t h = absl::HashOf(static_cast<int>(inst.opcode()), static_cast<int>(shape.element_type()),
                          shape.dims(), inst.dimensions(), inst.parameter_number(),
                          inst.op_attrs().index());
  for (const Instruction* operand : operands) h = absl::HashOf(h, operand);
  for (const Computation* c : inst.called_computations()) h = absl::HashOf(h, c);
  if (inst.opcode() == Opcode::kConstant) {
    // The first bytes tell most constants apart; equality checks the rest.
    const Literal& literal = inst.literal();
    const size_t n = std::min<size_t>(literal.raw_size(), 256);
    h = absl::HashOf(h, std::string_view(reinterpret_cast<const char*>(literal.raw_data()), n));
  }
  return h;
}

}  // namespace

absl::StatusOr<bool> CsePass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  ValueNumbers numbers;
  for (Computation* computation : computations) {
    absl::flat_hash_map<size_t, absl::InlinedVector<Instruction*, 1>> seen;
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst) || !Mergeable(*inst)) continue;
      const Operands operands = numbers.CanonicalOperands(*inst);
      auto& bucket = seen[Key(*inst, operands)];
      Instruction* representative = nullptr;
      for (Instruction* candidate : bucket) {
        if (!rewriter.IsRemoved(candidate) && Identical(*inst, operands, *candidate, numbers)) {
          representative = candidate;
          break;
        }
      }
      if (representative == nullptr) {
        bucket.push_back(inst);
        continue;
      }
      RETURN_IF_ERROR(rewriter.Replace(inst, representative));
      numbers.Merge(inst, representative);
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

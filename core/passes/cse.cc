#include "core/passes/cse.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "core/base/prefetch.h"
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

// Whether an instruction itself must run once per occurrence.
bool HasOwnEffect(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (HasSideEffect(op) || IsCollective(op)) return true;
  switch (op) {
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
    case Opcode::kOptimizationBarrier: case Opcode::kAfterAll: case Opcode::kAddDependency:
    case Opcode::kCopyStart: case Opcode::kCopyDone: case Opcode::kDomain:
      return true;
    default:
      break;
  }
  if (op == Opcode::kCustomCall) {
    const std::string* effect = inst.FindRawAttribute("custom_call_has_side_effect");
    if (effect != nullptr && *effect == "true") return true;
  }
  return false;
}

// Whether a computation, or one it calls, holds an instruction with its own
// effect; memoized for one pass run.
class EffectScan {
 public:
  bool Has(const Computation* c) {
    if (c == nullptr) return false;
    auto [it, inserted] = known_.try_emplace(c, false);
    if (!inserted) return it->second;  // known, or being scanned (a cycle: no effect found yet)
    bool effect = false;
    for (const auto& inst : c->instructions()) {
      if (HasOwnEffect(*inst) || Calls(*inst)) {
        effect = true;
        break;
      }
    }
    return known_[c] = effect;
  }
  bool Calls(const Instruction& inst) {
    for (const Computation* callee : inst.called_computations()) {
      if (Has(callee)) return true;
    }
    return false;
  }

 private:
  absl::flat_hash_map<const Computation*, bool> known_;
};

bool Mergeable(const Instruction& inst, EffectScan& effects) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kParameter || op == Opcode::kAlternatives || HasOwnEffect(inst)) return false;
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  if (effects.Calls(inst)) return false;
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

bool SameComputation(const Computation* a, const Computation* b);

// Everything but the operands and called computations.
bool SameOwnFields(const Instruction& a, const Instruction& b) {
  return a.opcode() == b.opcode() && a.shape() == b.shape() &&
         a.dimensions() == b.dimensions() && a.parameter_number() == b.parameter_number() &&
         a.op_attrs() == b.op_attrs() && SameRawAttributes(a, b);
}

bool SameCallees(const Instruction& a, const Instruction& b) {
  const auto& x = a.called_computations();
  const auto& y = b.called_computations();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!SameComputation(x[i], y[i])) return false;
  }
  return true;
}

// Whether two computations compute the same thing the same way: the graphs
// their roots reach match node for node (as XLA's CSE compares the fused
// computations of two fusions). Fusion duplicates a consumer's fused
// computation per copy, so two fusions of the same values call equal but
// distinct computations.
bool SameComputation(const Computation* a, const Computation* b) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr || a->root() == nullptr || b->root() == nullptr ||
      a->parameter_count() != b->parameter_count()) {
    return false;
  }
  absl::flat_hash_map<const Instruction*, const Instruction*> matched;
  std::vector<std::pair<const Instruction*, const Instruction*>> pending = {{a->root(), b->root()}};
  matched[a->root()] = b->root();
  while (!pending.empty()) {
    const auto [x, y] = pending.back();
    pending.pop_back();
    if (!SameOwnFields(*x, *y) || x->operand_count() != y->operand_count() ||
        !x->control_predecessors().empty() || !y->control_predecessors().empty() ||
        !SameCallees(*x, *y)) {
      return false;
    }
    for (int64_t i = 0; i < x->operand_count(); ++i) {
      const Instruction* xo = x->operand(i);
      const Instruction* yo = y->operand(i);
      auto [it, inserted] = matched.try_emplace(xo, yo);
      if (!inserted) {
        if (it->second != yo) return false;
        continue;
      }
      pending.push_back({xo, yo});
    }
  }
  // One-to-one: two nodes of `a` must not map onto one of `b`.
  absl::flat_hash_set<const Instruction*> images;
  for (const auto& [x, y] : matched) {
    if (!images.insert(y).second) return false;
  }
  return true;
}

bool Identical(const Instruction& a, const Operands& a_operands, const Instruction& b,
               const ValueNumbers& numbers) {
  return SameOwnFields(a, b) && a_operands == numbers.CanonicalOperands(b) && SameCallees(a, b);
}

// A hash of what Identical compares cheaply (pointers: within one run only).
size_t Key(const Instruction& inst, const Operands& operands) {
  const Shape& shape = inst.shape();
  size_t h = absl::HashOf(static_cast<int>(inst.opcode()), static_cast<int>(shape.element_type()),
                          shape.dims(), inst.dimensions(), inst.parameter_number(),
                          inst.op_attrs().index());
  for (const Instruction* operand : operands) h = absl::HashOf(h, operand);
  // Called computations by what their roots are: equal computations may be
  // distinct objects (SameComputation), and CSE changes them as it goes.
  for (const Computation* c : inst.called_computations()) {
    const Instruction* root = c == nullptr ? nullptr : c->root();
    h = root == nullptr ? absl::HashOf(h, 0)
                        : absl::HashOf(h, static_cast<int>(root->opcode()),
                                       root->shape().dims(), c->parameter_count());
  }
  if (inst.opcode() == Opcode::kConstant) {
    // The first bytes tell most constants apart; equality checks the rest.
    const Literal& literal = inst.literal();
    const size_t n = std::min<size_t>(literal.raw_size(), 256);
    h = absl::HashOf(h, std::string_view(reinterpret_cast<const char*>(literal.raw_data()), n));
  }
  return h;
}

// Whether two instructions of `computation` other than parameters share an
// opcode and shape, told by a 1024-bit filter (a collision only answers
// true). Where none do, no two can be Identical (SameOwnFields compares
// both), so CSE would merge nothing there: an env step's post-pass CSE
// walks hundreds of small fused computations, most of them without a pair.
bool MayHaveDuplicates(const Computation& computation) {
  uint64_t bits[16] = {};
  const auto& stored = computation.instructions();
  for (size_t i = 0; i < stored.size(); ++i) {
    PrefetchAhead(stored, i, sizeof(Instruction));  // the shape is past the links
    const Instruction* inst = stored[i].get();
    if (inst->opcode() == Opcode::kParameter) continue;
    const Shape& shape = inst->shape();
    uint64_t h = (static_cast<uint64_t>(inst->opcode()) << 8) ^
                 static_cast<uint64_t>(shape.element_type()) ^ (shape.dims().size() << 20);
    for (int64_t d : shape.dims()) h = (h ^ static_cast<uint64_t>(d)) * 0x9e3779b97f4a7c15ULL;
    h *= 0x9e3779b97f4a7c15ULL;
    const uint64_t slot = h >> 54;  // 10 bits
    uint64_t& word = bits[slot / 64];
    const uint64_t bit = uint64_t{1} << (slot % 64);
    if (word & bit) return true;
    word |= bit;
  }
  return false;
}

// A table of instructions by Key, reused across computations: a fresh one
// per computation regrew through several mallocs in each of the hundreds of
// fused computations a post-pass CSE of an env step walks.
using SeenTable = absl::flat_hash_map<size_t, absl::InlinedVector<Instruction*, 1>>;

// Walks `computation` in post-order and calls on_duplicate(inst,
// representative) for each instruction identical to an earlier one (by value
// number). on_duplicate returns whether to go on, or an error. `removed`
// says which instructions an earlier replacement took out.
template <typename Removed, typename OnDuplicate>
absl::StatusOr<bool> ScanDuplicates(const Computation& computation, ValueNumbers& numbers,
                                    EffectScan& effects, SeenTable& seen,
                                    std::vector<Instruction*>& order, Removed removed,
                                    OnDuplicate on_duplicate) {
  seen.clear();
  computation.MakePostOrder(order);
  for (size_t i = 0; i < order.size(); ++i) {
    PrefetchAhead(order, i, sizeof(Instruction));
    Instruction* inst = order[i];
    if (removed(inst) || !Mergeable(*inst, effects)) continue;
    const Operands operands = numbers.CanonicalOperands(*inst);
    auto& bucket = seen[Key(*inst, operands)];
    Instruction* representative = nullptr;
    for (Instruction* candidate : bucket) {
      if (!removed(candidate) && Identical(*inst, operands, *candidate, numbers)) {
        representative = candidate;
        break;
      }
    }
    if (representative == nullptr) {
      bucket.push_back(inst);
      continue;
    }
    absl::StatusOr<bool> go_on = on_duplicate(inst, representative);
    if (!go_on.ok() || !*go_on) return go_on;
  }
  return true;
}

}  // namespace

bool SameButOperands(const Instruction& a, const Instruction& b) {
  return SameOwnFields(a, b) && a.operand_count() == b.operand_count() && SameCallees(a, b);
}

bool HasDuplicates(const Computation& computation) {
  if (!MayHaveDuplicates(computation)) return false;
  ValueNumbers numbers;
  EffectScan effects;
  SeenTable seen;
  std::vector<Instruction*> order;
  bool found = false;
  (void)ScanDuplicates(
      computation, numbers, effects, seen, order, [](const Instruction*) { return false; },
      [&](Instruction*, Instruction*) -> absl::StatusOr<bool> {
        found = true;
        return false;
      });
  return found;
}

absl::StatusOr<bool> CsePass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  ValueNumbers numbers;
  EffectScan effects;
  SeenTable seen;
  std::vector<Instruction*> order;  // reused: a post-order per computation
  for (Computation* computation : computations) {
    if (!MayHaveDuplicates(*computation)) continue;
    RETURN_IF_ERROR(ScanDuplicates(
                        *computation, numbers, effects, seen, order,
                        [&](const Instruction* inst) { return rewriter.IsRemoved(inst); },
                        [&](Instruction* inst, Instruction* representative) -> absl::StatusOr<bool> {
                          RETURN_IF_ERROR(rewriter.Replace(inst, representative));
                          numbers.Merge(inst, representative);
                          changed = true;
                          return true;
                        })
                        .status());
  }
  return changed;
}

}  // namespace hlogym

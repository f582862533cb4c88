// Reduce rules: reductions that combine nothing.
//
// A reduce whose input has no elements is its init value, broadcast. A reduce
// over no dimensions or only size-1 dimensions combines each element with the
// init value once: it becomes reducer(init, reshape(x)), and just reshape(x)
// when init is the reducer's identity (XLA assumes that always holds; here it
// is checked). Only single-input reduces whose reducer is one commutative
// binary op of its two parameters are rewritten. Reductions of transposes or
// reshapes are not reordered: that would change float rounding.
#include <cmath>

#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

// The opcode of a reducer computing op(p0, p1) or op(p1, p0) for a
// commutative op, or nullopt.
std::optional<Opcode> SimpleReducer(const Instruction* reduce) {
  if (reduce->called_computations().empty()) return std::nullopt;
  const Computation* reducer = reduce->to_apply();
  const Instruction* root = reducer->root();
  if (reducer->parameter_count() != 2 || root == nullptr || !IsCommutative(root->opcode()) ||
      root->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) {
    return std::nullopt;
  }
  return root->opcode();
}

// Whether every element of `init` is the identity of `op` on its type.
bool IsIdentityOf(Opcode op, const Instruction* init) {
  const PrimitiveType t = init->shape().element_type();
  if (IsFloat(t)) {
    std::optional<double> v = ScalarConstantValue(init);
    if (!v) return false;
    switch (op) {
      case Opcode::kAdd: return *v == 0;  // +0 turns -0 into +0, as XLA ignores
      case Opcode::kMultiply: return *v == 1;
      case Opcode::kMaximum: return std::isinf(*v) && *v < 0;
      case Opcode::kMinimum: return std::isinf(*v) && *v > 0;
      default: return false;
    }
  }
  std::optional<int64_t> v = ScalarConstantInt(init);
  if (!v) return false;
  const int w = t == PrimitiveType::kPred ? 1 : BitWidth(t);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  const uint64_t bits = static_cast<uint64_t>(*v) & mask;
  const bool is_signed = IsSignedInteger(t);
  const uint64_t lowest = is_signed ? uint64_t{1} << (w - 1) : 0;
  const uint64_t highest = is_signed ? (uint64_t{1} << (w - 1)) - 1 : mask;
  switch (op) {
    case Opcode::kAdd: case Opcode::kOr: case Opcode::kXor: return bits == 0;
    case Opcode::kMultiply: return bits == 1;
    case Opcode::kAnd: return bits == mask;
    case Opcode::kMaximum: return bits == lowest;
    case Opcode::kMinimum: return bits == highest;
    default: return false;
  }
}

bool IsSingleArrayReduce(const Instruction* i) {
  return i->operand_count() == 2 && i->shape().IsArray() && i->operand(0)->shape().IsArray();
}

// reduce(x) with no elements in x -> broadcast(init).
Instruction* ReduceOfEmpty(Instruction* i, RuleContext& ctx) {
  if (!IsSingleArrayReduce(i) || i->operand(0)->shape().element_count() != 0) return nullptr;
  Instruction* init = i->operand(1);
  if (!init->shape().IsScalar()) return nullptr;
  return ctx.BroadcastScalar(init, i->shape());
}
// reduce over no or only size-1 dimensions -> reducer(init, reshape(x)).
Instruction* ReduceOfDegenerateDims(Instruction* i, RuleContext& ctx) {
  if (!IsSingleArrayReduce(i)) return nullptr;
  Instruction* x = i->operand(0);
  Instruction* init = i->operand(1);
  for (int64_t d : i->dimensions()) {
    if (d < 0 || d >= x->shape().rank() || x->shape().dim(d) != 1) return nullptr;
  }
  std::optional<Opcode> op = SimpleReducer(i);
  if (!op || !init->shape().IsScalar() ||
      init->shape().element_type() != i->shape().element_type()) {
    return nullptr;
  }
  Instruction* values = x;
  if (!x->shape().Compatible(i->shape())) values = ctx.Add(Opcode::kReshape, i->shape(), {x});
  if (IsIdentityOf(*op, init)) return values;
  Instruction* inits = ctx.BroadcastScalar(init, i->shape());
  return ctx.Add(*op, i->shape(), {inits, values});
}

}  // namespace

const std::vector<AlgsimpRule>& ReduceRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"reduce-of-empty", Opcode::kReduce, ReduceOfEmpty},
      {"reduce-of-degenerate-dims", Opcode::kReduce, ReduceOfDegenerateDims},
  };
  return *rules;
}

}  // namespace hlogym

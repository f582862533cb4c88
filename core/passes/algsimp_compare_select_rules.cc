// Compare, select and logic rules (not, and, or, xor).
//
// A comparison of x with itself is only folded for integers and pred: for
// floats x == x is false when x is NaN. For the same reason not(compare) only
// inverts the direction where NaN cannot occur (integers, pred, total order)
// or where inversion is exact anyway (EQ <-> NE).
#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

// Every bit of the element type set (true for pred): the identity of `and`.
bool IsAllOnes(const Instruction* inst) {
  const PrimitiveType t = inst->shape().element_type();
  if (!IsInteger(t) && t != PrimitiveType::kPred) return false;
  std::optional<int64_t> v = ScalarConstantInt(inst);
  if (!v) return false;
  if (t == PrimitiveType::kPred) return *v == 1;
  const int w = BitWidth(t);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  return (static_cast<uint64_t>(*v) & mask) == mask;
}

bool IsZeroBits(const Instruction* inst) {
  std::optional<int64_t> v = ScalarConstantInt(inst);
  return v.has_value() && *v == 0;
}

// `inst` itself when it already has `like`'s shape, else a fresh splat of
// the same value (a constant operand may be a broadcast of another layout).
Instruction* ConstantLike(Instruction* inst, const Instruction* like, bool all_ones,
                          RuleContext& ctx) {
  if (SameShape(inst, like)) return inst;
  return ctx.SplatInt(like->shape(), all_ones ? (IsPredicate(like) ? 1 : -1) : 0);
}

Instruction* NotNot(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kNot ? i->operand(0)->operand(0) : nullptr;
}
// and(x, x) == or(x, x) == x.
Instruction* SameOperands(Instruction* i, RuleContext&) {
  return i->operand(0) == i->operand(1) ? i->operand(0) : nullptr;
}
Instruction* XorSelf(Instruction* i, RuleContext& ctx) {
  return i->operand(0) == i->operand(1) ? ctx.SplatInt(i->shape(), 0) : nullptr;
}
// and(x, ~0) -> x; and(x, 0) -> 0.
Instruction* AndConstant(Instruction* i, RuleContext& ctx) {
  for (int k = 0; k < 2; ++k) {
    if (IsAllOnes(i->operand(k))) return i->operand(1 - k);
    if (IsZeroBits(i->operand(k))) return ConstantLike(i->operand(k), i, false, ctx);
  }
  return nullptr;
}
// or(x, 0) -> x; or(x, ~0) -> ~0.
Instruction* OrConstant(Instruction* i, RuleContext& ctx) {
  for (int k = 0; k < 2; ++k) {
    if (IsZeroBits(i->operand(k))) return i->operand(1 - k);
    if (IsAllOnes(i->operand(k))) return ConstantLike(i->operand(k), i, true, ctx);
  }
  return nullptr;
}
// xor(x, 0) -> x.
Instruction* XorZero(Instruction* i, RuleContext&) {
  if (IsZeroBits(i->operand(1))) return i->operand(0);
  if (IsZeroBits(i->operand(0))) return i->operand(1);
  return nullptr;
}
// compare(x, x) for integers and pred: EQ/GE/LE true, NE/GT/LT false.
Instruction* CompareSelf(Instruction* i, RuleContext& ctx) {
  const Instruction* x = i->operand(0);
  if (x != i->operand(1) || !(IsIntegral(x) || IsPredicate(x)) || !i->has_attrs<CompareAttrs>()) {
    return nullptr;
  }
  const ComparisonDirection d = i->comparison_direction();
  const bool value = d == ComparisonDirection::kEq || d == ComparisonDirection::kGe ||
                     d == ComparisonDirection::kLe;
  return ctx.SplatInt(i->shape(), value);
}

ComparisonDirection Inverse(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return ComparisonDirection::kNe;
    case ComparisonDirection::kNe: return ComparisonDirection::kEq;
    case ComparisonDirection::kGe: return ComparisonDirection::kLt;
    case ComparisonDirection::kGt: return ComparisonDirection::kLe;
    case ComparisonDirection::kLe: return ComparisonDirection::kGt;
    case ComparisonDirection::kLt: return ComparisonDirection::kGe;
  }
  return d;
}

// not(compare(a, b, d)) -> compare(a, b, inverse(d)) where that is exact.
Instruction* NotCompare(Instruction* i, RuleContext& ctx) {
  const Instruction* compare = i->operand(0);
  if (compare->opcode() != Opcode::kCompare || !compare->has_attrs<CompareAttrs>()) return nullptr;
  const CompareAttrs& attrs = compare->attrs<CompareAttrs>();
  const Instruction* a = compare->operand(0);
  const bool no_nan = IsIntegral(a) || IsPredicate(a) || attrs.type == ComparisonType::kTotalOrder;
  const bool equality = attrs.direction == ComparisonDirection::kEq ||
                        attrs.direction == ComparisonDirection::kNe;
  if (!no_nan && !equality) return nullptr;
  auto inverted = compare->CloneWithNewOperands(i->shape(), compare->operands());
  inverted->set_name("");
  inverted->mutable_attrs<CompareAttrs>().direction = Inverse(attrs.direction);
  return ctx.Add(std::move(inverted));
}
Instruction* SelectSame(Instruction* i, RuleContext&) {
  return i->operand(1) == i->operand(2) ? i->operand(1) : nullptr;
}
Instruction* SelectConstant(Instruction* i, RuleContext&) {
  std::optional<int64_t> p = ScalarConstantInt(i->operand(0));
  if (!p) return nullptr;
  return *p != 0 ? i->operand(1) : i->operand(2);
}
// select(not(p), a, b) -> select(p, b, a).
Instruction* SelectNot(Instruction* i, RuleContext& ctx) {
  const Instruction* negated = i->operand(0);
  if (negated->opcode() != Opcode::kNot) return nullptr;
  return ctx.Add(Opcode::kSelect, i->shape(),
                 {negated->operand(0), i->operand(2), i->operand(1)});
}
// select(p, true, false) -> p; select(p, false, true) -> not(p).
Instruction* SelectOfBooleans(Instruction* i, RuleContext& ctx) {
  Instruction* p = i->operand(0);
  if (!IsPredicate(i) || !p->shape().Compatible(i->shape())) return nullptr;
  std::optional<int64_t> a = ScalarConstantInt(i->operand(1));
  std::optional<int64_t> b = ScalarConstantInt(i->operand(2));
  if (!a || !b || *a == *b) return nullptr;
  return *a ? p : ctx.Add(Opcode::kNot, i->shape(), {p});
}

}  // namespace

const std::vector<AlgsimpRule>& CompareSelectRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"not-not", Opcode::kNot, NotNot},
      {"not-compare", Opcode::kNot, NotCompare},
      {"and-self", Opcode::kAnd, SameOperands},
      {"and-constant", Opcode::kAnd, AndConstant},
      {"or-self", Opcode::kOr, SameOperands},
      {"or-constant", Opcode::kOr, OrConstant},
      {"xor-self", Opcode::kXor, XorSelf},
      {"xor-zero", Opcode::kXor, XorZero},
      {"compare-self-int", Opcode::kCompare, CompareSelf},
      {"select-same", Opcode::kSelect, SelectSame},
      {"select-constant", Opcode::kSelect, SelectConstant},
      {"select-not", Opcode::kSelect, SelectNot},
      {"select-of-booleans", Opcode::kSelect, SelectOfBooleans},
  };
  return *rules;
}

}  // namespace hlogym

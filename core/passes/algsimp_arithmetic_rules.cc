// Arithmetic, logic, compare and select rules. Every rule is exact: the
// replacement computes the same bits (for floats, up to the sign of zero,
// which XLA's simplifier ignores as well). x - x and x * 0 are simplified for
// integers only: for floats NaN and infinity make them wrong.
#include <cmath>

#include "core/ir/computation.h"
#include "core/passes/algsimp_rules.h"

namespace hlogym {

std::optional<double> ScalarConstantValue(const Instruction* inst) {
  if (inst->opcode() == Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != Opcode::kConstant || !inst->has_attrs<ConstantAttrs>()) return std::nullopt;
  const Literal& literal = inst->literal();
  if (literal.is_elided() || !literal.shape().IsArray() || IsComplex(literal.shape().element_type())) {
    return std::nullopt;
  }
  if (literal.element_count() == 0) return std::nullopt;
  const double first = literal.GetAsDouble(0);
  for (int64_t i = 1; i < literal.element_count(); ++i) {
    if (literal.GetAsDouble(i) != first) return std::nullopt;
  }
  return first;
}

bool IsConstantValue(const Instruction* inst, double value) {
  std::optional<double> v = ScalarConstantValue(inst);
  return v.has_value() && *v == value;
}

namespace {

bool IsIntegral(const Instruction* inst) { return IsInteger(inst->shape().element_type()); }

// An array of `value` with the shape of `like`: broadcast of a scalar constant.
Instruction* Splat(const Instruction* like, int64_t value, RuleContext& ctx) {
  Literal scalar(Shape::Scalar(like->shape().element_type()));
  scalar.SetFromInt64(0, value);
  Instruction* constant = ctx.Add(Instruction::CreateConstant(std::move(scalar)));
  if (like->shape().rank() == 0) return constant;
  return ctx.Add(Instruction::Create(Opcode::kBroadcast, like->shape(), {constant}));
}

Instruction* AddZero(Instruction* i, RuleContext&) {
  if (IsConstantValue(i->operand(1), 0)) return i->operand(0);
  if (IsConstantValue(i->operand(0), 0)) return i->operand(1);
  return nullptr;
}
Instruction* SubtractZero(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 0) ? i->operand(0) : nullptr;
}
Instruction* SubtractSelf(Instruction* i, RuleContext& ctx) {
  return i->operand(0) == i->operand(1) && IsIntegral(i) ? Splat(i, 0, ctx) : nullptr;
}
Instruction* MultiplyOne(Instruction* i, RuleContext&) {
  if (IsConstantValue(i->operand(1), 1)) return i->operand(0);
  if (IsConstantValue(i->operand(0), 1)) return i->operand(1);
  return nullptr;
}
Instruction* MultiplyZero(Instruction* i, RuleContext& ctx) {
  if (!IsIntegral(i)) return nullptr;
  if (IsConstantValue(i->operand(0), 0) || IsConstantValue(i->operand(1), 0)) return Splat(i, 0, ctx);
  return nullptr;
}
Instruction* DivideOne(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 1) ? i->operand(0) : nullptr;
}
// x / 2^k == x * 2^-k exactly for binary floats (no rounding either way).
Instruction* DivideByPowerOfTwo(Instruction* i, RuleContext& ctx) {
  if (!IsFloat(i->shape().element_type())) return nullptr;
  std::optional<double> v = ScalarConstantValue(i->operand(1));
  if (!v || *v == 0 || *v == 1 || !std::isfinite(*v)) return nullptr;
  int exponent;
  if (std::frexp(std::fabs(*v), &exponent) != 0.5) return nullptr;
  const double reciprocal = 1.0 / *v;
  Literal scalar(Shape::Scalar(i->shape().element_type()));
  scalar.SetFromDouble(0, reciprocal);
  if (scalar.GetAsDouble(0) != reciprocal) return nullptr;  // not representable
  Instruction* c = ctx.Add(Instruction::CreateConstant(std::move(scalar)));
  if (i->shape().rank() > 0) c = ctx.Add(Instruction::Create(Opcode::kBroadcast, i->shape(), {c}));
  return ctx.Add(Instruction::Create(Opcode::kMultiply, i->shape(), {i->operand(0), c}));
}
Instruction* PowerOne(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 1) ? i->operand(0) : nullptr;
}
Instruction* PowerTwo(Instruction* i, RuleContext& ctx) {
  if (!IsFloat(i->shape().element_type()) || !IsConstantValue(i->operand(1), 2)) return nullptr;
  return ctx.Add(Instruction::Create(Opcode::kMultiply, i->shape(), {i->operand(0), i->operand(0)}));
}
Instruction* NegateNegate(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kNegate ? i->operand(0)->operand(0) : nullptr;
}
Instruction* NotNot(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kNot ? i->operand(0)->operand(0) : nullptr;
}
Instruction* AbsAbs(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kAbs ? i->operand(0) : nullptr;
}
// |-x| == |x|.
Instruction* AbsNegate(Instruction* i, RuleContext& ctx) {
  if (i->operand(0)->opcode() != Opcode::kNegate) return nullptr;
  return ctx.Add(Instruction::Create(Opcode::kAbs, i->shape(), {i->operand(0)->operand(0)}));
}
// max(x, x), min(x, x), and(x, x), or(x, x) == x.
Instruction* Idempotent(Instruction* i, RuleContext&) {
  return i->operand(0) == i->operand(1) ? i->operand(0) : nullptr;
}
Instruction* SelectSame(Instruction* i, RuleContext&) {
  return i->operand(1) == i->operand(2) ? i->operand(1) : nullptr;
}
Instruction* SelectConstant(Instruction* i, RuleContext&) {
  std::optional<double> p = ScalarConstantValue(i->operand(0));
  if (!p) return nullptr;
  return *p != 0 ? i->operand(1) : i->operand(2);
}
Instruction* XorSelf(Instruction* i, RuleContext& ctx) {
  return i->operand(0) == i->operand(1) ? Splat(i, 0, ctx) : nullptr;
}
// and(x, false) = false; or(x, true) = true for pred.
Instruction* AndOrConstant(Instruction* i, RuleContext&) {
  if (i->shape().element_type() != PrimitiveType::kPred) return nullptr;
  const double absorbing = i->opcode() == Opcode::kAnd ? 0 : 1;
  const double identity = 1 - absorbing;
  for (int k = 0; k < 2; ++k) {
    if (IsConstantValue(i->operand(k), absorbing) && i->operand(k)->shape() == i->shape()) {
      return i->operand(k);
    }
    if (IsConstantValue(i->operand(k), identity)) return i->operand(1 - k);
  }
  return nullptr;
}
// compare(x, x) for integers: EQ/GE/LE true, NE/GT/LT false.
Instruction* CompareSelf(Instruction* i, RuleContext& ctx) {
  if (i->operand(0) != i->operand(1) || !IsInteger(i->operand(0)->shape().element_type())) {
    return nullptr;
  }
  const ComparisonDirection d = i->comparison_direction();
  const bool value = d == ComparisonDirection::kEq || d == ComparisonDirection::kGe ||
                     d == ComparisonDirection::kLe;
  return Splat(i, value, ctx);
}
Instruction* ConvertSameType(Instruction* i, RuleContext&) {
  return i->operand(0)->shape().element_type() == i->shape().element_type() ? i->operand(0)
                                                                              : nullptr;
}
// convert(convert(x: T1) -> T2) -> T1 when T2 holds every T1 value exactly.
Instruction* ConvertRoundTrip(Instruction* i, RuleContext&) {
  const Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kConvert) return nullptr;
  const PrimitiveType t1 = inner->operand(0)->shape().element_type();
  const PrimitiveType t2 = inner->shape().element_type();
  if (i->shape().element_type() != t1) return nullptr;
  const bool widening_float = IsFloat(t1) && IsFloat(t2) && BitWidth(t2) > BitWidth(t1) &&
                              t1 != PrimitiveType::kBF16 && BitWidth(t1) >= 16;
  const bool widening_int = IsSignedInteger(t1) && IsSignedInteger(t2) && BitWidth(t2) > BitWidth(t1);
  return widening_float || widening_int ? inner->operand(0) : nullptr;
}

}  // namespace

const std::vector<AlgsimpRule>& ArithmeticRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"add-zero", Opcode::kAdd, AddZero},
      {"subtract-zero", Opcode::kSubtract, SubtractZero},
      {"subtract-self-int", Opcode::kSubtract, SubtractSelf},
      {"multiply-one", Opcode::kMultiply, MultiplyOne},
      {"multiply-zero-int", Opcode::kMultiply, MultiplyZero},
      {"divide-one", Opcode::kDivide, DivideOne},
      {"divide-power-of-two", Opcode::kDivide, DivideByPowerOfTwo},
      {"power-one", Opcode::kPower, PowerOne},
      {"power-two", Opcode::kPower, PowerTwo},
      {"negate-negate", Opcode::kNegate, NegateNegate},
      {"not-not", Opcode::kNot, NotNot},
      {"abs-abs", Opcode::kAbs, AbsAbs},
      {"abs-negate", Opcode::kAbs, AbsNegate},
      {"maximum-self", Opcode::kMaximum, Idempotent},
      {"minimum-self", Opcode::kMinimum, Idempotent},
      {"and-self", Opcode::kAnd, Idempotent},
      {"or-self", Opcode::kOr, Idempotent},
      {"xor-self", Opcode::kXor, XorSelf},
      {"and-constant", Opcode::kAnd, AndOrConstant},
      {"or-constant", Opcode::kOr, AndOrConstant},
      {"select-same", Opcode::kSelect, SelectSame},
      {"select-constant", Opcode::kSelect, SelectConstant},
      {"compare-self-int", Opcode::kCompare, CompareSelf},
      {"convert-same-type", Opcode::kConvert, ConvertSameType},
      {"convert-round-trip", Opcode::kConvert, ConvertRoundTrip},
  };
  return *rules;
}

}  // namespace hlogym

// Arithmetic rules: identities of add, subtract, multiply, divide, remainder,
// power, negate, abs, maximum and minimum.
//
// Exactness notes. x + 0 -> x differs only for x = -0 (XLA's simplifier does
// the same). x - x -> 0 and x * 0 -> 0 are integer-only: for floats NaN and
// infinity give NaN. x / 2^k -> x * 2^-k is exact for binary floats (the same
// real value, rounded once), so only powers of two are rewritten, unlike
// XLA's x / c -> x * (1/c). Unsigned division and remainder by 2^k become a
// shift and a mask; signed ones round differently for negatives and stay.
#include <bit>
#include <cmath>

#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

bool IsSignedOrFloat(const Instruction* inst) {
  const PrimitiveType t = inst->shape().element_type();
  return IsSignedInteger(t) || IsFloat(t) || IsComplex(t);
}

// The bits of an unsigned constant that is 2^k with k >= 1.
std::optional<uint64_t> UnsignedPowerOfTwo(const Instruction* divisor) {
  if (!IsUnsignedInteger(divisor->shape().element_type())) return std::nullopt;
  std::optional<int64_t> v = ScalarConstantInt(divisor);
  if (!v) return std::nullopt;
  const uint64_t bits = static_cast<uint64_t>(*v);
  if (bits < 2 || (bits & (bits - 1)) != 0) return std::nullopt;
  return bits;
}

// Whether every element of `inst` is the smallest (largest) value of its
// type: -inf for floats, the minimum (maximum) for integers.
bool IsExtreme(const Instruction* inst, bool lowest) {
  const PrimitiveType t = inst->shape().element_type();
  if (IsFloat(t)) {
    std::optional<double> v = ScalarConstantValue(inst);
    return v && std::isinf(*v) && (*v < 0) == lowest;
  }
  if (!IsInteger(t)) return false;
  std::optional<int64_t> v = ScalarConstantInt(inst);
  if (!v) return false;
  const int w = BitWidth(t);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  const uint64_t bits = static_cast<uint64_t>(*v) & mask;
  if (IsUnsignedInteger(t)) return bits == (lowest ? 0 : mask);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return bits == (lowest ? sign : sign - 1);
}

Instruction* AddZero(Instruction* i, RuleContext&) {
  if (IsConstantValue(i->operand(1), 0)) return i->operand(0);
  if (IsConstantValue(i->operand(0), 0)) return i->operand(1);
  return nullptr;
}
// a + (-b) -> a - b; (-a) + b -> b - a: IEEE defines both sides alike.
Instruction* AddNegate(Instruction* i, RuleContext& ctx) {
  Instruction* a = i->operand(0);
  Instruction* b = i->operand(1);
  if (b->opcode() == Opcode::kNegate) {
    return ctx.Add(Opcode::kSubtract, i->shape(), {a, b->operand(0)});
  }
  if (a->opcode() == Opcode::kNegate) {
    return ctx.Add(Opcode::kSubtract, i->shape(), {b, a->operand(0)});
  }
  return nullptr;
}
Instruction* SubtractZero(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 0) ? i->operand(0) : nullptr;
}
Instruction* SubtractSelf(Instruction* i, RuleContext& ctx) {
  if (i->operand(0) != i->operand(1) || !IsIntegral(i)) return nullptr;
  return ctx.SplatInt(i->shape(), 0);
}
// a - (-b) -> a + b.
Instruction* SubtractNegate(Instruction* i, RuleContext& ctx) {
  Instruction* b = i->operand(1);
  if (b->opcode() != Opcode::kNegate) return nullptr;
  return ctx.Add(Opcode::kAdd, i->shape(), {i->operand(0), b->operand(0)});
}
Instruction* MultiplyOne(Instruction* i, RuleContext&) {
  if (IsConstantValue(i->operand(1), 1)) return i->operand(0);
  if (IsConstantValue(i->operand(0), 1)) return i->operand(1);
  return nullptr;
}
Instruction* MultiplyZero(Instruction* i, RuleContext& ctx) {
  if (!IsIntegral(i)) return nullptr;
  if (!IsConstantValue(i->operand(0), 0) && !IsConstantValue(i->operand(1), 0)) return nullptr;
  return ctx.SplatInt(i->shape(), 0);
}
// x * -1 -> -x (signed integers wrap alike; floats only flip the sign bit).
Instruction* MultiplyMinusOne(Instruction* i, RuleContext& ctx) {
  if (!IsSignedOrFloat(i) || IsComplex(i->shape().element_type())) return nullptr;
  for (int k = 0; k < 2; ++k) {
    if (IsConstantValue(i->operand(k), -1)) {
      return ctx.Add(Opcode::kNegate, i->shape(), {i->operand(1 - k)});
    }
  }
  return nullptr;
}
Instruction* DivideOne(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 1) ? i->operand(0) : nullptr;
}
// x / 2^k == x * 2^-k exactly for binary floats (no rounding either way).
Instruction* DivideByPowerOfTwo(Instruction* i, RuleContext& ctx) {
  if (!IsFloating(i)) return nullptr;
  std::optional<double> v = ScalarConstantValue(i->operand(1));
  if (!v || *v == 0 || *v == 1 || !std::isfinite(*v)) return nullptr;
  int exponent;
  if (std::frexp(std::fabs(*v), &exponent) != 0.5) return nullptr;
  const double reciprocal = 1.0 / *v;
  Literal scalar(Shape::Scalar(i->shape().element_type()));
  scalar.SetFromDouble(0, reciprocal);
  if (scalar.GetAsDouble(0) != reciprocal) return nullptr;  // not representable
  Instruction* c = ctx.BroadcastScalar(ctx.Add(Instruction::CreateConstant(std::move(scalar))),
                                       i->shape());
  return ctx.Add(Opcode::kMultiply, i->shape(), {i->operand(0), c});
}
// Unsigned x / 2^k -> x >> k.
Instruction* DivideUnsignedPowerOfTwo(Instruction* i, RuleContext& ctx) {
  std::optional<uint64_t> c = UnsignedPowerOfTwo(i->operand(1));
  if (!c) return nullptr;
  Instruction* shift = ctx.SplatInt(i->shape(), std::countr_zero(*c));
  return ctx.Add(Opcode::kShiftRightLogical, i->shape(), {i->operand(0), shift});
}
// Unsigned x % 2^k -> x & (2^k - 1).
Instruction* RemainderUnsignedPowerOfTwo(Instruction* i, RuleContext& ctx) {
  std::optional<uint64_t> c = UnsignedPowerOfTwo(i->operand(1));
  if (!c) return nullptr;
  Instruction* mask = ctx.SplatInt(i->shape(), static_cast<int64_t>(*c - 1));
  return ctx.Add(Opcode::kAnd, i->shape(), {i->operand(0), mask});
}
// pow(x, 0) -> 1, also for x = 0, NaN or infinity.
Instruction* PowerZero(Instruction* i, RuleContext& ctx) {
  if (!IsConstantValue(i->operand(1), 0)) return nullptr;
  if (IsIntegral(i)) return ctx.SplatInt(i->shape(), 1);
  return IsFloating(i) ? ctx.SplatFloat(i->shape(), 1) : nullptr;
}
Instruction* PowerOne(Instruction* i, RuleContext&) {
  return IsConstantValue(i->operand(1), 1) ? i->operand(0) : nullptr;
}
Instruction* PowerTwo(Instruction* i, RuleContext& ctx) {
  if (!IsConstantValue(i->operand(1), 2) || !(IsFloating(i) || IsIntegral(i))) return nullptr;
  return ctx.Add(Opcode::kMultiply, i->shape(), {i->operand(0), i->operand(0)});
}
// pow(x, -1) -> 1 / x for floats (XLA's rewrite; equal up to pow's rounding).
Instruction* PowerMinusOne(Instruction* i, RuleContext& ctx) {
  if (!IsFloating(i) || !IsConstantValue(i->operand(1), -1)) return nullptr;
  Instruction* one = ctx.SplatFloat(i->shape(), 1);
  return ctx.Add(Opcode::kDivide, i->shape(), {one, i->operand(0)});
}
Instruction* NegateNegate(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kNegate ? i->operand(0)->operand(0) : nullptr;
}
Instruction* AbsAbs(Instruction* i, RuleContext&) {
  Instruction* inner = i->operand(0);
  return inner->opcode() == Opcode::kAbs && SameShape(i, inner) ? inner : nullptr;
}
// |-x| == |x|; not for unsigned types, where abs is the identity.
Instruction* AbsNegate(Instruction* i, RuleContext& ctx) {
  if (i->operand(0)->opcode() != Opcode::kNegate || !IsSignedOrFloat(i->operand(0))) return nullptr;
  return ctx.Add(Opcode::kAbs, i->shape(), {i->operand(0)->operand(0)});
}
// max(x, x) == min(x, x) == x.
Instruction* SameOperands(Instruction* i, RuleContext&) {
  return i->operand(0) == i->operand(1) ? i->operand(0) : nullptr;
}
// max(x, lowest) == x; min(x, highest) == x (NaN propagates either way).
Instruction* MaximumLowest(Instruction* i, RuleContext&) {
  if (IsExtreme(i->operand(1), /*lowest=*/true)) return i->operand(0);
  if (IsExtreme(i->operand(0), /*lowest=*/true)) return i->operand(1);
  return nullptr;
}
Instruction* MinimumHighest(Instruction* i, RuleContext&) {
  if (IsExtreme(i->operand(1), /*lowest=*/false)) return i->operand(0);
  if (IsExtreme(i->operand(0), /*lowest=*/false)) return i->operand(1);
  return nullptr;
}

}  // namespace

const std::vector<AlgsimpRule>& ArithmeticRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"add-zero", Opcode::kAdd, AddZero},
      {"add-negate", Opcode::kAdd, AddNegate},
      {"subtract-zero", Opcode::kSubtract, SubtractZero},
      {"subtract-self-int", Opcode::kSubtract, SubtractSelf},
      {"subtract-negate", Opcode::kSubtract, SubtractNegate},
      {"multiply-one", Opcode::kMultiply, MultiplyOne},
      {"multiply-zero-int", Opcode::kMultiply, MultiplyZero},
      {"multiply-minus-one", Opcode::kMultiply, MultiplyMinusOne},
      {"divide-one", Opcode::kDivide, DivideOne},
      {"divide-power-of-two", Opcode::kDivide, DivideByPowerOfTwo},
      {"divide-unsigned-power-of-two", Opcode::kDivide, DivideUnsignedPowerOfTwo},
      {"remainder-unsigned-power-of-two", Opcode::kRemainder, RemainderUnsignedPowerOfTwo},
      {"power-zero", Opcode::kPower, PowerZero},
      {"power-one", Opcode::kPower, PowerOne},
      {"power-two", Opcode::kPower, PowerTwo},
      {"power-minus-one", Opcode::kPower, PowerMinusOne},
      {"negate-negate", Opcode::kNegate, NegateNegate},
      {"abs-abs", Opcode::kAbs, AbsAbs},
      {"abs-negate", Opcode::kAbs, AbsNegate},
      {"maximum-self", Opcode::kMaximum, SameOperands},
      {"minimum-self", Opcode::kMinimum, SameOperands},
      {"maximum-lowest", Opcode::kMaximum, MaximumLowest},
      {"minimum-highest", Opcode::kMinimum, MinimumHighest},
  };
  return *rules;
}

}  // namespace hlogym

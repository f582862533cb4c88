// Conversion and forwarding rules: convert, bitcast-convert, reduce-precision,
// copy and get-tuple-element of a tuple.
//
// convert(convert(x)) is only shortened when the inner conversion is lossless
// (every value of x's type survives it) and converting that same value from
// either type gives the same result: float -> int conversion saturates while
// int -> int wraps, so int -> float -> int chains keep both converts unless
// they return to x's own type.
#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

// Significand digits of the IEEE-style float types whose ranges nest
// (f16 and bf16 inside f32 inside f64); 0 for the others.
int SignificandDigits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return 11;
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF32: return 24;
    case PrimitiveType::kF64: return 53;
    default: return 0;
  }
}

// Whether `to` holds every value of `from` exactly.
bool IsLossless(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (IsComplex(from) || IsComplex(to)) return false;
  if (from == PrimitiveType::kPred) return IsInteger(to) || SignificandDigits(to) > 0;
  if (IsInteger(from) && IsInteger(to)) {
    const int from_bits = BitWidth(from), to_bits = BitWidth(to);
    if (IsSignedInteger(from)) return IsSignedInteger(to) && to_bits >= from_bits;
    return IsUnsignedInteger(to) ? to_bits >= from_bits : to_bits > from_bits;
  }
  if (IsInteger(from) && IsFloat(to)) {
    const int magnitude_bits = BitWidth(from) - (IsSignedInteger(from) ? 1 : 0);
    return SignificandDigits(to) >= magnitude_bits;
  }
  if (IsFloat(from) && IsFloat(to)) {
    if (SignificandDigits(from) == 0 || SignificandDigits(to) == 0) return false;
    // bf16 and f16 are not nested in each other; both nest in f32 and f64.
    return BitWidth(to) > BitWidth(from);
  }
  return false;
}

Instruction* ConvertSameType(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// convert(convert(x: T1) -> T2) -> T3 becomes convert(x) -> T3, or x itself
// when T3 == T1, if T1 -> T2 is lossless and the chains agree (see above).
Instruction* ConvertOfLosslessConvert(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kConvert) return nullptr;
  Instruction* x = inner->operand(0);
  const PrimitiveType t1 = x->shape().element_type();
  const PrimitiveType t2 = inner->shape().element_type();
  const PrimitiveType t3 = i->shape().element_type();
  if (!IsLossless(t1, t2) || IsComplex(t3)) return nullptr;
  if (t3 == t1) return x->shape().Compatible(i->shape()) ? x : nullptr;
  const bool agree = t1 == PrimitiveType::kPred || (IsFloat(t1) && IsFloat(t2)) ||
                     (IsInteger(t1) && IsInteger(t2)) ||
                     (IsInteger(t1) && IsFloat(t2) && IsFloat(t3));
  if (!agree) return nullptr;
  return ctx.Add(Opcode::kConvert, i->shape(), {x});
}
Instruction* BitcastConvertSameType(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// bitcast-convert(bitcast-convert(x)) back to x's shape is x.
Instruction* BitcastConvertRoundTrip(Instruction* i, RuleContext&) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kBitcastConvert) return nullptr;
  return inner->operand(0)->shape().Compatible(i->shape()) ? inner->operand(0) : nullptr;
}
// reduce-precision to at least the type's own exponent and mantissa bits.
Instruction* ReducePrecisionNoOp(Instruction* i, RuleContext&) {
  if (!i->has_attrs<ReducePrecisionAttrs>()) return nullptr;
  const ReducePrecisionAttrs& a = i->attrs<ReducePrecisionAttrs>();
  int exponent_bits = 0;
  switch (i->shape().element_type()) {
    case PrimitiveType::kF16: exponent_bits = 5; break;
    case PrimitiveType::kBF16: case PrimitiveType::kF32: exponent_bits = 8; break;
    case PrimitiveType::kF64: exponent_bits = 11; break;
    default: return nullptr;
  }
  const int mantissa_bits = SignificandDigits(i->shape().element_type()) - 1;
  if (a.exponent_bits < exponent_bits || a.mantissa_bits < mantissa_bits) return nullptr;
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// A copy that keeps the layout moves nothing.
Instruction* CopyToOperand(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
Instruction* TupleElementOfTuple(Instruction* i, RuleContext&) {
  Instruction* tuple = i->operand(0);
  if (tuple->opcode() != Opcode::kTuple || i->tuple_index() >= tuple->operand_count()) {
    return nullptr;
  }
  return tuple->operand(i->tuple_index());
}

}  // namespace

const std::vector<AlgsimpRule>& ConvertRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"convert-same-type", Opcode::kConvert, ConvertSameType},
      {"convert-of-lossless-convert", Opcode::kConvert, ConvertOfLosslessConvert},
      {"bitcast-convert-same-type", Opcode::kBitcastConvert, BitcastConvertSameType},
      {"bitcast-convert-round-trip", Opcode::kBitcastConvert, BitcastConvertRoundTrip},
      {"reduce-precision-no-op", Opcode::kReducePrecision, ReducePrecisionNoOp},
      {"copy", Opcode::kCopy, CopyToOperand},
      {"get-tuple-element-of-tuple", Opcode::kGetTupleElement, TupleElementOfTuple},
  };
  return *rules;
}

}  // namespace hlogym

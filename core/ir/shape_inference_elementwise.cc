// Shape inference of elementwise operations: unary and binary arithmetic,
// compare, conversions, select, clamp and map. Operands must have exactly the
// same dimensions (HLO has no implicit broadcasting), except select's
// predicate and clamp's bounds, which may be scalars.
#include <algorithm>

#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

// An operand's shape with another element type; keeps dims, dynamism and
// layout, as XLA's ChangeElementType does.
Shape WithType(const Shape& like, PrimitiveType type) {
  Shape result = like;
  result.set_element_type(type);
  return result;
}

PrimitiveType ComplexComponent(PrimitiveType type) {
  return type == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }
bool IsSigned(PrimitiveType t) { return IsSignedInteger(t) || IsFloat(t); }

absl::Status TypeError(const Instruction& inst, std::string_view expected, const Shape& got) {
  return Invalid(Name(inst), " expects ", AV(expected), " operands, got ", S(got));
}

absl::StatusOr<Shape> InferUnary(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const Shape& in = inst.operand(0)->shape();
  if (op == Opcode::kCopy) return in;  // any shape, tuples included
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const PrimitiveType t = in.element_type();
  switch (op) {
    case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kErf:
      if (!IsFloat(t)) return TypeError(inst, "floating-point", in);
      return in;
    case Opcode::kCos: case Opcode::kSin: case Opcode::kTan: case Opcode::kExp:
    case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kRsqrt: case Opcode::kSqrt: case Opcode::kCbrt: case Opcode::kTanh:
    case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin: case Opcode::kAsinh:
    case Opcode::kAtan: case Opcode::kAtanh: case Opcode::kCosh: case Opcode::kSinh:
      if (!IsFloatOrComplex(t)) return TypeError(inst, "floating-point or complex", in);
      return in;
    case Opcode::kReal: case Opcode::kImag:
      if (IsComplex(t)) return WithType(in, ComplexComponent(t));
      if (!IsFloat(t)) return TypeError(inst, "floating-point or complex", in);
      return in;
    case Opcode::kAbs:
      if (IsComplex(t)) return WithType(in, ComplexComponent(t));
      if (!IsSigned(t)) return TypeError(inst, "signed or complex", in);
      return in;
    case Opcode::kClz: case Opcode::kPopulationCount:
      if (!IsInteger(t)) return TypeError(inst, "integer", in);
      return in;
    case Opcode::kNegate:
      if (t == PrimitiveType::kPred) return TypeError(inst, "numeric", in);
      return in;
    case Opcode::kSign:
      if (!IsSigned(t) && !IsComplex(t)) return TypeError(inst, "signed or complex", in);
      return in;
    case Opcode::kNot:
      if (t != PrimitiveType::kPred && !IsInteger(t)) return TypeError(inst, "pred or integer", in);
      return in;
    case Opcode::kIsFinite:
      if (!IsFloat(t)) return TypeError(inst, "floating-point", in);
      return WithType(in, PrimitiveType::kPred);
    case Opcode::kConvert: {
      ASSIGN_OR_RETURN(const Shape* declared, DeclaredArray(inst));
      return WithType(in, declared->element_type());
    }
    case Opcode::kBitcastConvert: {
      ASSIGN_OR_RETURN(const Shape* declared, DeclaredArray(inst));
      const PrimitiveType to = declared->element_type();
      if (IsComplex(t) != IsComplex(to)) {
        return Invalid("bitcast-convert between complex and real types: ", S(in), " to ",
                       TypeName(to));
      }
      const int from_bits = BitWidth(t), to_bits = BitWidth(to);
      Shape result = WithType(in, to);
      if (from_bits == to_bits) return result;
      const int ratio = std::max(from_bits, to_bits) / std::min(from_bits, to_bits);
      if (std::max(from_bits, to_bits) % std::min(from_bits, to_bits) != 0) {
        return Invalid("bitcast-convert between types whose widths do not divide: ", S(in),
                       " to ", TypeName(to));
      }
      if (from_bits > to_bits) {
        // Each element becomes `ratio` narrower ones along a new minor dim.
        result.mutable_dims().push_back(ratio);
        result.clear_layout();
        result.FillMissingLayout();
        return result;
      }
      if (in.rank() == 0 || in.dim(in.rank() - 1) != ratio) {
        return Invalid("bitcast-convert from ", S(in), " to ", TypeName(to),
                       " needs a last dimension of ", ratio);
      }
      result.mutable_dims().pop_back();
      result.clear_layout();
      result.FillMissingLayout();
      return result;
    }
    case Opcode::kReducePrecision: {
      if (!IsFloat(t)) return TypeError(inst, "floating-point", in);
      const auto& a = AttrsOr<ReducePrecisionAttrs>(inst);
      if (a.exponent_bits < 1 || a.mantissa_bits < 0) {
        return Invalid("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got ",
                       a.exponent_bits, " and ", a.mantissa_bits);
      }
      return in;
    }
    default:
      return Invalid("not supported: unary shape inference for ", Name(inst));
  }
}

// compare's `type=` must suit the operands' element type.
absl::Status CheckComparisonType(const Instruction& inst, PrimitiveType t) {
  const ComparisonType type = AttrsOr<CompareAttrs>(inst).type;
  bool ok = true;
  switch (type) {
    case ComparisonType::kDefault: break;
    case ComparisonType::kFloat: case ComparisonType::kTotalOrder:
      ok = IsFloatOrComplex(t);
      break;
    case ComparisonType::kSigned: ok = IsSignedInteger(t); break;
    case ComparisonType::kUnsigned: ok = IsUnsignedInteger(t) || t == PrimitiveType::kPred; break;
  }
  if (ok) return absl::OkStatus();
  return Invalid("compare type ", AV(ComparisonTypeName(type)), " does not suit ",
                 TypeName(t), " operands");
}

absl::StatusOr<Shape> InferBinary(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  if (!SameDims(lhs, rhs)) {
    return Invalid(Name(inst), " operands must have the same dimensions, got ", S(lhs), " and ",
                   S(rhs));
  }
  const PrimitiveType t = lhs.element_type();
  if (op == Opcode::kStochasticConvert) {
    // (operand, random bits) -> the declared type.
    if (!IsFloat(t)) return TypeError(inst, "a floating-point first", lhs);
    if (!IsUnsignedInteger(rhs.element_type()) || BitWidth(rhs.element_type()) != BitWidth(t)) {
      return Invalid("stochastic-convert's random bits must be unsigned and as wide as ",
                     TypeName(t), ", got ", S(rhs));
    }
    ASSIGN_OR_RETURN(const Shape* declared, DeclaredArray(inst));
    return WithType(lhs, declared->element_type());
  }
  if (rhs.element_type() != t) {
    return Invalid(Name(inst), " operands must have the same element type, got ", S(lhs), " and ",
                   S(rhs));
  }
  switch (op) {
    case Opcode::kAdd: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMultiply:
      return lhs;
    case Opcode::kSubtract: case Opcode::kAtan2: case Opcode::kPower: case Opcode::kDivide:
    case Opcode::kRemainder:
      if (t == PrimitiveType::kPred) return TypeError(inst, "numeric", lhs);
      return lhs;
    case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kMulhi:
      if (!IsInteger(t)) return TypeError(inst, "integer", lhs);
      return lhs;
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      if (t != PrimitiveType::kPred && !IsInteger(t)) return TypeError(inst, "pred or integer", lhs);
      return lhs;
    case Opcode::kComplex:
      if (t == PrimitiveType::kF32) return WithType(lhs, PrimitiveType::kC64);
      if (t == PrimitiveType::kF64) return WithType(lhs, PrimitiveType::kC128);
      return TypeError(inst, "f32 or f64", lhs);
    case Opcode::kCompare:
      RETURN_IF_ERROR(CheckComparisonType(inst, t));
      return WithType(lhs, PrimitiveType::kPred);
    default:
      return Invalid("not supported: binary shape inference for ", Name(inst));
  }
}

absl::StatusOr<Shape> InferSelect(const Instruction& inst) {
  const Shape& pred = inst.operand(0)->shape();
  const Shape& on_true = inst.operand(1)->shape();
  const Shape& on_false = inst.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(pred, "select's predicate"));
  RETURN_IF_ERROR(ExpectArray(on_true, "select's on-true operand"));
  RETURN_IF_ERROR(ExpectArray(on_false, "select's on-false operand"));
  if (pred.element_type() != PrimitiveType::kPred) {
    return Invalid("select's predicate must be pred, got ", S(pred));
  }
  if (!Compatible(on_true, on_false)) {
    return Invalid("select's branches must have the same shape, got ", S(on_true), " and ",
                   S(on_false));
  }
  if (!pred.IsScalar() && !SameDims(pred, on_true)) {
    return Invalid("select's predicate must be a scalar or match the branches (expected ",
                   S(WithType(on_true, PrimitiveType::kPred)), ", got ", S(pred), ")");
  }
  return on_true;
}

absl::StatusOr<Shape> InferClamp(const Instruction& inst) {
  const Shape& min = inst.operand(0)->shape();
  const Shape& operand = inst.operand(1)->shape();
  const Shape& max = inst.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(min, "clamp's min"));
  RETURN_IF_ERROR(ExpectArray(operand, "clamp's operand"));
  RETURN_IF_ERROR(ExpectArray(max, "clamp's max"));
  for (const Shape* bound : {&min, &max}) {
    if (bound->element_type() != operand.element_type() ||
        (!bound->IsScalar() && !SameDims(*bound, operand))) {
      return Invalid("clamp's bounds must be scalars or match the operand's shape, got ", S(min),
                     ", ", S(operand), ", ", S(max));
    }
  }
  return operand;
}

absl::StatusOr<Shape> InferMap(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  ASSIGN_OR_RETURN(const Computation* f, Callee(inst, 0, "to_apply"));
  const Shape& first = inst.operand(0)->shape();
  for (const Instruction* o : inst.operands()) {
    RETURN_IF_ERROR(ExpectArray(o->shape(), "a map operand"));
    if (!SameDims(o->shape(), first)) {
      return Invalid("map operands must have the same dimensions, got ", S(first), " and ",
                     S(o->shape()));
    }
  }
  // dimensions= must list every dimension in order (XLA maps whole arrays);
  // an empty list is the short form.
  const auto dims = inst.dimensions();
  if (!dims.empty()) {
    bool identity = static_cast<int64_t>(dims.size()) == first.rank();
    for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == int64_t(i);
    if (!identity) {
      return Invalid("map dimensions must be {0..", first.rank() - 1, "}, got ", List(dims));
    }
  }
  if (f->parameter_count() != inst.operand_count()) {
    return Invalid("map computation `", f->name(), "` takes ", f->parameter_count(),
                   " parameters but is given ", inst.operand_count(), " operands");
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& p = f->parameter(i)->shape();
    const PrimitiveType t = inst.operand(i)->shape().element_type();
    if (!p.IsScalar() || p.element_type() != t) {
      return Invalid("map computation `", f->name(), "` parameter ", i, " must be a scalar ",
                     TypeName(t), " (expected ", TypeName(t), "[], got ", S(p), ")");
    }
  }
  const Shape& result = f->root()->shape();
  if (!result.IsScalar()) {
    return Invalid("map computation `", f->name(), "` must return a scalar, got ", S(result));
  }
  return WithType(first, result.element_type());
}

}  // namespace

absl::StatusOr<Shape> InferElementwiseShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kSelect: return InferSelect(inst);
    case Opcode::kClamp: return InferClamp(inst);
    case Opcode::kMap: return InferMap(inst);
    default:
      return inst.operand_count() == 1 ? InferUnary(inst) : InferBinary(inst);
  }
}

}  // namespace hlogym::shape_inference_internal

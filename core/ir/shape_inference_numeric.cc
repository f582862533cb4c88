// Shape inference of numeric library ops: batch normalization, FFT,
// Cholesky, triangular solve and random number generation.
#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }

Shape WithType(const Shape& like, PrimitiveType type) {
  Shape result = like;
  result.set_element_type(type);
  return result;
}

// batch-norm-*: operand 0 is the data; the others listed in `per_feature`
// are vectors over its feature dimension and `same_as_data` have its shape.
absl::StatusOr<Shape> InferBatchNorm(const Instruction& inst,
                                     std::initializer_list<int64_t> per_feature,
                                     std::initializer_list<int64_t> same_as_data) {
  const Shape& data = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  if (!IsFloat(data.element_type())) {
    return Invalid(Name(inst), " needs a floating-point operand, got ", S(data));
  }
  const int64_t feature = AttrsOr<BatchNormAttrs>(inst).feature_index;
  if (feature < 0 || feature >= data.rank()) {
    return Invalid(Name(inst), " feature_index ", feature, " is out of range for ", S(data));
  }
  const Shape vector = Shape::Array(data.element_type(), {data.dim(feature)});
  for (int64_t i : per_feature) {
    if (!Compatible(inst.operand(i)->shape(), vector)) {
      return Invalid(Name(inst), " operand ", i, " must be a vector over the features (expected ",
                     S(vector), ", got ", S(inst.operand(i)->shape()), ")");
    }
  }
  for (int64_t i : same_as_data) {
    if (!Compatible(inst.operand(i)->shape(), data)) {
      return Invalid(Name(inst), " operand ", i, " must have the operand's shape (expected ",
                     S(data), ", got ", S(inst.operand(i)->shape()), ")");
    }
  }
  if (inst.opcode() == Opcode::kBatchNormInference) return data;
  return Shape::Tuple({data, vector, vector});
}

absl::StatusOr<Shape> InferFft(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "fft's operand"));
  const FftAttrs& a = AttrsOr<FftAttrs>(inst);
  const int64_t n = static_cast<int64_t>(a.length.size());
  if (n < 1 || n > 3) return Invalid("fft_length must have 1 to 3 entries, got ", List(a.length));
  if (in.rank() < n) {
    return Invalid("an fft of rank ", n, " needs an operand of rank >= ", n, ", got ", S(in));
  }
  const PrimitiveType t = in.element_type();
  const int64_t first = in.rank() - n;
  switch (a.type) {
    case FftType::kFft: case FftType::kIfft:
      if (!IsComplex(t)) return Invalid("FFT and IFFT need a complex operand, got ", S(in));
      return in;
    case FftType::kRfft: {
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) {
        return Invalid("RFFT needs an f32 or f64 operand, got ", S(in));
      }
      for (int64_t i = 0; i < n; ++i) {
        if (in.dim(first + i) != a.length[i]) {
          return Invalid("RFFT's fft_length ", List(a.length), " must match the minor dimensions of ",
                         S(in));
        }
      }
      Shape result = WithType(in, t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
      if (a.length.back() != 0) result.mutable_dims().back() = a.length.back() / 2 + 1;
      return result;
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) return Invalid("IRFFT needs a complex operand, got ", S(in));
      for (int64_t i = 0; i + 1 < n; ++i) {
        if (in.dim(first + i) != a.length[i]) {
          return Invalid("IRFFT's fft_length ", List(a.length),
                         " must match the minor dimensions of ", S(in));
        }
      }
      if ((in.dims().back() != 0 || a.length.back() != 0) &&
          in.dims().back() != a.length.back() / 2 + 1) {
        return Invalid("IRFFT's last dimension must be fft_length/2+1 = ", a.length.back() / 2 + 1,
                       ", got ", S(in));
      }
      Shape result = WithType(in, t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64);
      result.mutable_dims().back() = a.length.back();
      return result;
    }
  }
  return Invalid("unknown fft_type");
}

// A batch of square matrices in the two minor dimensions.
absl::Status CheckSquare(const Shape& a, std::string_view what) {
  if (!a.IsArray() || !IsFloatOrComplex(a.element_type())) {
    return Invalid(AV(what), " must be a floating-point or complex array, got ", S(a));
  }
  if (a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2)) {
    return Invalid(AV(what), " must hold square matrices in its two minor dimensions, got ", S(a));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferTriangularSolve(const Instruction& inst) {
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  RETURN_IF_ERROR(CheckSquare(a, "triangular-solve's a"));
  RETURN_IF_ERROR(ExpectArray(b, "triangular-solve's b"));
  if (b.element_type() != a.element_type() || b.rank() != a.rank()) {
    return Invalid("triangular-solve's b must have a's element type and rank, got ", S(a), " and ",
                   S(b));
  }
  const std::string* left = inst.FindRawAttribute("left_side");
  const bool left_side = left != nullptr && *left == "true";
  const int64_t shared = b.dim(b.rank() - (left_side ? 2 : 1));
  if (shared != a.dim(a.rank() - 1)) {
    return Invalid("triangular-solve's a ", S(a), " and b ", S(b), " do not share the ",
                   left_side ? "row" : "column", " dimension");
  }
  for (int64_t i = 0; i + 2 < a.rank(); ++i) {
    if (a.dim(i) != b.dim(i)) {
      return Invalid("triangular-solve's batch dimensions differ: ", S(a), " and ", S(b));
    }
  }
  return b;
}

absl::StatusOr<Shape> InferRng(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  if (!a.IsScalar() || !Compatible(a, b)) {
    return Invalid("rng's parameters must be two scalars of one type, got ", S(a), " and ", S(b));
  }
  const PrimitiveType t = a.element_type();
  const RngDistribution distribution = AttrsOr<RngAttrs>(inst).distribution;
  if (distribution == RngDistribution::kNormal ? !IsFloat(t) : !(IsFloat(t) || IsInteger(t))) {
    return Invalid("rng ", AV(RngDistributionName(distribution)), " does not support ",
                   TypeName(t));
  }
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  return WithType(*out, t);
}

absl::StatusOr<Shape> InferRngBitGenerator(const Instruction& inst) {
  const Shape& state = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(state, "rng-bit-generator's state"));
  const Shape& declared = inst.shape();
  if (!declared.IsTuple() || declared.tuple_size() != 2 ||
      !Compatible(declared.tuple_shape(0), state) || !declared.tuple_shape(1).IsArray() ||
      !(IsInteger(declared.tuple_shape(1).element_type()) ||
        IsFloat(declared.tuple_shape(1).element_type()))) {
    return Invalid("rng-bit-generator's shape must be (", S(state), ", bits array), got ",
                   S(declared));
  }
  return declared;
}

}  // namespace

absl::StatusOr<Shape> InferNumericShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBatchNormTraining: return InferBatchNorm(inst, {1, 2}, {});
    case Opcode::kBatchNormInference: return InferBatchNorm(inst, {1, 2, 3, 4}, {});
    case Opcode::kBatchNormGrad: return InferBatchNorm(inst, {1, 2, 3}, {4});
    case Opcode::kFft: return InferFft(inst);
    case Opcode::kCholesky: {
      const Shape& a = inst.operand(0)->shape();
      RETURN_IF_ERROR(CheckSquare(a, "cholesky's operand"));
      return a;
    }
    case Opcode::kTriangularSolve: return InferTriangularSolve(inst);
    case Opcode::kRng: return InferRng(inst);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(inst);
    case Opcode::kRngGetAndUpdateState: {
      ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
      return *out;
    }
    default:
      return Invalid("not supported: numeric shape inference for ", Name(inst));
  }
}

}  // namespace hlogym::shape_inference_internal

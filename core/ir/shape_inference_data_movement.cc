// Shape inference of data movement: broadcast, reshape, transpose, slices,
// concatenate, pad, reverse, iota, bitcast and the dimension-size ops.
#include <algorithm>

#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

Shape WithType(const Shape& like, PrimitiveType type) {
  Shape result = like;
  result.set_element_type(type);
  return result;
}

// The single `dimensions={d}` of concatenate and the dimension-size ops.
absl::StatusOr<int64_t> SingleDimension(const Instruction& inst, int64_t rank) {
  if (inst.dimensions().size() != 1) {
    return Invalid(Name(inst), " needs exactly one dimension, got ", List(inst.dimensions()));
  }
  const int64_t d = inst.dimension(0);
  if (d < 0 || d >= rank) {
    return Invalid(Name(inst), " dimension ", d, " is out of range for rank ", rank);
  }
  return d;
}

absl::StatusOr<Shape> InferBroadcast(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "broadcast's operand"));
  const auto dims = inst.dimensions();
  const Shape& declared = inst.shape();
  if (declared.IsTuple() && declared.tuple_size() == 0 && in.IsScalar() && dims.empty()) {
    return in;  // `broadcast(scalar)` with no shape written: XLA infers a scalar
  }
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    return Invalid("broadcast dimensions ", List(dims), " must name one result dimension for each of the ",
                   in.rank(), " operand dimensions of ", S(in));
  }
  RETURN_IF_ERROR(CheckDimensionList(dims, out->rank(), "broadcast dimensions"));
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (!DimsMatch(in.dim(i), out->dim(dims[i]))) {
      return Invalid("broadcast operand dimension ", i, " of ", S(in), " maps to result dimension ",
                     dims[i], " of ", S(*out), " but their sizes differ");
    }
  }
  return WithType(*out, in.element_type());
}

absl::StatusOr<Shape> InferReshape(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "reshape's operand"));
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  const int64_t from = CheckedElementCount(in), to = CheckedElementCount(*out);
  const bool unbounded = std::count(in.dims().begin(), in.dims().end(), kUnboundedSize) +
                             std::count(out->dims().begin(), out->dims().end(), kUnboundedSize) >
                         0;
  if (!unbounded && (from < 0 || from != to)) {
    return Invalid("reshape must keep the element count (expected ", from, " elements as in ",
                   S(in), ", got ", to, " in ", S(*out), ")");
  }
  return WithType(*out, in.element_type());
}

absl::StatusOr<Shape> InferDynamicReshape(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "dynamic-reshape's operand"));
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1 + out->rank()));
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& size = inst.operand(i)->shape();
    if (!size.IsScalar() || size.element_type() != PrimitiveType::kS32) {
      return Invalid("dynamic-reshape's dimension sizes must be s32[], operand ", i, " is ",
                     S(size));
    }
  }
  if (CheckedElementCount(in) != CheckedElementCount(*out)) {
    return Invalid("dynamic-reshape must keep the element count (bounds of ", S(in), " and ",
                   S(*out), " differ)");
  }
  return WithType(*out, in.element_type());
}

absl::StatusOr<Shape> InferTranspose(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "transpose's operand"));
  const auto perm = inst.dimensions();
  if (static_cast<int64_t>(perm.size()) != in.rank()) {
    return Invalid("transpose dimensions ", List(perm), " are not a permutation of the ",
                   in.rank(), " dimensions of ", S(in));
  }
  RETURN_IF_ERROR(CheckDimensionList(perm, in.rank(), "transpose dimensions"));
  std::vector<int64_t> dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) dims[i] = in.dim(perm[i]);
  Shape result = Shape::Array(in.element_type(), std::move(dims));
  for (size_t i = 0; i < perm.size(); ++i) {
    if (in.is_dynamic_dim(perm[i])) result.set_dynamic_dim(static_cast<int64_t>(i), true);
  }
  return result;
}

absl::StatusOr<Shape> InferSlice(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "slice's operand"));
  const SliceAttrs& a = AttrsOr<SliceAttrs>(inst);
  const int64_t rank = in.rank();
  if (static_cast<int64_t>(a.starts.size()) != rank ||
      static_cast<int64_t>(a.limits.size()) != rank ||
      static_cast<int64_t>(a.strides.size()) != rank) {
    return Invalid("slice needs one [start:limit:stride] per dimension of ", S(in), ", got ",
                   a.starts.size());
  }
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t start = a.starts[i], limit = a.limits[i], stride = a.strides[i];
    const int64_t size = in.dim(i);
    if (start < 0 || start > limit || (size != kUnboundedSize && limit > size) || stride <= 0) {
      return Invalid("slice dimension ", i, " [", start, ":", limit, ":", stride,
                     "] is out of bounds for ", S(in),
                     " (needs 0 <= start <= limit <= size and stride > 0)");
    }
    const int64_t extent = limit - start;
    dims[i] = extent / stride + (extent % stride != 0);
  }
  Shape result = Shape::Array(in.element_type(), std::move(dims));
  for (int64_t i = 0; i < rank; ++i) {
    if (in.is_dynamic_dim(i) && result.dim(i) != 1) result.set_dynamic_dim(i, true);
  }
  return result;
}

// Start indices of dynamic-slice and dynamic-update-slice, from operand
// `first` on: one integer scalar per dimension (all of one type), or the
// legacy single rank-1 vector.
absl::Status CheckStartIndices(const Instruction& inst, int64_t first, int64_t rank) {
  const int64_t count = inst.operand_count() - first;
  if (count == 1 && inst.operand(first)->shape().IsArray() &&
      inst.operand(first)->shape().rank() == 1) {
    const Shape& v = inst.operand(first)->shape();
    if (!IsInteger(v.element_type()) || v.dim(0) != rank) {
      return Invalid(Name(inst), "'s start index vector must be an integer array of ", rank,
                     " elements, got ", S(v));
    }
    return absl::OkStatus();
  }
  if (count != rank) {
    return Invalid(Name(inst), " needs one start index per dimension (expected ", rank,
                   ", got ", count, ")");
  }
  for (int64_t i = first; i < inst.operand_count(); ++i) {
    const Shape& index = inst.operand(i)->shape();
    if (!index.IsScalar() || !IsInteger(index.element_type()) ||
        index.element_type() != inst.operand(first)->shape().element_type()) {
      return Invalid(Name(inst), "'s start indices must be integer scalars of one type, operand ",
                     i, " is ", S(index));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDynamicSlice(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "dynamic-slice's operand"));
  RETURN_IF_ERROR(CheckStartIndices(inst, 1, in.rank()));
  const auto& sizes = AttrsOr<DynamicSliceAttrs>(inst).sizes;
  if (static_cast<int64_t>(sizes.size()) != in.rank()) {
    return Invalid("dynamic_slice_sizes ", List(sizes), " must have one size per dimension of ",
                   S(in));
  }
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (sizes[i] < 0 || (in.dim(i) != kUnboundedSize && sizes[i] > in.dim(i))) {
      return Invalid("dynamic_slice_sizes ", List(sizes), ": size ", sizes[i],
                     " does not fit dimension ", i, " of ", S(in));
    }
  }
  Shape result = Shape::Array(in.element_type(), sizes);
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (in.is_dynamic_dim(i) && sizes[i] > 1 && sizes[i] == in.dim(i)) {
      result.set_dynamic_dim(i, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 2));
  const Shape& in = inst.operand(0)->shape();
  const Shape& update = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "dynamic-update-slice's operand"));
  RETURN_IF_ERROR(ExpectArray(update, "dynamic-update-slice's update"));
  RETURN_IF_ERROR(CheckStartIndices(inst, 2, in.rank()));
  if (update.element_type() != in.element_type() || update.rank() != in.rank()) {
    return Invalid("dynamic-update-slice's update ", S(update),
                   " must have the operand's element type and rank (operand ", S(in), ")");
  }
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (in.dim(i) != kUnboundedSize && update.dim(i) > in.dim(i)) {
      return Invalid("dynamic-update-slice's update ", S(update), " does not fit in ", S(in),
                     " along dimension ", i);
    }
  }
  return in;
}

absl::StatusOr<Shape> InferConcatenate(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  const Shape& first = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(first, "a concatenate operand"));
  ASSIGN_OR_RETURN(const int64_t d, SingleDimension(inst, first.rank()));
  Shape result = first;
  int64_t& total = result.mutable_dims()[d];
  for (int64_t k = 1; k < inst.operand_count(); ++k) {
    const Shape& s = inst.operand(k)->shape();
    RETURN_IF_ERROR(ExpectArray(s, "a concatenate operand"));
    bool same = s.rank() == first.rank() && s.element_type() == first.element_type();
    for (int64_t i = 0; same && i < first.rank(); ++i) {
      same = i == d || DimsMatch(s.dim(i), first.dim(i));
    }
    if (!same) {
      return Invalid("concatenate operands must match except in dimension ", d, ", got ",
                     S(first), " and ", S(s));
    }
    if (total == kUnboundedSize || s.dim(d) == kUnboundedSize) {
      total = kUnboundedSize;
    } else if (__builtin_add_overflow(total, s.dim(d), &total)) {
      return Invalid("concatenate result dimension ", d, " overflows");
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (s.is_dynamic_dim(i)) result.set_dynamic_dim(i, true);
    }
  }
  return result;
}

absl::StatusOr<Shape> InferPad(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  const Shape& value = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "pad's operand"));
  if (!value.IsScalar() || value.element_type() != in.element_type()) {
    return Invalid("pad's padding value must be a scalar of the operand's type (expected ",
                   TypeName(in.element_type()), "[], got ", S(value), ")");
  }
  const auto& padding = AttrsOr<PadAttrs>(inst).padding;
  if (static_cast<int64_t>(padding.size()) != in.rank()) {
    return Invalid("padding has ", padding.size(), " dimensions but the operand ", S(in),
                   " has rank ", in.rank());
  }
  Shape result = in;
  for (int64_t i = 0; i < in.rank(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.interior < 0) return Invalid("pad dimension ", i, " has negative interior padding");
    const int64_t d = in.dim(i);
    if (d == kUnboundedSize) continue;
    const __int128 size = __int128{d} + p.low + p.high + __int128{std::max<int64_t>(d - 1, 0)} * p.interior;
    if (size < 0 || size > INT64_MAX) {
      return Invalid("pad dimension ", i, " of ", S(in), " with padding ", p.low, "_", p.high,
                     "_", p.interior, " gives a negative or overflowing size");
    }
    result.mutable_dims()[i] = static_cast<int64_t>(size);
  }
  return result;
}

absl::StatusOr<Shape> InferIota(const Instruction& inst) {
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  if (out->rank() == 0) return Invalid("iota needs an array of rank >= 1, got ", S(*out));
  const int64_t d = inst.iota_dimension();
  if (d < 0 || d >= out->rank()) {
    return Invalid("iota_dimension ", d, " is out of range for ", S(*out));
  }
  return *out;
}

absl::StatusOr<Shape> InferBitcast(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "bitcast's operand"));
  ASSIGN_OR_RETURN(const Shape* out, DeclaredArray(inst));
  // A bitcast reinterprets the buffer: any layout and type, same size.
  const int64_t from = CheckedElementCount(in), to = CheckedElementCount(*out);
  __int128 from_bits = __int128{from} * BitWidth(in.element_type());
  __int128 to_bits = __int128{to} * BitWidth(out->element_type());
  __int128 from_bytes = __int128{from} * ByteWidth(in.element_type());
  __int128 to_bytes = __int128{to} * ByteWidth(out->element_type());
  if (from < 0 || to < 0 || (from_bits != to_bits && from_bytes != to_bytes)) {
    return Invalid("bitcast must keep the buffer size (expected ", static_cast<int64_t>(from_bytes),
                   " bytes as in ", S(in), ", got ", static_cast<int64_t>(to_bytes), " in ",
                   S(*out), ")");
  }
  return *out;
}

}  // namespace

absl::StatusOr<Shape> InferDataMovementShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBroadcast: return InferBroadcast(inst);
    case Opcode::kReshape: return InferReshape(inst);
    case Opcode::kDynamicReshape: return InferDynamicReshape(inst);
    case Opcode::kTranspose: return InferTranspose(inst);
    case Opcode::kSlice: return InferSlice(inst);
    case Opcode::kDynamicSlice: return InferDynamicSlice(inst);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(inst);
    case Opcode::kConcatenate: return InferConcatenate(inst);
    case Opcode::kPad: return InferPad(inst);
    case Opcode::kIota: return InferIota(inst);
    case Opcode::kBitcast: return InferBitcast(inst);
    case Opcode::kReverse: {
      const Shape& in = inst.operand(0)->shape();
      RETURN_IF_ERROR(ExpectArray(in, "reverse's operand"));
      RETURN_IF_ERROR(CheckDimensionList(inst.dimensions(), in.rank(), "reverse dimensions"));
      return in;
    }
    case Opcode::kGetDimensionSize: {
      const Shape& in = inst.operand(0)->shape();
      RETURN_IF_ERROR(ExpectArray(in, "get-dimension-size's operand"));
      RETURN_IF_ERROR(SingleDimension(inst, in.rank()).status());
      return Shape::Scalar(PrimitiveType::kS32);
    }
    case Opcode::kSetDimensionSize: {
      const Shape& in = inst.operand(0)->shape();
      const Shape& size = inst.operand(1)->shape();
      RETURN_IF_ERROR(ExpectArray(in, "set-dimension-size's operand"));
      if (!size.IsScalar() || size.element_type() != PrimitiveType::kS32) {
        return Invalid("set-dimension-size's size must be s32[], got ", S(size));
      }
      ASSIGN_OR_RETURN(const int64_t d, SingleDimension(inst, in.rank()));
      Shape result = in;
      result.set_dynamic_dim(d, true);
      return result;
    }
    default:
      return Invalid("not supported: data-movement shape inference for ", Name(inst));
  }
}

}  // namespace hlogym::shape_inference_internal

// Shape inference of contractions: dot, ragged-dot and convolution. Their
// result element type may differ from the operands' (XLA's
// preferred_element_type): the declared type is taken when it is a legal
// accumulation type for the operands.
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t x) {
  return std::find(values.begin(), values.end(), x) != values.end();
}

// The wider of two operand types, as XLA's HigherPrecisionElementType.
PrimitiveType Higher(PrimitiveType a, PrimitiveType b) {
  if (a == b) return a;
  if (IsComplex(a) != IsComplex(b)) return IsComplex(a) ? a : b;
  if (IsFloat(a) != IsFloat(b)) return IsFloat(a) ? a : b;
  return BitWidth(a) >= BitWidth(b) ? a : b;
}

// The result element type of a contraction of `lhs` and `rhs` operands.
absl::StatusOr<PrimitiveType> ContractionType(const Instruction& inst, PrimitiveType lhs,
                                              PrimitiveType rhs) {
  if (IsComplex(lhs) != IsComplex(rhs)) {
    return Invalid(Name(inst), " cannot mix complex and real operands (", TypeName(lhs), " and ",
                   TypeName(rhs), ")");
  }
  const PrimitiveType natural = Higher(lhs, rhs);
  const Shape& declared = inst.shape();
  if (!declared.IsArray() || declared.element_type() == natural) return natural;
  const PrimitiveType preferred = declared.element_type();
  // XLA's MaybeUpcast: any float result from floats; integers may only widen.
  if (IsComplex(preferred) != IsComplex(natural) ||
      (!IsFloat(natural) && !IsComplex(natural) && BitWidth(preferred) < BitWidth(natural))) {
    return Invalid(Name(inst), " cannot produce ", TypeName(preferred), " from ", TypeName(lhs),
                   " and ", TypeName(rhs), " operands");
  }
  return preferred;
}

absl::Status CheckPrecisionCount(const Instruction& inst, size_t count) {
  if (count == 0 || count == 2) return absl::OkStatus();
  return Invalid(Name(inst), " needs operand_precision for both operands or none, got ", count);
}

// Validates dot dimension numbers and returns batch + lhs free + rhs free
// dimensions; `rhs_skip` lists further rhs dims left out (ragged groups).
absl::StatusOr<std::vector<int64_t>> DotDims(const Shape& lhs, const Shape& rhs,
                                             const DotDimensions& d,
                                             const std::vector<int64_t>& rhs_skip) {
  if (d.lhs_batch.size() != d.rhs_batch.size()) {
    return Invalid("dot needs as many lhs as rhs batch dimensions, got ", List(d.lhs_batch),
                   " and ", List(d.rhs_batch));
  }
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Invalid("dot needs as many lhs as rhs contracting dimensions, got ",
                   List(d.lhs_contracting), " and ", List(d.rhs_contracting));
  }
  std::vector<int64_t> lhs_used = d.lhs_batch, rhs_used = d.rhs_batch;
  lhs_used.insert(lhs_used.end(), d.lhs_contracting.begin(), d.lhs_contracting.end());
  rhs_used.insert(rhs_used.end(), d.rhs_contracting.begin(), d.rhs_contracting.end());
  RETURN_IF_ERROR(CheckDimensionList(lhs_used, lhs.rank(), "dot lhs batch and contracting dims"));
  RETURN_IF_ERROR(CheckDimensionList(rhs_used, rhs.rank(), "dot rhs batch and contracting dims"));
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (!DimsMatch(lhs.dim(d.lhs_contracting[i]), rhs.dim(d.rhs_contracting[i]))) {
      return Invalid("dot contracting dimensions differ in size: lhs dimension ",
                     d.lhs_contracting[i], " of ", S(lhs), " and rhs dimension ",
                     d.rhs_contracting[i], " of ", S(rhs));
    }
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (!DimsMatch(lhs.dim(d.lhs_batch[i]), rhs.dim(d.rhs_batch[i]))) {
      return Invalid("dot batch dimensions differ in size: lhs dimension ", d.lhs_batch[i], " of ",
                     S(lhs), " and rhs dimension ", d.rhs_batch[i], " of ", S(rhs));
    }
  }
  std::vector<int64_t> dims;
  dims.reserve(lhs.rank() + rhs.rank());
  for (int64_t b : d.lhs_batch) dims.push_back(lhs.dim(b));
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (!Contains(lhs_used, i)) dims.push_back(lhs.dim(i));
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (!Contains(rhs_used, i) && !Contains(rhs_skip, i)) dims.push_back(rhs.dim(i));
  }
  return dims;
}

absl::StatusOr<Shape> InferDot(const Instruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(lhs, "dot's lhs"));
  RETURN_IF_ERROR(ExpectArray(rhs, "dot's rhs"));
  const DotAttrs& a = AttrsOr<DotAttrs>(inst);
  RETURN_IF_ERROR(CheckPrecisionCount(inst, a.precision.size()));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, DotDims(lhs, rhs, a.dims, {}));
  ASSIGN_OR_RETURN(PrimitiveType type, ContractionType(inst, lhs.element_type(), rhs.element_type()));
  return Shape::Array(type, std::move(dims));
}

// A raw `{1,2}` list attribute; nullopt when absent or malformed.
std::optional<std::vector<int64_t>> RawList(const Instruction& inst, std::string_view name) {
  const std::string* text = inst.FindRawAttribute(name);
  if (text == nullptr || text->size() < 2 || text->front() != '{' || text->back() != '}') {
    return std::nullopt;
  }
  std::vector<int64_t> values;
  const absl::string_view body(text->data() + 1, text->size() - 2);
  if (body.empty()) return values;
  for (absl::string_view piece : absl::StrSplit(body, ',')) {
    int64_t v;
    if (!absl::SimpleAtoi(piece, &v)) return std::nullopt;
    values.push_back(v);
  }
  return values;
}

// ragged-dot(lhs, rhs, group_sizes): rhs has a group dimension that the
// result drops; a ragged lhs contracting dimension adds the group count as a
// leading result dimension (XLA's RaggedDot modes).
absl::StatusOr<Shape> InferRaggedDot(const Instruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& groups = inst.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(lhs, "ragged-dot's lhs"));
  RETURN_IF_ERROR(ExpectArray(rhs, "ragged-dot's rhs"));
  RETURN_IF_ERROR(ExpectArray(groups, "ragged-dot's group sizes"));
  if (!IsInteger(groups.element_type()) || groups.rank() < 1) {
    return Invalid("ragged-dot's group sizes must be an integer array, got ", S(groups));
  }
  const auto ragged = RawList(inst, "lhs_ragged_dims");
  const auto group_dims = RawList(inst, "rhs_group_dims");
  if (!ragged || ragged->size() != 1 || !group_dims || group_dims->size() > 1) {
    return Invalid("not supported: ragged-dot without one lhs_ragged_dims and at most one ",
                   "rhs_group_dims");
  }
  const DotAttrs& a = AttrsOr<DotAttrs>(inst);
  RETURN_IF_ERROR(CheckDimensionList(*ragged, lhs.rank(), "lhs_ragged_dims"));
  RETURN_IF_ERROR(CheckDimensionList(*group_dims, rhs.rank(), "rhs_group_dims"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, DotDims(lhs, rhs, a.dims, *group_dims));
  const int64_t group_count = groups.dim(groups.rank() - 1);
  if (!group_dims->empty() && !DimsMatch(rhs.dim((*group_dims)[0]), group_count)) {
    return Invalid("ragged-dot's rhs group dimension of ", S(rhs), " must have ", group_count,
                   " groups as ", S(groups));
  }
  if (Contains(a.dims.lhs_contracting, (*ragged)[0])) dims.insert(dims.begin(), group_count);
  ASSIGN_OR_RETURN(PrimitiveType type, ContractionType(inst, lhs.element_type(), rhs.element_type()));
  return Shape::Array(type, std::move(dims));
}

// Each of batch, feature and spatial roles names every dimension once.
absl::Status CheckRoles(int64_t a, int64_t b, const std::vector<int64_t>& spatial, int64_t rank,
                        std::string_view what) {
  std::vector<int64_t> all = {a, b};
  all.insert(all.end(), spatial.begin(), spatial.end());
  if (static_cast<int64_t>(all.size()) != rank) {
    return Invalid("convolution ", AV(what), " dimension labels name ", all.size(),
                   " dimensions but the rank is ", rank);
  }
  return CheckDimensionList(all, rank, absl::StrCat("convolution ", AV(what), " dimensions"));
}

absl::StatusOr<Shape> InferConvolution(const Instruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(lhs, "convolution's input"));
  RETURN_IF_ERROR(ExpectArray(rhs, "convolution's kernel"));
  const ConvolutionAttrs& a = AttrsOr<ConvolutionAttrs>(inst);
  const ConvolutionDimensions& d = a.dims;
  RETURN_IF_ERROR(CheckPrecisionCount(inst, a.precision.size()));
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc <= 0 || bgc <= 0 || (fgc > 1 && bgc > 1)) {
    return Invalid("convolution needs positive feature_group_count and batch_group_count, not ",
                   "both above 1 (got ", fgc, " and ", bgc, ")");
  }
  const int64_t spatial = static_cast<int64_t>(d.input_spatial.size());
  if (d.kernel_spatial.size() != d.input_spatial.size() ||
      d.output_spatial.size() != d.input_spatial.size() ||
      static_cast<int64_t>(a.window.size()) != spatial) {
    return Invalid("convolution needs ", spatial, " spatial dimensions in the kernel, output and ",
                   "window, got ", d.kernel_spatial.size(), ", ", d.output_spatial.size(), " and ",
                   a.window.size());
  }
  RETURN_IF_ERROR(CheckRoles(d.input_batch, d.input_feature, d.input_spatial, lhs.rank(), "input"));
  RETURN_IF_ERROR(CheckRoles(d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial,
                             rhs.rank(), "kernel"));
  RETURN_IF_ERROR(CheckRoles(d.output_batch, d.output_feature, d.output_spatial, spatial + 2,
                             "output"));
  const int64_t input_features = lhs.dim(d.input_feature);
  const int64_t input_batch = lhs.dim(d.input_batch);
  const int64_t kernel_input_features = rhs.dim(d.kernel_input_feature);
  const int64_t kernel_output_features = rhs.dim(d.kernel_output_feature);
  if (input_features % fgc != 0 || input_features / fgc != kernel_input_features) {
    return Invalid("convolution input features (", input_features, " in ", S(lhs),
                   ") divided by feature_group_count ", fgc, " must equal the kernel's input ",
                   "features (", kernel_input_features, " in ", S(rhs), ")");
  }
  if (kernel_output_features % fgc != 0 || kernel_output_features % bgc != 0) {
    return Invalid("convolution kernel output features (", kernel_output_features,
                   ") must be divisible by the group counts (", fgc, ", ", bgc, ")");
  }
  if (input_batch % bgc != 0) {
    return Invalid("convolution input batch (", input_batch, ") must be divisible by ",
                   "batch_group_count ", bgc);
  }
  std::vector<int64_t> input_spatial(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    input_spatial[i] = lhs.dim(d.input_spatial[i]);
    if (rhs.dim(d.kernel_spatial[i]) != a.window[i].size) {
      return Invalid("convolution window size ", a.window[i].size, " in spatial dimension ", i,
                     " does not match the kernel ", S(rhs));
    }
  }
  ASSIGN_OR_RETURN(PrimitiveType type, ContractionType(inst, lhs.element_type(), rhs.element_type()));
  ASSIGN_OR_RETURN(Shape windowed,
                   WindowOutputShape(Shape::Array(type, std::move(input_spatial)), a.window, type));
  std::vector<int64_t> dims(spatial + 2);
  dims[d.output_batch] = input_batch / bgc;
  dims[d.output_feature] = kernel_output_features;
  for (int64_t i = 0; i < spatial; ++i) dims[d.output_spatial[i]] = windowed.dim(i);
  return Shape::Array(type, std::move(dims));
}

}  // namespace

absl::StatusOr<Shape> InferContractionShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDot: return InferDot(inst);
    case Opcode::kRaggedDot: return InferRaggedDot(inst);
    default: return InferConvolution(inst);
  }
}

}  // namespace hlogym::shape_inference_internal

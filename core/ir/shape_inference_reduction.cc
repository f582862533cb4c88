// Shape inference of reductions and ops with a scalar computation applied
// along dimensions: reduce, reduce-window, select-and-scatter, sort, topk and
// scan. Their computations' signatures are checked here too.
#include <algorithm>

#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

// n results of a reduction: an array when the reducer returns a scalar, else
// a tuple (a variadic reduce, or a reducer returning a 1-tuple).
Shape ReductionResult(const Computation& reducer, std::vector<Shape> results) {
  if (results.size() == 1 && reducer.root()->shape().IsArray()) return std::move(results[0]);
  return Shape::Tuple(std::move(results));
}

// Inputs 0..n-1 are arrays of the same dimensions; returns their types.
absl::StatusOr<std::vector<PrimitiveType>> InputTypes(const Instruction& inst, int64_t n) {
  std::vector<PrimitiveType> types;
  types.reserve(n);
  const Shape& first = inst.operand(0)->shape();
  for (int64_t k = 0; k < n; ++k) {
    const Shape& s = inst.operand(k)->shape();
    RETURN_IF_ERROR(ExpectArrayOperand(inst, k));
    if (!SameDims(s, first)) {
      return Invalid(Name(inst), " inputs must have the same dimensions, got ", S(first), " and ",
                     S(s));
    }
    types.push_back(s.element_type());
  }
  return types;
}

absl::StatusOr<int64_t> HalfOperands(const Instruction& inst) {
  if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0) {
    return Invalid(Name(inst), " takes N inputs and N init values, got ", inst.operand_count(),
                   " operands");
  }
  return inst.operand_count() / 2;
}

std::vector<const Shape*> InitShapes(const Instruction& inst, int64_t n) {
  std::vector<const Shape*> inits(n);
  for (int64_t k = 0; k < n; ++k) inits[k] = &inst.operand(n + k)->shape();
  return inits;
}

absl::StatusOr<Shape> InferReduce(const Instruction& inst) {
  ASSIGN_OR_RETURN(const int64_t n, HalfOperands(inst));
  ASSIGN_OR_RETURN(const Computation* reducer, Callee(inst, 0, "to_apply"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> types, InputTypes(inst, n));
  const Shape& in = inst.operand(0)->shape();
  const auto reduced = inst.dimensions();
  RETURN_IF_ERROR(CheckDimensionList(reduced, in.rank(), "reduce dimensions"));
  RETURN_IF_ERROR(CheckReducer(*reducer, InitShapes(inst, n), types));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  dims.reserve(in.rank());
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (std::find(reduced.begin(), reduced.end(), i) != reduced.end()) continue;
    dims.push_back(in.dim(i));
    dynamic.push_back(in.is_dynamic_dim(i));
  }
  std::vector<Shape> results;
  results.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    results.push_back(Shape::Array(ReducerResultType(*reducer, k), dims));
    for (size_t i = 0; i < dynamic.size(); ++i) {
      if (dynamic[i]) results.back().set_dynamic_dim(static_cast<int64_t>(i), true);
    }
  }
  return ReductionResult(*reducer, std::move(results));
}

absl::StatusOr<Shape> InferReduceWindow(const Instruction& inst) {
  ASSIGN_OR_RETURN(const int64_t n, HalfOperands(inst));
  ASSIGN_OR_RETURN(const Computation* reducer, Callee(inst, 0, "to_apply"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> types, InputTypes(inst, n));
  std::vector<const Shape*> inits = InitShapes(inst, n);
  RETURN_IF_ERROR(CheckReducer(*reducer, inits, types));
  const Window& window = AttrsOr<WindowAttrs>(inst).window;
  std::vector<Shape> results;
  results.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    ASSIGN_OR_RETURN(Shape s, WindowOutputShape(inst.operand(k)->shape(), window,
                                                inits[k]->element_type()));
    results.push_back(std::move(s));
  }
  return ReductionResult(*reducer, std::move(results));
}

absl::StatusOr<Shape> InferSelectAndScatter(const Instruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  RETURN_IF_ERROR(ExpectArray(operand, "select-and-scatter's operand"));
  RETURN_IF_ERROR(ExpectArray(source, "select-and-scatter's source"));
  ASSIGN_OR_RETURN(const Computation* select, Callee(inst, 0, "select"));
  ASSIGN_OR_RETURN(const Computation* scatter, Callee(inst, 1, "scatter"));
  const Shape element = Shape::Scalar(operand.element_type());
  if (select->parameter_count() != 2 || !Compatible(select->parameter(0)->shape(), element) ||
      !Compatible(select->parameter(1)->shape(), element)) {
    return Invalid("select computation `", select->name(), "` must take two ", S(element),
                   " parameters");
  }
  const Shape& selected = select->root()->shape();
  if (!selected.IsScalar() || selected.element_type() != PrimitiveType::kPred) {
    return Invalid("select computation `", select->name(), "` must return pred[], got ",
                   S(selected));
  }
  const Shape* init_ptr = &init;
  const PrimitiveType source_type = source.element_type();
  RETURN_IF_ERROR(CheckReducer(*scatter, absl::MakeConstSpan(&init_ptr, 1),
                               absl::MakeConstSpan(&source_type, 1)));
  ASSIGN_OR_RETURN(Shape windowed, WindowOutputShape(operand, AttrsOr<WindowAttrs>(inst).window,
                                                     operand.element_type()));
  if (!Compatible(windowed, source)) {
    return Invalid("select-and-scatter's source must have the windowed operand's shape (expected ",
                   S(windowed), ", got ", S(source), ")");
  }
  return operand;
}

absl::StatusOr<Shape> InferSort(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  const int64_t n = inst.operand_count();
  ASSIGN_OR_RETURN(const Computation* comparator, Callee(inst, 0, "comparator"));
  ASSIGN_OR_RETURN(std::vector<PrimitiveType> types, InputTypes(inst, n));
  const Shape& keys = inst.operand(0)->shape();
  if (inst.dimensions().size() != 1 || inst.dimension(0) < 0 ||
      inst.dimension(0) >= std::max<int64_t>(keys.rank(), 1)) {
    return Invalid("sort needs one dimension in range for ", S(keys), ", got ",
                   List(inst.dimensions()));
  }
  if (comparator->parameter_count() != 2 * n) {
    return Invalid("comparator `", comparator->name(), "` must take ", 2 * n,
                   " parameters (two per operand), got ", comparator->parameter_count());
  }
  for (int64_t i = 0; i < 2 * n; ++i) {
    const Shape& p = comparator->parameter(i)->shape();
    if (!p.IsScalar() || p.element_type() != types[i / 2]) {
      return Invalid("comparator `", comparator->name(), "` parameter ", i, " must be ",
                     TypeName(types[i / 2]), "[] like operand ", i / 2, ", got ", S(p));
    }
  }
  const Shape& result = comparator->root()->shape();
  if (!result.IsScalar() || result.element_type() != PrimitiveType::kPred) {
    return Invalid("comparator `", comparator->name(), "` must return pred[], got ", S(result));
  }
  if (n == 1) return keys;
  std::vector<Shape> results;
  results.reserve(n);
  for (const Instruction* o : inst.operands()) results.push_back(o->shape());
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferTopK(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectArray(in, "topk's operand"));
  if (in.rank() == 0) return Invalid("topk needs an operand of rank >= 1, got ", S(in));
  const int64_t k = AttrsOr<TopKAttrs>(inst).k;
  const int64_t last = in.dim(in.rank() - 1);
  if (k < 0 || (last != kUnboundedSize && k > last)) {
    return Invalid("topk's k=", k, " must be in [0, ", last, "] for ", S(in));
  }
  Shape values = in;
  values.mutable_dims().back() = k;
  values.set_dynamic_dim(in.rank() - 1, false);
  Shape indices = values;
  indices.set_element_type(PrimitiveType::kS32);
  return Shape::Tuple({std::move(values), std::move(indices)});
}

// scan(inputs..., carries...): the body maps (input slices..., carries...)
// to (output slices..., carries...); outputs stack along the scan dimension.
absl::StatusOr<Shape> InferScan(const Instruction& inst) {
  const int64_t carries = AttrsOr<ScanAttrs>(inst).num_carries;
  const int64_t inputs = inst.operand_count() - carries;
  if (carries < 0 || inputs < 1) {
    return Invalid("scan needs at least one input besides its ", carries, " carries, got ",
                   inst.operand_count(), " operands");
  }
  ASSIGN_OR_RETURN(const Computation* body, Callee(inst, 0, "to_apply"));
  if (inst.dimensions().size() != 1) {
    return Invalid("scan needs exactly one dimension, got ", List(inst.dimensions()));
  }
  const int64_t dim = inst.dimension(0);
  const Shape& first = inst.operand(0)->shape();
  if (body->parameter_count() != inst.operand_count()) {
    return Invalid("scan body `", body->name(), "` must take ", inst.operand_count(),
                   " parameters, got ", body->parameter_count());
  }
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& s = inst.operand(k)->shape();
    Shape expected = s;
    if (k < inputs) {
      RETURN_IF_ERROR(ExpectArray(s, "a scan input"));
      // Input 0 is checked first, so first.dim(dim) is valid afterwards.
      if (dim < 0 || dim >= s.rank() || s.dim(dim) != first.dim(dim)) {
        return Invalid("scan dimension ", dim, " must exist and have one length in every input, ",
                       "got ", S(first), " and ", S(s));
      }
      expected = Shape::Array(s.element_type(), {});
      for (int64_t i = 0; i < s.rank(); ++i) {
        if (i != dim) expected.mutable_dims().push_back(s.dim(i));
      }
    }
    const Shape& p = body->parameter(k)->shape();
    if (!Compatible(p, expected)) {
      return Invalid("scan body `", body->name(), "` parameter ", k, " must be ", S(expected),
                     ", got ", S(p));
    }
  }
  const Shape& root = body->root()->shape();
  if (!root.IsTuple() || root.tuple_size() < carries) {
    return Invalid("scan body `", body->name(), "` must return a tuple of outputs then ", carries,
                   " carries, got ", S(root));
  }
  const int64_t outputs = root.tuple_size() - carries;
  std::vector<Shape> results;
  results.reserve(root.tuple_size());
  for (int64_t k = 0; k < outputs; ++k) {
    const Shape& slice = root.tuple_shape(k);
    if (!slice.IsArray() || dim > slice.rank()) {
      return Invalid("scan body output ", k, " ", S(slice), " cannot be stacked along dimension ",
                     dim);
    }
    std::vector<int64_t> dims(slice.dims().begin(), slice.dims().end());
    dims.insert(dims.begin() + dim, first.dim(dim));
    results.push_back(Shape::Array(slice.element_type(), std::move(dims)));
  }
  for (int64_t k = 0; k < carries; ++k) {
    const Shape& carry = inst.operand(inputs + k)->shape();
    if (!Compatible(root.tuple_shape(outputs + k), carry)) {
      return Invalid("scan body `", body->name(), "` carry result ", k, " must be ", S(carry),
                     ", got ", S(root.tuple_shape(outputs + k)));
    }
    results.push_back(carry);
  }
  return Shape::Tuple(std::move(results));
}

}  // namespace

absl::StatusOr<Shape> InferReductionShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReduce: return InferReduce(inst);
    case Opcode::kReduceWindow: return InferReduceWindow(inst);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(inst);
    case Opcode::kSort: return InferSort(inst);
    case Opcode::kTopK: return InferTopK(inst);
    default: return InferScan(inst);
  }
}

}  // namespace hlogym::shape_inference_internal

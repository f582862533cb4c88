// Shape inference of gather and (variadic) scatter, batching dimensions
// included, following XLA's dimension-number rules.
#include <algorithm>

#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t x) {
  return std::find(values.begin(), values.end(), x) != values.end();
}

// A sorted, duplicate-free list of dimensions in [0, bound).
absl::Status CheckSortedList(const std::vector<int64_t>& values, int64_t bound,
                             std::string_view what) {
  RETURN_IF_ERROR(CheckDimensionList(values, bound, what));
  if (!std::is_sorted(values.begin(), values.end())) {
    return Invalid(AV(what), " ", List(values), " must be sorted");
  }
  return absl::OkStatus();
}

absl::Status CheckDisjoint(const std::vector<int64_t>& a, std::string_view a_name,
                           const std::vector<int64_t>& b, std::string_view b_name) {
  for (int64_t x : a) {
    if (Contains(b, x)) {
      return Invalid("dimension ", x, " is in both ", AV(a_name), " and ", AV(b_name));
    }
  }
  return absl::OkStatus();
}

// The indices' dimensions with a trailing 1 when index_vector_dim == rank
// (each index is then a scalar).
absl::StatusOr<std::vector<int64_t>> ExpandedIndexDims(const Shape& indices,
                                                       int64_t index_vector_dim) {
  RETURN_IF_ERROR(ExpectArray(indices, "the indices"));
  if (!IsInteger(indices.element_type())) {
    return Invalid("the indices must be integers, got ", S(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return Invalid("index_vector_dim ", index_vector_dim, " is out of range [0, ",
                   indices.rank(), "] for indices ", S(indices));
  }
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end());
  if (index_vector_dim == indices.rank()) dims.push_back(1);
  return dims;
}

absl::Status CheckIndexBatchingDims(const std::vector<int64_t>& index_batching,
                                    const std::vector<int64_t>& operand_batching,
                                    int64_t indices_rank, int64_t index_vector_dim,
                                    std::string_view what) {
  RETURN_IF_ERROR(CheckDimensionList(index_batching, indices_rank, what));
  if (Contains(index_batching, index_vector_dim)) {
    return Invalid(AV(what), " ", List(index_batching), " must not contain index_vector_dim ",
                   index_vector_dim);
  }
  if (index_batching.size() != operand_batching.size()) {
    return Invalid(AV(what), " ", List(index_batching), " must pair up with the operand's ",
                   List(operand_batching));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferGather(const Instruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectArray(operand, "gather's operand"));
  const GatherAttrs& a = AttrsOr<GatherAttrs>(inst);
  const GatherDimensions& d = a.dims;
  ASSIGN_OR_RETURN(std::vector<int64_t> expanded, ExpandedIndexDims(indices, d.index_vector_dim));
  const int64_t batch_rank = static_cast<int64_t>(expanded.size()) - 1;
  const int64_t rank = static_cast<int64_t>(d.offset_dims.size()) + batch_rank;
  RETURN_IF_ERROR(CheckSortedList(d.offset_dims, rank, "offset_dims"));
  RETURN_IF_ERROR(CheckSortedList(d.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims"));
  RETURN_IF_ERROR(CheckSortedList(d.operand_batching_dims, operand.rank(), "operand_batching_dims"));
  RETURN_IF_ERROR(CheckDisjoint(d.collapsed_slice_dims, "collapsed_slice_dims",
                                d.operand_batching_dims, "operand_batching_dims"));
  RETURN_IF_ERROR(CheckIndexBatchingDims(d.start_indices_batching_dims, d.operand_batching_dims,
                                         indices.rank(), d.index_vector_dim,
                                         "start_indices_batching_dims"));
  RETURN_IF_ERROR(CheckDimensionList(d.start_index_map, operand.rank(), "start_index_map"));
  RETURN_IF_ERROR(CheckDisjoint(d.start_index_map, "start_index_map", d.operand_batching_dims,
                                "operand_batching_dims"));
  if (static_cast<int64_t>(d.start_index_map.size()) != expanded[d.index_vector_dim]) {
    return Invalid("start_index_map ", List(d.start_index_map), " must have one entry per index ",
                   "component (", expanded[d.index_vector_dim], " in ", S(indices), ")");
  }
  const auto& sizes = a.slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return Invalid("slice_sizes ", List(sizes), " must have one size per dimension of ",
                   S(operand));
  }
  if (d.offset_dims.size() + d.collapsed_slice_dims.size() + d.operand_batching_dims.size() !=
      sizes.size()) {
    return Invalid("every operand dimension must be an offset, collapsed or batching dimension ",
                   "(offset_dims ", List(d.offset_dims), ", collapsed_slice_dims ",
                   List(d.collapsed_slice_dims), ", operand_batching_dims ",
                   List(d.operand_batching_dims), ", operand ", S(operand), ")");
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (sizes[i] < 0 || (operand.dim(i) != kUnboundedSize && sizes[i] > operand.dim(i))) {
      return Invalid("slice_sizes ", List(sizes), ": size ", sizes[i], " does not fit dimension ",
                     i, " of ", S(operand));
    }
    if (sizes[i] > 1 && (Contains(d.collapsed_slice_dims, i) || Contains(d.operand_batching_dims, i))) {
      return Invalid("slice_sizes ", List(sizes), ": collapsed or batching dimension ", i,
                     " must have size 0 or 1");
    }
  }
  std::vector<int64_t> dims(rank);
  int64_t next_operand_dim = 0, next_index_dim = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::binary_search(d.offset_dims.begin(), d.offset_dims.end(), i)) {
      while (Contains(d.collapsed_slice_dims, next_operand_dim) ||
             Contains(d.operand_batching_dims, next_operand_dim)) {
        ++next_operand_dim;
      }
      dims[i] = sizes[next_operand_dim++];
    } else {
      if (next_index_dim == d.index_vector_dim) ++next_index_dim;
      dims[i] = expanded[next_index_dim++];
    }
  }
  return Shape::Array(operand.element_type(), std::move(dims));
}

// One operand/update pair of a scatter against the shared index dimensions.
absl::Status CheckScatterPair(const Shape& operand, const Shape& updates,
                              const std::vector<int64_t>& expanded, const ScatterDimensions& d) {
  RETURN_IF_ERROR(ExpectArray(operand, "a scatter operand"));
  RETURN_IF_ERROR(ExpectArray(updates, "a scatter update"));
  const int64_t expected_rank = static_cast<int64_t>(expanded.size()) - 1 +
                                static_cast<int64_t>(d.update_window_dims.size());
  if (updates.rank() != expected_rank) {
    return Invalid("scatter updates ", S(updates), " must have rank ", expected_rank);
  }
  RETURN_IF_ERROR(CheckSortedList(d.update_window_dims, updates.rank(), "update_window_dims"));
  RETURN_IF_ERROR(CheckSortedList(d.inserted_window_dims, operand.rank(), "inserted_window_dims"));
  RETURN_IF_ERROR(CheckSortedList(d.input_batching_dims, operand.rank(), "input_batching_dims"));
  RETURN_IF_ERROR(CheckDisjoint(d.inserted_window_dims, "inserted_window_dims",
                                d.input_batching_dims, "input_batching_dims"));
  if (d.update_window_dims.size() + d.inserted_window_dims.size() + d.input_batching_dims.size() !=
      static_cast<size_t>(operand.rank())) {
    return Invalid("every operand dimension must be an update window, inserted or batching ",
                   "dimension (update_window_dims ", List(d.update_window_dims),
                   ", inserted_window_dims ", List(d.inserted_window_dims),
                   ", input_batching_dims ", List(d.input_batching_dims), ", operand ", S(operand),
                   ")");
  }
  RETURN_IF_ERROR(CheckDimensionList(d.scatter_dims_to_operand_dims, operand.rank(),
                                     "scatter_dims_to_operand_dims"));
  RETURN_IF_ERROR(CheckDisjoint(d.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims",
                                d.input_batching_dims, "input_batching_dims"));
  if (static_cast<int64_t>(d.scatter_dims_to_operand_dims.size()) != expanded[d.index_vector_dim]) {
    return Invalid("scatter_dims_to_operand_dims ", List(d.scatter_dims_to_operand_dims),
                   " must have one entry per index component (", expanded[d.index_vector_dim], ")");
  }
  // Window dimensions of the update fit in the operand's remaining dims.
  int64_t operand_dim = 0;
  for (int64_t w : d.update_window_dims) {
    while (Contains(d.inserted_window_dims, operand_dim) ||
           Contains(d.input_batching_dims, operand_dim)) {
      ++operand_dim;
    }
    const int64_t bound = operand.dim(operand_dim++);
    if (bound != kUnboundedSize && updates.dim(w) > bound) {
      return Invalid("scatter update window dimension ", w, " of ", S(updates),
                     " exceeds the operand ", S(operand));
    }
  }
  // The other update dimensions follow the indices' batch dimensions.
  int64_t index_dim = 0;
  for (int64_t i = 0; i < updates.rank(); ++i) {
    if (std::binary_search(d.update_window_dims.begin(), d.update_window_dims.end(), i)) continue;
    if (index_dim == d.index_vector_dim) ++index_dim;
    if (!DimsMatch(updates.dim(i), expanded[index_dim])) {
      return Invalid("scatter update dimension ", i, " of ", S(updates), " must match indices ",
                     "dimension ", index_dim, " (", expanded[index_dim], ")");
    }
    ++index_dim;
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferScatter(const Instruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (inst.operand_count() < 3 || inst.operand_count() % 2 == 0) {
    return Invalid("scatter takes N operands, the indices and N updates (an odd count >= 3), got ",
                   inst.operand_count());
  }
  ASSIGN_OR_RETURN(const Computation* reducer, Callee(inst, 0, "to_apply"));
  const ScatterDimensions& d = AttrsOr<ScatterAttrs>(inst).dims;
  const Shape& indices = inst.operand(n)->shape();
  ASSIGN_OR_RETURN(std::vector<int64_t> expanded, ExpandedIndexDims(indices, d.index_vector_dim));
  RETURN_IF_ERROR(CheckIndexBatchingDims(d.scatter_indices_batching_dims, d.input_batching_dims,
                                         indices.rank(), d.index_vector_dim,
                                         "scatter_indices_batching_dims"));
  std::vector<Shape> inits;
  std::vector<const Shape*> init_ptrs;
  std::vector<PrimitiveType> update_types;
  inits.reserve(n);
  for (int64_t k = 0; k < n; ++k) {
    const Shape& operand = inst.operand(k)->shape();
    const Shape& updates = inst.operand(n + 1 + k)->shape();
    RETURN_IF_ERROR(CheckScatterPair(operand, updates, expanded, d));
    if (k > 0 && !SameDims(operand, inst.operand(0)->shape())) {
      return Invalid("scatter operands must have the same dimensions, got ",
                     S(inst.operand(0)->shape()), " and ", S(operand));
    }
    inits.push_back(Shape::Scalar(operand.element_type()));
    update_types.push_back(updates.element_type());
  }
  for (const Shape& s : inits) init_ptrs.push_back(&s);
  RETURN_IF_ERROR(CheckReducer(*reducer, init_ptrs, update_types));
  if (n == 1) return inst.operand(0)->shape();
  std::vector<Shape> results;
  results.reserve(n);
  for (int64_t k = 0; k < n; ++k) results.push_back(inst.operand(k)->shape());
  return Shape::Tuple(std::move(results));
}

}  // namespace

absl::StatusOr<Shape> InferGatherScatterShape(const Instruction& inst) {
  if (inst.opcode() == Opcode::kGather) return InferGather(inst);
  return InferScatter(inst);
}

}  // namespace hlogym::shape_inference_internal

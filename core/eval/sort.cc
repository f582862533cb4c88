// sort (multi-operand, custom comparator, always stable so results are
// deterministic) and topk (largest or smallest k, ties to the lower index).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/eval/float_ops.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

// Calls `body(offsets)` for every 1-D line along `axis`, with the linear
// offsets of its elements.
template <typename Body>
void ForEachLine(const Shape& shape, int64_t axis, Body body) {
  const std::vector<int64_t> strides = Strides(shape.dims());
  std::vector<int64_t> outer_dims(shape.dims().begin(), shape.dims().end());
  const int64_t length = shape.dim(axis);
  outer_dims[axis] = 1;
  std::vector<int64_t> index(shape.rank(), 0), offsets(length);
  const int64_t lines = Product(outer_dims);
  for (int64_t l = 0; l < lines; ++l, Next(outer_dims, index)) {
    int64_t base = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) base += index[d] * strides[d];
    for (int64_t j = 0; j < length; ++j) offsets[j] = base + j * strides[axis];
    body(offsets);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands operands,
                                 const CallComputation& call) {
  absl::StatusOr<ScalarFunction> less = ScalarFunction::Make(*inst.to_apply(), call);
  if (!less.ok()) return less.status();
  const size_t n = operands.size();
  std::vector<Literal> results;
  for (const Literal* o : operands) results.push_back(*o);
  const Shape& shape = operands[0]->shape();
  if (shape.rank() == 0) return n == 1 ? std::move(results[0]) : Literal::Tuple(std::move(results));
  absl::Status error;
  std::vector<Scalar> args(2 * n);
  Scalar result[1];
  ForEachLine(shape, inst.dimension(0), [&](const std::vector<int64_t>& offsets) {
    std::vector<int64_t> order(offsets.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      if (!error.ok()) return false;
      for (size_t k = 0; k < n; ++k) {
        args[2 * k] = LoadScalar(*operands[k], offsets[a]);
        args[2 * k + 1] = LoadScalar(*operands[k], offsets[b]);
      }
      if (absl::Status s = less->Run(args, result); !s.ok()) {
        error = s;
        return false;
      }
      return result[0].i != 0;
    });
    for (size_t k = 0; k < n; ++k) {
      const int width = ByteWidth(operands[k]->shape().element_type());
      for (size_t j = 0; j < order.size(); ++j) {
        std::memcpy(results[k].raw_data() + offsets[j] * width,
                    operands[k]->raw_data() + offsets[order[j]] * width, width);
      }
    }
  });
  if (!error.ok()) return error;
  if (n == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands operands) {
  const Literal& in = *operands[0];
  const auto& a = inst.attrs<TopKAttrs>();
  const Shape& shape = in.shape();
  const int64_t axis = shape.rank() - 1;
  const int64_t length = shape.dim(axis);
  const PrimitiveType type = shape.element_type();
  Literal values(inst.shape().tuple_shape(0));
  Literal indices(inst.shape().tuple_shape(1));
  const int64_t k = std::min<int64_t>(a.k, length);
  const int64_t rows = length == 0 ? 0 : in.element_count() / length;
  const int width = ByteWidth(type);
  // Each row sorted by a key that orders like the comparison (floats in
  // total order, NaN above +inf, as XLA's TopK does), ties to the lower
  // index: the first k of a stable sort, found by a partial sort.
  ParallelFor(rows, [&](int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> keyed(length);  // (key, index)
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t base = row * length;  // the last axis is contiguous
      for (int64_t j = 0; j < length; ++j) {
        int64_t key;
        if (IsFloat(type)) {
          key = TotalOrderKey(in.GetAsDouble(base + j));
        } else if (IsUnsignedInteger(type) || type == PrimitiveType::kPred) {
          // Order-preserving into int64 (u64 by flipping the top bit).
          key = static_cast<int64_t>(static_cast<uint64_t>(in.GetAsInt64(base + j)) ^
                                     (uint64_t{1} << 63));
        } else {
          key = in.GetAsInt64(base + j);
        }
        keyed[j] = {key, j};
      }
      auto before = [&](const std::pair<int64_t, int64_t>& x, const std::pair<int64_t, int64_t>& y) {
        if (x.first != y.first) return a.largest ? x.first > y.first : x.first < y.first;
        return x.second < y.second;
      };
      std::partial_sort(keyed.begin(), keyed.begin() + k, keyed.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        std::memcpy(values.raw_data() + (row * a.k + j) * width,
                    in.raw_data() + (base + keyed[j].second) * width, width);
        indices.SetFromInt64(row * a.k + j, keyed[j].second);
      }
    }
  }, length * 4);
  std::vector<Literal> out;
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return Literal::Tuple(std::move(out));
}

}  // namespace hlogym

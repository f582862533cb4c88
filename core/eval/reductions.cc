// reduce, reduce-window and select-and-scatter, with any reducer computation
// and variadic operands. Each output element is reduced in row-major order of
// its inputs, so results do not depend on the number of threads.
#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

Literal Pack(std::vector<Literal> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

const Shape& LeafShape(const Shape& shape, size_t k) {
  return shape.IsTuple() ? shape.tuple_shape(static_cast<int64_t>(k)) : shape;
}

// Collects the first error of a parallel loop.
struct FirstError {
  std::mutex mutex;
  absl::Status status;
  void Set(absl::Status s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (status.ok()) status = std::move(s);
  }
};

// Whether `reducer` is add(p0, p1) on a float type: such reductions are
// accumulated in double, like a tree reduction but deterministic, so long
// sums do not drift the way a sequential float sum does.
bool IsFloatAdd(const Computation& reducer) {
  const Instruction* root = reducer.root();
  return reducer.parameter_count() == 2 && root->opcode() == Opcode::kAdd &&
         IsFloat(root->shape().element_type()) &&
         root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1);
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands,
                                   const CallComputation& call) {
  const size_t n = operands.size() / 2;
  absl::StatusOr<ScalarFunction> reducer = ScalarFunction::Make(*inst.to_apply(), call);
  if (!reducer.ok()) return reducer.status();
  const Shape& in_shape = operands[0]->shape();
  const int64_t rank = in_shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : inst.dimensions()) reduced[d] = true;
  std::vector<int64_t> kept_dims, reduced_dims;
  for (int64_t d = 0; d < rank; ++d) (reduced[d] ? reduced_dims : kept_dims).push_back(d);
  const std::vector<int64_t> strides = Strides(in_shape.dims());
  std::vector<int64_t> reduced_sizes;
  for (int64_t d : reduced_dims) reduced_sizes.push_back(in_shape.dim(d));
  const int64_t reduce_count = Product(reduced_sizes);

  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) results.emplace_back(LeafShape(inst.shape(), k));
  const int64_t outputs = results[0].element_count();
  std::vector<int64_t> kept_sizes;
  for (int64_t d : kept_dims) kept_sizes.push_back(in_shape.dim(d));

  FirstError error;
  const bool float_add = n == 1 && IsFloatAdd(*inst.to_apply());
  ParallelFor(outputs, [&](int64_t lo, int64_t hi) {
    std::vector<Scalar> acc(n), args(2 * n), next(n);
    std::vector<int64_t> out_index(kept_dims.size()), red_index(reduced_dims.size());
    if (float_add) {
      for (int64_t o = lo; o < hi; ++o) {
        Unflatten(o, kept_sizes, out_index.data());
        int64_t base = 0;
        for (size_t j = 0; j < kept_dims.size(); ++j) base += out_index[j] * strides[kept_dims[j]];
        double sum = operands[1]->GetAsDouble(0);
        std::fill(red_index.begin(), red_index.end(), 0);
        for (int64_t r = 0; r < reduce_count; ++r) {
          int64_t offset = base;
          for (size_t j = 0; j < reduced_dims.size(); ++j) offset += red_index[j] * strides[reduced_dims[j]];
          sum += operands[0]->GetAsDouble(offset);
          Next(reduced_sizes, red_index);
        }
        results[0].SetFromDouble(o, sum);
      }
      return;
    }
    for (int64_t o = lo; o < hi; ++o) {
      Unflatten(o, kept_sizes, out_index.data());
      int64_t base = 0;
      for (size_t j = 0; j < kept_dims.size(); ++j) base += out_index[j] * strides[kept_dims[j]];
      for (size_t k = 0; k < n; ++k) acc[k] = LoadScalar(*operands[n + k], 0);
      std::fill(red_index.begin(), red_index.end(), 0);
      for (int64_t r = 0; r < reduce_count; ++r) {
        int64_t offset = base;
        for (size_t j = 0; j < reduced_dims.size(); ++j) offset += red_index[j] * strides[reduced_dims[j]];
        for (size_t k = 0; k < n; ++k) {
          args[k] = acc[k];
          args[n + k] = LoadScalar(*operands[k], offset);
        }
        if (absl::Status s = reducer->Run(args, absl::MakeSpan(next)); !s.ok()) {
          error.Set(s);
          return;
        }
        acc.swap(next);
        Next(reduced_sizes, red_index);
      }
      for (size_t k = 0; k < n; ++k) StoreScalar(results[k], o, acc[k]);
    }
  });
  if (!error.status.ok()) return error.status;
  return Pack(std::move(results));
}

absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, Operands operands,
                                         const CallComputation& call) {
  const size_t n = operands.size() / 2;
  absl::StatusOr<ScalarFunction> reducer = ScalarFunction::Make(*inst.to_apply(), call);
  if (!reducer.ok()) return reducer.status();
  const Window& window = inst.attrs<WindowAttrs>().window;
  const Shape& in_shape = operands[0]->shape();
  const std::vector<int64_t> strides = Strides(in_shape.dims());
  std::vector<int64_t> window_sizes;
  for (const WindowDimension& w : window) window_sizes.push_back(w.size);
  const int64_t window_count = Product(window_sizes);
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) results.emplace_back(LeafShape(inst.shape(), k));
  const Shape& out_shape = results[0].shape();

  FirstError error;
  ParallelFor(results[0].element_count(), [&](int64_t lo, int64_t hi) {
    std::vector<Scalar> acc(n), args(2 * n), next(n);
    std::vector<int64_t> out_index(out_shape.rank()), w_index(window.size());
    for (int64_t o = lo; o < hi; ++o) {
      Unflatten(o, out_shape.dims(), out_index.data());
      for (size_t k = 0; k < n; ++k) acc[k] = LoadScalar(*operands[n + k], 0);
      std::fill(w_index.begin(), w_index.end(), 0);
      for (int64_t w = 0; w < window_count; ++w, Next(window_sizes, w_index)) {
        int64_t offset = 0;
        bool inside = true;
        for (size_t d = 0; d < window.size() && inside; ++d) {
          const WindowDimension& wd = window[d];
          const int64_t pos = out_index[d] * wd.stride + w_index[d] * wd.rhs_dilation - wd.padding_low;
          if (pos < 0 || pos % wd.lhs_dilation != 0) {
            inside = false;
            break;
          }
          const int64_t source = pos / wd.lhs_dilation;
          if (source >= in_shape.dim(d)) inside = false;
          offset += source * strides[d];
        }
        if (!inside) continue;
        for (size_t k = 0; k < n; ++k) {
          args[k] = acc[k];
          args[n + k] = LoadScalar(*operands[k], offset);
        }
        if (absl::Status s = reducer->Run(args, absl::MakeSpan(next)); !s.ok()) {
          error.Set(s);
          return;
        }
        acc.swap(next);
      }
      for (size_t k = 0; k < n; ++k) StoreScalar(results[k], o, acc[k]);
    }
  });
  if (!error.status.ok()) return error.status;
  return Pack(std::move(results));
}

absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst, Operands operands,
                                             const CallComputation& call) {
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  absl::StatusOr<ScalarFunction> select = ScalarFunction::Make(*inst.called_computations()[0], call);
  if (!select.ok()) return select.status();
  absl::StatusOr<ScalarFunction> scatter = ScalarFunction::Make(*inst.called_computations()[1], call);
  if (!scatter.ok()) return scatter.status();
  const Window& window = inst.attrs<WindowAttrs>().window;
  Literal out(inst.shape());
  const Scalar init = LoadScalar(*operands[2], 0);
  for (int64_t i = 0; i < out.element_count(); ++i) StoreScalar(out, i, init);
  const Shape& in_shape = operand.shape();
  const std::vector<int64_t> strides = Strides(in_shape.dims());
  std::vector<int64_t> window_sizes;
  for (const WindowDimension& w : window) window_sizes.push_back(w.size);
  const int64_t window_count = Product(window_sizes);
  std::vector<int64_t> s_index(source.shape().rank(), 0), w_index(window.size());
  Scalar args[2], result[1];
  for (int64_t s = 0; s < source.element_count(); ++s, Next(source.shape().dims(), s_index)) {
    int64_t selected = -1;
    Scalar best;
    std::fill(w_index.begin(), w_index.end(), 0);
    for (int64_t w = 0; w < window_count; ++w, Next(window_sizes, w_index)) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < window.size(); ++d) {
        const int64_t pos = s_index[d] * window[d].stride + w_index[d] - window[d].padding_low;
        if (pos < 0 || pos >= in_shape.dim(d)) {
          inside = false;
          break;
        }
        offset += pos * strides[d];
      }
      if (!inside) continue;
      const Scalar candidate = LoadScalar(operand, offset);
      if (selected < 0) {
        selected = offset;
        best = candidate;
        continue;
      }
      args[0] = best;
      args[1] = candidate;
      if (absl::Status st = select->Run(args, result); !st.ok()) return st;
      if (!result[0].i) {  // select(best, candidate) false: candidate wins
        selected = offset;
        best = candidate;
      }
    }
    if (selected < 0) continue;
    args[0] = LoadScalar(out, selected);
    args[1] = LoadScalar(source, s);
    if (absl::Status st = scatter->Run(args, result); !st.ok()) return st;
    StoreScalar(out, selected, result[0]);
  }
  return out;
}

}  // namespace hlogym

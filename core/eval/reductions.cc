// reduce, reduce-window and select-and-scatter, with any reducer computation
// and variadic operands. Each output element is reduced in row-major order of
// its inputs, so results do not depend on the number of threads.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/eval/float_codec.h"
#include "core/eval/float_ops.h"
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
  std::atomic<bool> failed{false};
  void Set(absl::Status s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (status.ok()) status = std::move(s);
    failed = true;
  }
};

// The input's dimensions split into kept ones (in output order) and reduced
// ones, with strides in input elements. Size-1 dimensions are dropped and
// neighbours of one kind that are contiguous in the input are merged, so the
// innermost loops are long. Every output element is still reduced over its
// inputs in row-major order.
struct ReduceGeometry {
  std::vector<int64_t> kept_sizes, kept_strides, red_sizes, red_strides;
  int64_t reduce_count = 1;

  explicit ReduceGeometry(const Shape& in, absl::Span<const int64_t> reduced_dims) {
    const std::vector<int64_t> strides = Strides(in.dims());
    for (int64_t d = 0; d < in.rank(); ++d) {
      const bool reduced =
          std::find(reduced_dims.begin(), reduced_dims.end(), d) != reduced_dims.end();
      if (reduced) reduce_count *= in.dim(d);
      if (in.dim(d) == 1) continue;
      std::vector<int64_t>& sizes = reduced ? red_sizes : kept_sizes;
      std::vector<int64_t>& st = reduced ? red_strides : kept_strides;
      if (!sizes.empty() && st.back() == strides[d] * in.dim(d)) {
        sizes.back() *= in.dim(d);
        st.back() = strides[d];
      } else {
        sizes.push_back(in.dim(d));
        st.push_back(strides[d]);
      }
    }
    if (reduce_count == 0) red_sizes.assign(1, 0), red_strides.assign(1, 1);
  }
  // Input offset of the first element reduced into output `o`.
  int64_t Base(int64_t o) const {
    int64_t base = 0;
    for (int64_t k = static_cast<int64_t>(kept_sizes.size()) - 1; k >= 0; --k) {
      base += (o % kept_sizes[k]) * kept_strides[k];
      o /= kept_sizes[k];
    }
    return base;
  }
  // Calls visit(offset, length, stride) for the runs of the reduced
  // dimensions' innermost loop, in row-major order, relative to a base.
  template <typename Visit>
  void ForEachRun(Visit visit) const {
    if (red_sizes.empty()) {
      visit(int64_t{0}, int64_t{1}, int64_t{1});
      return;
    }
    const size_t last = red_sizes.size() - 1;
    const absl::Span<const int64_t> outer(red_sizes.data(), last);
    std::vector<int64_t> index(last, 0);
    const int64_t runs = Product(outer);
    for (int64_t r = 0; r < runs; ++r) {
      int64_t offset = 0;
      for (size_t j = 0; j < last; ++j) offset += index[j] * red_strides[j];
      visit(offset, red_sizes[last], red_strides[last]);
      for (int64_t j = static_cast<int64_t>(last) - 1; j >= 0; --j) {
        if (++index[j] < red_sizes[j]) break;
        index[j] = 0;
      }
    }
  }
};

// The opcode of a reducer computation that is one binary op on its two
// parameters (either order: these ops commute), else kParameter.
Opcode SimpleReducer(const Computation& reducer, PrimitiveType type) {
  const Instruction* root = reducer.root();
  if (reducer.parameter_count() != 2 || root->operand_count() != 2 ||
      !root->shape().IsScalar() || root->shape().element_type() != type) {
    return Opcode::kParameter;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) {
    return Opcode::kParameter;
  }
  for (const Instruction* p : {a, b}) {
    if (p->shape().element_type() != type) return Opcode::kParameter;
  }
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      return root->opcode();
    default:
      return Opcode::kParameter;
  }
}

// Reduces with `step(acc, x)` over doubles (float types) or int64 (integer
// types), in row-major order per output. `load(offset)` reads one input
// element, `store(o, acc)` writes output o. Long innermost runs are either
// per output (the last input dimension is reduced) or across outputs (it is
// kept: the accumulators of a row of outputs advance together).
template <typename Acc, typename Load, typename Step, typename Store>
void ReduceTyped(const ReduceGeometry& g, int64_t outputs, Acc init, Load load, Step step,
                 Store store) {
  const bool columns = !g.kept_strides.empty() && g.kept_strides.back() == 1;
  if (!columns) {
    ParallelFor(outputs, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        const int64_t base = g.Base(o);
        Acc acc = init;
        g.ForEachRun([&](int64_t offset, int64_t length, int64_t stride) {
          const int64_t at = base + offset;
          for (int64_t j = 0; j < length; ++j) acc = step(acc, load(at + j * stride));
        });
        store(o, acc);
      }
    }, g.reduce_count);
    return;
  }
  constexpr int64_t kWidth = 256;
  const int64_t row = g.kept_sizes.back();
  const int64_t chunks = (row + kWidth - 1) / kWidth;
  const int64_t blocks = outputs / row;
  ParallelFor(blocks * chunks, [&](int64_t lo, int64_t hi) {
    Acc acc[kWidth];
    for (int64_t unit = lo; unit < hi; ++unit) {
      const int64_t first = (unit / chunks) * row + (unit % chunks) * kWidth;
      const int64_t width = std::min(kWidth, (unit / chunks + 1) * row - first);
      const int64_t base = g.Base(first);
      std::fill(acc, acc + width, init);
      g.ForEachRun([&](int64_t offset, int64_t length, int64_t stride) {
        for (int64_t r = 0; r < length; ++r) {
          const int64_t at = base + offset + r * stride;
          for (int64_t j = 0; j < width; ++j) acc[j] = step(acc[j], load(at + j));
        }
      });
      for (int64_t j = 0; j < width; ++j) store(first + j, acc[j]);
    }
  }, g.reduce_count * kWidth);
}

// Single-operand reduce with a one-op reducer on f32/f64/bf16/f16 or an
// integer type. Float add accumulates in double (deterministic, and long
// sums do not drift the way a sequential float sum does), rounding once at
// the end; the other ops round each step to the type, as the reducer would.
bool TryTypedReduce(const Instruction& inst, const Literal& in, const Literal& init,
                    const ReduceGeometry& g, Literal& out) {
  const PrimitiveType t = in.shape().element_type();
  if (init.shape().element_type() != t || out.shape().element_type() != t) return false;
  const Opcode op = SimpleReducer(*inst.to_apply(), t);
  if (op == Opcode::kParameter) return false;
  const uint8_t* src = in.raw_data();
  uint8_t* dst = out.raw_data();
  const int64_t outputs = out.element_count();
  if (HasFloatCodec(t)) {
    if (op != Opcode::kAdd && op != Opcode::kMultiply && op != Opcode::kMaximum &&
        op != Opcode::kMinimum) {
      return false;
    }
    return VisitFloatCodec(t, [&](auto codec) {
      auto load = [&](int64_t i) { return codec.Load(src, i); };
      auto store = [&](int64_t o, double v) { codec.Store(dst, o, v); };
      const double start = codec.Load(init.raw_data(), 0);
      switch (op) {
        case Opcode::kAdd:
          ReduceTyped(g, outputs, start, load, [](double a, double x) { return a + x; }, store);
          break;
        case Opcode::kMultiply:
          ReduceTyped(g, outputs, start, load,
                      [&](double a, double x) { return codec.Round(a * x); }, store);
          break;
        case Opcode::kMaximum:
          ReduceTyped(g, outputs, start, load, [](double a, double x) { return FloatMaximum(a, x); },
                      store);
          break;
        default:
          ReduceTyped(g, outputs, start, load, [](double a, double x) { return FloatMinimum(a, x); },
                      store);
          break;
      }
    });
  }
  // Integers: the ops wrap modulo 2^width, so int64 arithmetic wrapped once
  // at the end gives the same value; max/min compare int64 values, which
  // is right for every type that loads without reaching 2^63 (not u64).
  const bool is_pred = t == PrimitiveType::kPred;
  if (!(IsInteger(t) || is_pred) || BitWidth(t) < 8 || t == PrimitiveType::kU64) return false;
  if (is_pred && op != Opcode::kAnd && op != Opcode::kOr) return false;
  auto load = [&](int64_t i) { return in.GetAsInt64(i); };
  auto store = [&](int64_t o, int64_t v) { out.SetFromInt64(o, v); };
  const int64_t start = init.GetAsInt64(0);
  auto wrap = [](auto f) {
    return [f](int64_t a, int64_t x) {
      return static_cast<int64_t>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(x)));
    };
  };
  switch (op) {
    case Opcode::kAdd:
      ReduceTyped(g, outputs, start, load, wrap([](uint64_t a, uint64_t x) { return a + x; }), store);
      break;
    case Opcode::kMultiply:
      ReduceTyped(g, outputs, start, load, wrap([](uint64_t a, uint64_t x) { return a * x; }), store);
      break;
    case Opcode::kAnd:
      ReduceTyped(g, outputs, start, load, [](int64_t a, int64_t x) { return a & x; }, store);
      break;
    case Opcode::kOr:
      ReduceTyped(g, outputs, start, load, [](int64_t a, int64_t x) { return a | x; }, store);
      break;
    case Opcode::kXor:
      ReduceTyped(g, outputs, start, load, [](int64_t a, int64_t x) { return a ^ x; }, store);
      break;
    case Opcode::kMaximum:
      ReduceTyped(g, outputs, start, load, [](int64_t a, int64_t x) { return a > x ? a : x; }, store);
      break;
    default:
      ReduceTyped(g, outputs, start, load, [](int64_t a, int64_t x) { return a < x ? a : x; }, store);
      break;
  }
  return true;
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands,
                                   const CallComputation& call) {
  const size_t n = operands.size() / 2;
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) results.emplace_back(LeafShape(inst.shape(), k));
  const int64_t outputs = results[0].element_count();
  const ReduceGeometry g(operands[0]->shape(), inst.dimensions());
  if (n == 1 && TryTypedReduce(inst, *operands[0], *operands[1], g, results[0])) {
    return std::move(results[0]);
  }
  absl::StatusOr<ScalarFunction> reducer = ScalarFunction::Make(*inst.to_apply(), call);
  if (!reducer.ok()) return reducer.status();
  FirstError error;
  ParallelFor(outputs, [&](int64_t lo, int64_t hi) {
    std::vector<Scalar> acc(n), args(2 * n), next(n);
    for (int64_t o = lo; o < hi && !error.failed; ++o) {
      const int64_t base = g.Base(o);
      for (size_t k = 0; k < n; ++k) acc[k] = LoadScalar(*operands[n + k], 0);
      g.ForEachRun([&](int64_t offset, int64_t length, int64_t stride) {
        for (int64_t j = 0; j < length; ++j) {
          const int64_t at = base + offset + j * stride;
          for (size_t k = 0; k < n; ++k) {
            args[k] = acc[k];
            args[n + k] = LoadScalar(*operands[k], at);
          }
          if (absl::Status s = reducer->Run(args, absl::MakeSpan(next)); !s.ok()) {
            error.Set(s);
            return;
          }
          acc.swap(next);
        }
      });
      for (size_t k = 0; k < n; ++k) StoreScalar(results[k], o, acc[k]);
    }
  }, g.reduce_count * 8);
  if (!error.status.ok()) return error.status;
  return Pack(std::move(results));
}

absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, Operands operands,
                                         const CallComputation& call) {
  const size_t n = operands.size() / 2;
  const Window& window = inst.attrs<WindowAttrs>().window;
  const Shape& in_shape = operands[0]->shape();
  const std::vector<int64_t> strides = Strides(in_shape.dims());
  std::vector<int64_t> window_sizes;
  for (const WindowDimension& w : window) window_sizes.push_back(w.size);
  const int64_t window_count = Product(window_sizes);
  std::vector<Literal> results;
  for (size_t k = 0; k < n; ++k) results.emplace_back(LeafShape(inst.shape(), k));
  const Shape& out_shape = results[0].shape();
  // Calls visit(offset) for the input elements in output o's window, in
  // row-major window order, skipping padding and dilation holes.
  auto for_each_in_window = [&](int64_t o, std::vector<int64_t>& out_index,
                                std::vector<int64_t>& w_index, auto visit) {
    Unflatten(o, out_shape.dims(), out_index.data());
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
      if (inside && !visit(offset)) return;
    }
  };

  // One float operand and a one-op reducer: typed, each step rounded to the
  // type exactly as the reducer computation would round it.
  const PrimitiveType t = in_shape.element_type();
  const Opcode simple = n == 1 ? SimpleReducer(*inst.to_apply(), t) : Opcode::kParameter;
  if (HasFloatCodec(t) && operands[1]->shape().element_type() == t &&
      (simple == Opcode::kAdd || simple == Opcode::kMultiply || simple == Opcode::kMaximum ||
       simple == Opcode::kMinimum)) {
    VisitFloatCodec(t, [&](auto codec) {
      WithFloatBinary(simple, [&](auto fn) {
        const uint8_t* src = operands[0]->raw_data();
        uint8_t* dst = results[0].raw_data();
        const double init = codec.Load(operands[1]->raw_data(), 0);
        ParallelFor(results[0].element_count(), [&](int64_t lo, int64_t hi) {
          std::vector<int64_t> out_index(out_shape.rank()), w_index(window.size());
          for (int64_t o = lo; o < hi; ++o) {
            double acc = init;
            for_each_in_window(o, out_index, w_index, [&](int64_t offset) {
              acc = codec.Round(fn(acc, codec.Load(src, offset)));
              return true;
            });
            codec.Store(dst, o, acc);
          }
        }, window_count);
      });
    });
    return std::move(results[0]);
  }

  absl::StatusOr<ScalarFunction> reducer = ScalarFunction::Make(*inst.to_apply(), call);
  if (!reducer.ok()) return reducer.status();
  FirstError error;
  ParallelFor(results[0].element_count(), [&](int64_t lo, int64_t hi) {
    std::vector<Scalar> acc(n), args(2 * n), next(n);
    std::vector<int64_t> out_index(out_shape.rank()), w_index(window.size());
    for (int64_t o = lo; o < hi && !error.failed; ++o) {
      for (size_t k = 0; k < n; ++k) acc[k] = LoadScalar(*operands[n + k], 0);
      for_each_in_window(o, out_index, w_index, [&](int64_t offset) {
        for (size_t k = 0; k < n; ++k) {
          args[k] = acc[k];
          args[n + k] = LoadScalar(*operands[k], offset);
        }
        if (absl::Status s = reducer->Run(args, absl::MakeSpan(next)); !s.ok()) {
          error.Set(s);
          return false;
        }
        acc.swap(next);
        return true;
      });
      for (size_t k = 0; k < n; ++k) StoreScalar(results[k], o, acc[k]);
    }
  }, window_count * 8);
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

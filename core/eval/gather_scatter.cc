// gather and scatter with XLA's full dimension numbers, including batching
// dimensions. Gather clamps start indices so the slice fits; scatter skips
// update windows that do not fit, as XLA does.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/eval/float_codec.h"
#include "core/eval/float_ops.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads the index vector for batch position `batch` (one value per entry of
// the index map) from an indices array.
class IndexReader {
 public:
  IndexReader(const Literal& indices, int64_t index_vector_dim)
      : indices_(indices), ivd_(index_vector_dim), strides_(Strides(indices.shape().dims())) {
    for (int64_t d = 0; d < indices.shape().rank(); ++d) {
      if (d != ivd_) batch_dims_.push_back(d);
    }
  }
  const std::vector<int64_t>& batch_dims() const { return batch_dims_; }
  int64_t Read(absl::Span<const int64_t> batch, int64_t k) const {
    int64_t linear = 0;
    for (size_t j = 0; j < batch_dims_.size(); ++j) linear += batch[j] * strides_[batch_dims_[j]];
    if (ivd_ < indices_.shape().rank()) linear += k * strides_[ivd_];
    return indices_.GetAsInt64(linear);
  }

 private:
  const Literal& indices_;
  int64_t ivd_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> batch_dims_;
};

}  // namespace

absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands operands) {
  const Literal& operand = *operands[0];
  const auto& a = inst.attrs<GatherAttrs>();
  const GatherDimensions& g = a.dims;
  Literal out(inst.shape());
  const int64_t r = operand.shape().rank();
  std::vector<int64_t> window_dims;  // operand dims the offset dims walk
  for (int64_t d = 0; d < r; ++d) {
    if (!Contains(g.collapsed_slice_dims, d) && !Contains(g.operand_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  std::vector<int64_t> out_batch_dims;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    if (!Contains(g.offset_dims, d)) out_batch_dims.push_back(d);
  }
  IndexReader reader(*operands[1], g.index_vector_dim);
  const std::vector<int64_t> in_strides = Strides(operand.shape().dims());
  const int width = ByteWidth(inst.shape().element_type());
  const auto out_dims = inst.shape().dims();
  std::vector<int64_t> index(out_dims.size(), 0), batch(out_batch_dims.size()), start(r);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    for (size_t j = 0; j < out_batch_dims.size(); ++j) batch[j] = index[out_batch_dims[j]];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      start[g.start_index_map[k]] = reader.Read(batch, static_cast<int64_t>(k));
    }
    for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
      const auto& bd = reader.batch_dims();
      const size_t j = std::find(bd.begin(), bd.end(), g.start_indices_batching_dims[k]) - bd.begin();
      start[g.operand_batching_dims[k]] = j < batch.size() ? batch[j] : 0;
    }
    int64_t linear = 0;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t size = a.slice_sizes[d];
      start[d] = std::clamp<int64_t>(start[d], 0, operand.shape().dim(d) - size);
      linear += start[d] * in_strides[d];
    }
    for (size_t j = 0; j < window_dims.size(); ++j) {
      linear += index[g.offset_dims[j]] * in_strides[window_dims[j]];
    }
    std::memcpy(out.raw_data() + i * width, operand.raw_data() + linear * width, width);
    Next(out_dims, index);
  }
  return out;
}

absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands operands,
                                    const CallComputation& call) {
  const int64_t n = static_cast<int64_t>(operands.size() - 1) / 2;
  const auto& a = inst.attrs<ScatterAttrs>();
  const ScatterDimensions& s = a.dims;
  const Literal& indices = *operands[n];
  std::vector<Literal> results;
  for (int64_t k = 0; k < n; ++k) results.push_back(*operands[k]);
  absl::StatusOr<ScalarFunction> combine = ScalarFunction::Make(*inst.to_apply(), call);
  if (!combine.ok()) return combine.status();

  const Shape& operand_shape = operands[0]->shape();
  const Shape& update_shape = operands[n + 1]->shape();
  const int64_t r = operand_shape.rank();
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < r; ++d) {
    if (!Contains(s.inserted_window_dims, d) && !Contains(s.input_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < update_shape.rank(); ++d) {
    if (!Contains(s.update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  // Window extent per operand dimension: 1 for inserted and batching dims.
  std::vector<int64_t> window_size(r, 1);
  for (size_t j = 0; j < window_dims.size(); ++j) {
    window_size[window_dims[j]] = update_shape.dim(s.update_window_dims[j]);
  }
  IndexReader reader(indices, s.index_vector_dim);
  const std::vector<int64_t> strides = Strides(operand_shape.dims());
  // Update elements in row-major order, as scatter positions (the update's
  // scatter dims) outside and window positions inside: each operand element
  // still receives its updates in row-major order of the update.
  std::vector<int64_t> scatter_sizes, window_sizes;
  for (int64_t d : update_scatter_dims) scatter_sizes.push_back(update_shape.dim(d));
  for (int64_t d : s.update_window_dims) window_sizes.push_back(update_shape.dim(d));
  const std::vector<int64_t> update_strides = Strides(update_shape.dims());
  const int64_t positions = Product(scatter_sizes), window_count = Product(window_sizes);
  // Operand and update offsets of each window element, relative to the
  // window's start.
  std::vector<int64_t> window_operand(window_count), window_update(window_count);
  {
    std::vector<int64_t> w(window_sizes.size(), 0);
    for (int64_t e = 0; e < window_count; ++e, Next(window_sizes, w)) {
      int64_t o = 0, u = 0;
      for (size_t j = 0; j < w.size(); ++j) {
        o += w[j] * strides[window_dims[j]];
        u += w[j] * update_strides[s.update_window_dims[j]];
      }
      window_operand[e] = o;
      window_update[e] = u;
    }
  }
  // One float operand with an add/multiply/maximum/minimum combiner: typed.
  const PrimitiveType t = operand_shape.element_type();
  const Instruction* root = inst.to_apply()->root();
  const bool typed =
      n == 1 && HasFloatCodec(t) && operands[n + 1]->shape().element_type() == t &&
      root->operand_count() == 2 && root->shape().element_type() == t &&
      root->operand(0)->opcode() == Opcode::kParameter &&
      root->operand(1)->opcode() == Opcode::kParameter &&
      root->operand(0)->parameter_number() == 0 && root->operand(1)->parameter_number() == 1 &&
      (root->opcode() == Opcode::kAdd || root->opcode() == Opcode::kMultiply ||
       root->opcode() == Opcode::kMaximum || root->opcode() == Opcode::kMinimum);
  std::vector<int64_t> batch(update_scatter_dims.size(), 0), start(r);
  std::vector<Scalar> in(2 * n), out(n);
  for (int64_t pos = 0; pos < positions; ++pos, Next(scatter_sizes, batch)) {
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < s.scatter_dims_to_operand_dims.size(); ++k) {
      start[s.scatter_dims_to_operand_dims[k]] = reader.Read(batch, static_cast<int64_t>(k));
    }
    for (size_t k = 0; k < s.input_batching_dims.size(); ++k) {
      const auto& bd = reader.batch_dims();
      const size_t j = std::find(bd.begin(), bd.end(), s.scatter_indices_batching_dims[k]) - bd.begin();
      start[s.input_batching_dims[k]] = j < batch.size() ? batch[j] : 0;
    }
    bool in_bounds = true;
    int64_t base = 0;
    for (int64_t d = 0; d < r; ++d) {
      if (start[d] < 0 || start[d] > operand_shape.dim(d) - window_size[d]) in_bounds = false;
      base += start[d] * strides[d];
    }
    if (!in_bounds) continue;
    int64_t update_base = 0;
    for (size_t j = 0; j < update_scatter_dims.size(); ++j) {
      update_base += batch[j] * update_strides[update_scatter_dims[j]];
    }
    if (typed) {
      VisitFloatCodec(t, [&](auto codec) {
        WithFloatBinary(root->opcode(), [&](auto fn) {
          uint8_t* dst = results[0].raw_data();
          const uint8_t* src = operands[n + 1]->raw_data();
          for (int64_t e = 0; e < window_count; ++e) {
            const int64_t at = base + window_operand[e];
            codec.Store(dst, at, fn(codec.Load(dst, at), codec.Load(src, update_base + window_update[e])));
          }
        });
      });
      continue;
    }
    for (int64_t e = 0; e < window_count; ++e) {
      const int64_t at = base + window_operand[e];
      for (int64_t k = 0; k < n; ++k) {
        in[k] = LoadScalar(results[k], at);
        in[n + k] = LoadScalar(*operands[n + 1 + k], update_base + window_update[e]);
      }
      if (absl::Status st = combine->Run(in, absl::MakeSpan(out)); !st.ok()) return st;
      for (int64_t k = 0; k < n; ++k) StoreScalar(results[k], at, out[k]);
    }
  }
  if (n == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace hlogym

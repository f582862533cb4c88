// scatter as a host kernel of its own for one f32/f64 operand combined by
// add or multiply (scatter-add is what embedding and gather gradients
// lower to): the interpreter's version copies every operand into Literals
// on each run. The index arithmetic is laid out once here, with XLA's full
// dimension numbers (batching dims included), and a run writes straight
// into the executable's buffers: the operand copied into the result, then
// each update window that fits combined in, in the interpreter's order
// (row-major over the updates) and arithmetic (in double, rounded once), so
// the results are identical.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/host_ops.h"
#include "core/eval/index_util.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

struct ScatterPlan {
  int64_t operand_elements = 0;
  std::vector<int64_t> operand_dims, operand_strides, window_size;
  // Per scatter position (the update's scatter dims, row-major): nothing is
  // precomputed but sizes; per window element: its operand and update
  // offsets from the window's start.
  std::vector<int64_t> scatter_sizes;
  std::vector<int64_t> update_scatter_strides;  // per scatter dim
  std::vector<int64_t> window_operand, window_update;
  // Reading an index vector: the indices' stride per scatter dim, and per
  // entry of scatter_dims_to_operand_dims (operand dim, stride of entry k).
  std::vector<int64_t> index_batch_strides;
  std::vector<int64_t> index_to_operand_dim;
  int64_t index_vector_stride = 0;
  // Batching dims: operand dim, and which scatter dim gives its start.
  std::vector<std::pair<int64_t, int64_t>> batching;
};

template <typename T, typename Index>
class ScatterOp : public HostOp {
 public:
  ScatterOp(ScatterPlan plan, bool multiply)
      : plan_(std::move(plan)),
        multiply_(multiply),
        position_(plan_.scatter_sizes.size(), 0),
        start_(plan_.operand_dims.size(), 0) {}

  absl::Status Run(void* const* buffers) override {
    const T* operand = static_cast<const T*>(buffers[0]);
    const Index* indices = static_cast<const Index*>(buffers[1]);
    const T* updates = static_cast<const T*>(buffers[2]);
    T* out = static_cast<T*>(buffers[3]);
    if (out != operand) std::memcpy(out, operand, plan_.operand_elements * sizeof(T));
    const int64_t rank = static_cast<int64_t>(plan_.operand_dims.size());
    const int64_t positions = Product(plan_.scatter_sizes);
    const int64_t window_count = static_cast<int64_t>(plan_.window_operand.size());
    std::fill(position_.begin(), position_.end(), 0);
    for (int64_t p = 0; p < positions; ++p, Next(plan_.scatter_sizes, position_)) {
      std::fill(start_.begin(), start_.end(), 0);
      int64_t index_base = 0, update_base = 0;
      for (size_t j = 0; j < position_.size(); ++j) {
        index_base += position_[j] * plan_.index_batch_strides[j];
        update_base += position_[j] * plan_.update_scatter_strides[j];
      }
      for (size_t k = 0; k < plan_.index_to_operand_dim.size(); ++k) {
        start_[plan_.index_to_operand_dim[k]] =
            static_cast<int64_t>(indices[index_base + k * plan_.index_vector_stride]);
      }
      for (const auto& [dim, scatter_dim] : plan_.batching) {
        start_[dim] = scatter_dim < static_cast<int64_t>(position_.size()) ? position_[scatter_dim] : 0;
      }
      bool in_bounds = true;
      int64_t base = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (start_[d] < 0 || start_[d] > plan_.operand_dims[d] - plan_.window_size[d]) {
          in_bounds = false;
        }
        base += start_[d] * plan_.operand_strides[d];
      }
      if (!in_bounds) continue;  // XLA skips a window that does not fit
      for (int64_t e = 0; e < window_count; ++e) {
        T& dst = out[base + plan_.window_operand[e]];
        const double u = static_cast<double>(updates[update_base + plan_.window_update[e]]);
        const double v = static_cast<double>(dst);
        dst = static_cast<T>(multiply_ ? v * u : v + u);
      }
    }
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "scatter"; }

 private:
  ScatterPlan plan_;
  bool multiply_;
  std::vector<int64_t> position_, start_;  // scratch, sized once
};

// The combiner: parameter 0 op parameter 1 with op add or multiply.
bool AddOrMultiply(const Instruction& scatter, bool* multiply) {
  if (scatter.called_computations().empty()) return false;
  const Computation& c = *scatter.to_apply();
  const Instruction* root = c.root();
  if (c.parameter_count() != 2 || root->operand_count() != 2) return false;
  if (root->opcode() != Opcode::kAdd && root->opcode() != Opcode::kMultiply) return false;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return false;
  }
  *multiply = root->opcode() == Opcode::kMultiply;
  return true;
}

template <typename T>
std::unique_ptr<HostOp> WithIndex(PrimitiveType index, ScatterPlan plan, bool multiply) {
  if (index == PrimitiveType::kS32) {
    return std::make_unique<ScatterOp<T, int32_t>>(std::move(plan), multiply);
  }
  if (index == PrimitiveType::kS64) {
    return std::make_unique<ScatterOp<T, int64_t>>(std::move(plan), multiply);
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<HostOp> MakeScatter(const Instruction& scatter) {
  bool multiply = false;
  if (scatter.opcode() != Opcode::kScatter || scatter.operand_count() != 3 ||
      !scatter.has_attrs<ScatterAttrs>() || !scatter.shape().IsArray() ||
      !AddOrMultiply(scatter, &multiply)) {
    return nullptr;
  }
  const Shape& operand = scatter.operand(0)->shape();
  const Shape& indices = scatter.operand(1)->shape();
  const Shape& updates = scatter.operand(2)->shape();
  const PrimitiveType t = operand.element_type();
  if ((t != PrimitiveType::kF32 && t != PrimitiveType::kF64) || updates.element_type() != t ||
      scatter.shape().element_type() != t) {
    return nullptr;
  }
  const ScatterDimensions& s = scatter.attrs<ScatterAttrs>().dims;
  ScatterPlan plan;
  const int64_t r = operand.rank();
  plan.operand_elements = operand.element_count();
  plan.operand_dims.assign(operand.dims().begin(), operand.dims().end());
  plan.operand_strides = Strides(operand.dims());
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < r; ++d) {
    if (!Contains(s.inserted_window_dims, d) && !Contains(s.input_batching_dims, d)) {
      window_dims.push_back(d);
    }
  }
  if (window_dims.size() != s.update_window_dims.size()) return nullptr;
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(s.update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  plan.window_size.assign(r, 1);
  for (size_t j = 0; j < window_dims.size(); ++j) {
    plan.window_size[window_dims[j]] = updates.dim(s.update_window_dims[j]);
  }
  const std::vector<int64_t> update_strides = Strides(updates.dims());
  std::vector<int64_t> window_sizes;
  for (int64_t d : update_scatter_dims) {
    plan.scatter_sizes.push_back(updates.dim(d));
    plan.update_scatter_strides.push_back(update_strides[d]);
  }
  for (int64_t d : s.update_window_dims) window_sizes.push_back(updates.dim(d));
  const int64_t window_count = Product(window_sizes);
  std::vector<int64_t> w(window_sizes.size(), 0);
  for (int64_t e = 0; e < window_count; ++e, Next(window_sizes, w)) {
    int64_t o = 0, u = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      o += w[j] * plan.operand_strides[window_dims[j]];
      u += w[j] * update_strides[s.update_window_dims[j]];
    }
    plan.window_operand.push_back(o);
    plan.window_update.push_back(u);
  }
  // The indices' dims other than index_vector_dim are the scatter dims, in
  // order (one per update scatter dim).
  const std::vector<int64_t> index_strides = Strides(indices.dims());
  std::vector<int64_t> index_batch_dims;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != s.index_vector_dim) index_batch_dims.push_back(d);
  }
  if (index_batch_dims.size() != update_scatter_dims.size()) return nullptr;
  for (int64_t d : index_batch_dims) plan.index_batch_strides.push_back(index_strides[d]);
  plan.index_vector_stride =
      s.index_vector_dim < indices.rank() ? index_strides[s.index_vector_dim] : 0;
  plan.index_to_operand_dim = s.scatter_dims_to_operand_dims;
  if (s.index_vector_dim >= indices.rank() && plan.index_to_operand_dim.size() > 1) return nullptr;
  for (size_t k = 0; k < s.input_batching_dims.size(); ++k) {
    const int64_t j = std::find(index_batch_dims.begin(), index_batch_dims.end(),
                                s.scatter_indices_batching_dims[k]) -
                      index_batch_dims.begin();
    plan.batching.push_back({s.input_batching_dims[k], j});
  }
  const PrimitiveType index = indices.element_type();
  if (t == PrimitiveType::kF32) return WithIndex<float>(index, std::move(plan), multiply);
  return WithIndex<double>(index, std::move(plan), multiply);
}

}  // namespace hlogym

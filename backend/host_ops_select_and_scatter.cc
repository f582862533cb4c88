// select-and-scatter (a max-pool's gradient) as a host kernel of its own,
// for float operands with a select computation that is one compare of its
// two parameters and a scatter computation that is one binary op of them:
// the interpreter's version copies every operand into Literals on each run.
// The window geometry is laid out once here. A run fills the result with the
// init value, picks each source element's window element exactly as the
// interpreter does (window elements in row-major order, padding skipped, the
// first one kept while select(kept, candidate) holds), and combines the
// source element into the picked one in row-major source order, computing in
// double and rounding once to the type, so results are bit-identical.
// Picking runs in parallel into scratch sized once; combining runs in
// parallel too where windows cannot overlap (stride >= size in every dim),
// else in source order as the interpreter does.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/host_ops.h"
#include "core/base/parallel.h"
#include "core/eval/float_codec.h"
#include "core/eval/float_ops.h"
#include "core/eval/index_util.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

constexpr int64_t kMaxRank = 16;  // the corner of a window lives on the stack

struct SelectAndScatterPlan {
  int64_t out_elements = 0, source_elements = 0;
  std::vector<int64_t> in_dims, in_strides, source_dims, stride, padding_low, size;
  // Per window element (row-major): its offset from the window's corner and
  // its index per dim.
  std::vector<int64_t> window_offset, window_index;
  bool overlapping = false;
  // The interpreter's own functions for the two computations' roots.
  bool (*compare)(double, double) = nullptr;
  bool select_swapped = false;   // the compare reads (candidate, kept)
  double (*combine)(double, double) = nullptr;
  bool scatter_swapped = false;  // the op reads (source, current)
};

template <typename Codec>
class SelectAndScatterOp : public HostOp {
 public:
  SelectAndScatterOp(SelectAndScatterPlan plan, Codec codec)
      : plan_(std::move(plan)), codec_(codec), selected_(plan_.source_elements, -1) {}

  absl::Status Run(void* const* buffers) override {
    const auto* operand = static_cast<const uint8_t*>(buffers[0]);
    const auto* source = static_cast<const uint8_t*>(buffers[1]);
    const auto* init_value = static_cast<const uint8_t*>(buffers[2]);
    auto* out = static_cast<uint8_t*>(buffers[3]);
    const Codec& codec = codec_;
    const double init = codec.Load(init_value, 0);
    ParallelFor(0, plan_.out_elements, 1 << 15, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) codec.Store(out, i, init);
    });
    auto scatter = [&](int64_t s) {
      const int64_t at = selected_[s];
      if (at < 0) return;
      const double current = codec.Load(out, at);
      const double value = codec.Load(source, s);
      codec.Store(out, at,
                  plan_.scatter_swapped ? plan_.combine(value, current)
                                        : plan_.combine(current, value));
    };
    const int64_t window_count = static_cast<int64_t>(plan_.window_offset.size());
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, window_count));
    ParallelFor(0, plan_.source_elements, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t s = lo; s < hi; ++s) {
        selected_[s] = Select(operand, s, codec);
        if (!plan_.overlapping) scatter(s);
      }
    });
    if (plan_.overlapping) {
      for (int64_t s = 0; s < plan_.source_elements; ++s) scatter(s);
    }
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "select-and-scatter"; }

 private:
  // The operand offset source element s picks, or -1 when its window is all
  // padding.
  int64_t Select(const uint8_t* operand, int64_t s, const Codec& codec) const {
    const int64_t rank = static_cast<int64_t>(plan_.in_dims.size());
    // The window's corner in operand coordinates (may be in the padding).
    int64_t corner[kMaxRank];
    int64_t base = 0;
    bool inside = true;
    int64_t rest = s;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t index = rest % plan_.source_dims[d];
      rest /= plan_.source_dims[d];
      corner[d] = index * plan_.stride[d] - plan_.padding_low[d];
      base += corner[d] * plan_.in_strides[d];
      if (corner[d] < 0 || corner[d] + plan_.size[d] > plan_.in_dims[d]) inside = false;
    }
    const int64_t window_count = static_cast<int64_t>(plan_.window_offset.size());
    int64_t selected = -1;
    double kept = 0;
    for (int64_t w = 0; w < window_count; ++w) {
      if (!inside) {
        const int64_t* index = &plan_.window_index[w * rank];
        bool in_operand = true;
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t pos = corner[d] + index[d];
          if (pos < 0 || pos >= plan_.in_dims[d]) {
            in_operand = false;
            break;
          }
        }
        if (!in_operand) continue;
      }
      const int64_t offset = base + plan_.window_offset[w];
      const double candidate = codec.Load(operand, offset);
      if (selected >= 0 &&
          (plan_.select_swapped ? plan_.compare(candidate, kept) : plan_.compare(kept, candidate))) {
        continue;  // select(kept, candidate) holds: the kept one stays
      }
      selected = offset;
      kept = candidate;
    }
    return selected;
  }

  SelectAndScatterPlan plan_;
  Codec codec_;
  std::vector<int64_t> selected_;  // per source element, sized once
};

// Whether `c`'s root reads its two distinct parameters, and nothing else;
// sets *swapped when it reads parameter 1 first.
bool BinaryOfParameters(const Computation& c, const Instruction** root, bool* swapped) {
  *root = c.root();
  if (c.parameter_count() != 2 || (*root)->operand_count() != 2) return false;
  const Instruction* a = (*root)->operand(0);
  const Instruction* b = (*root)->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return false;
  }
  *swapped = a->parameter_number() == 1;
  return true;
}

bool HasCodecKernel(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kBF16 ||
         t == PrimitiveType::kF16;
}

}  // namespace

std::unique_ptr<HostOp> MakeSelectAndScatter(const Instruction& inst) {
  if (inst.opcode() != Opcode::kSelectAndScatter || inst.operand_count() != 3 ||
      inst.called_computations().size() != 2 || !inst.has_attrs<WindowAttrs>() ||
      !inst.shape().IsArray()) {
    return nullptr;
  }
  const Shape& operand = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  const PrimitiveType t = operand.element_type();
  if (!HasCodecKernel(t) || !operand.IsArray() || !source.IsArray() || !init.IsArray() ||
      source.element_type() != t || init.element_type() != t || inst.shape().element_type() != t ||
      !inst.shape().Compatible(operand) || init.element_count() != 1 ||
      operand.rank() > kMaxRank || source.rank() != operand.rank()) {
    return nullptr;
  }
  SelectAndScatterPlan plan;
  const Instruction* select = nullptr;
  const Instruction* scatter = nullptr;
  if (!BinaryOfParameters(*inst.called_computations()[0], &select, &plan.select_swapped) ||
      select->opcode() != Opcode::kCompare || !select->has_attrs<CompareAttrs>() ||
      select->operand(0)->shape().element_type() != t) {
    return nullptr;
  }
  const CompareAttrs& compare = select->attrs<CompareAttrs>();
  WithFloatCompare(compare.direction, compare.type, [&](auto fn) { plan.compare = +fn; });
  if (plan.compare == nullptr) return nullptr;
  if (!BinaryOfParameters(*inst.called_computations()[1], &scatter, &plan.scatter_swapped) ||
      scatter->shape().element_type() != t || !scatter->shape().IsScalar() ||
      scatter->operand(0)->shape().element_type() != t ||
      !WithFloatBinary(scatter->opcode(), [&](auto fn) { plan.combine = +fn; })) {
    return nullptr;
  }
  const Window& window = inst.attrs<WindowAttrs>().window;
  const int64_t rank = operand.rank();
  if (static_cast<int64_t>(window.size()) != rank) return nullptr;
  plan.in_dims.assign(operand.dims().begin(), operand.dims().end());
  plan.in_strides = Strides(operand.dims());
  plan.source_dims.assign(source.dims().begin(), source.dims().end());
  plan.out_elements = operand.element_count();
  plan.source_elements = source.element_count();
  for (const WindowDimension& w : window) {
    // The interpreter reads neither dilation (XLA's select-and-scatter has
    // none); leave such windows to it rather than guess.
    if (w.lhs_dilation != 1 || w.rhs_dilation != 1 || w.reversal || w.size < 1 || w.stride < 1) {
      return nullptr;
    }
    plan.stride.push_back(w.stride);
    plan.padding_low.push_back(w.padding_low);
    plan.size.push_back(w.size);
    if (w.stride < w.size) plan.overlapping = true;
  }
  const int64_t window_count = Product(plan.size);
  std::vector<int64_t> index(rank, 0);
  for (int64_t w = 0; w < window_count; ++w, Next(plan.size, index)) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += index[d] * plan.in_strides[d];
    plan.window_offset.push_back(offset);
    plan.window_index.insert(plan.window_index.end(), index.begin(), index.end());
  }
  std::unique_ptr<HostOp> op;
  VisitFloatCodec(t, [&](auto codec) {
    op = std::make_unique<SelectAndScatterOp<decltype(codec)>>(std::move(plan), codec);
  });
  return op;
}

}  // namespace hlogym

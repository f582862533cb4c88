// Data-movement kernels: every output element is a copy of one input element
// (or a constant), found by index arithmetic. Type-agnostic: they move bytes.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

// Fills `out` by copying element source(i) of `in` for each output element
// i; source returns -1 to keep the element as it is (a pad value, ...).
template <typename SourceFn>
void Gather1(const Literal& in, Literal& out, SourceFn source) {
  const int width = ByteWidth(out.shape().element_type());
  const uint8_t* src = in.raw_data();
  uint8_t* dst = out.raw_data();
  const std::vector<int64_t> dims(out.shape().dims().begin(), out.shape().dims().end());
  ParallelFor(out.element_count(), [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> index(dims.size());
    Unflatten(lo, dims, index.data());
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t s = source(index);
      if (s >= 0) std::memcpy(dst + i * width, src + s * width, width);
      Next(dims, index);
    }
  });
}

int64_t ScalarIndex(const Literal& literal) { return literal.GetAsInt64(0); }

// Start indices of dynamic-slice/-update-slice, clamped so the window fits.
std::vector<int64_t> DynamicStarts(Operands operands, size_t first_index,
                                   absl::Span<const int64_t> operand_dims,
                                   absl::Span<const int64_t> window) {
  std::vector<int64_t> starts(operand_dims.size(), 0);
  if (operands.size() == first_index + 1 && operands[first_index]->shape().rank() == 1) {
    for (size_t d = 0; d < starts.size(); ++d) starts[d] = operands[first_index]->GetAsInt64(d);
  } else {
    for (size_t d = 0; d < starts.size(); ++d) starts[d] = ScalarIndex(*operands[first_index + d]);
  }
  for (size_t d = 0; d < starts.size(); ++d) {
    starts[d] = std::clamp<int64_t>(starts[d], 0, operand_dims[d] - window[d]);
  }
  return starts;
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst, Operands operands) {
  const Shape& shape = inst.shape();
  Literal out(shape);
  switch (inst.opcode()) {
    case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kCopy: {
      const Literal& in = *operands[0];
      if (in.raw_size() != out.raw_size()) {
        return absl::UnimplementedError(absl::StrCat(
            "not supported: ", std::string(OpcodeName(inst.opcode())), " changing the element size in `",
            inst.name(), "`"));
      }
      std::memcpy(out.raw_data(), in.raw_data(), in.raw_size());
      return out;
    }
    case Opcode::kBroadcast: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      auto dims = inst.dimensions();
      Gather1(in, out, [&](const std::vector<int64_t>& index) {
        int64_t s = 0;
        for (size_t k = 0; k < dims.size(); ++k) s += index[dims[k]] * in_strides[k];
        return s;
      });
      return out;
    }
    case Opcode::kTranspose: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      auto perm = inst.dimensions();
      Gather1(in, out, [&](const std::vector<int64_t>& index) {
        int64_t s = 0;
        for (size_t k = 0; k < perm.size(); ++k) s += index[k] * in_strides[perm[k]];
        return s;
      });
      return out;
    }
    case Opcode::kReverse: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      std::vector<bool> reversed(shape.rank(), false);
      for (int64_t d : inst.dimensions()) reversed[d] = true;
      Gather1(in, out, [&](const std::vector<int64_t>& index) {
        int64_t s = 0;
        for (size_t k = 0; k < index.size(); ++k) {
          s += (reversed[k] ? shape.dim(k) - 1 - index[k] : index[k]) * in_strides[k];
        }
        return s;
      });
      return out;
    }
    case Opcode::kSlice: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      const auto& a = inst.attrs<SliceAttrs>();
      Gather1(in, out, [&](const std::vector<int64_t>& index) {
        int64_t s = 0;
        for (size_t k = 0; k < index.size(); ++k) {
          const int64_t stride = k < a.strides.size() ? a.strides[k] : 1;
          s += (a.starts[k] + index[k] * stride) * in_strides[k];
        }
        return s;
      });
      return out;
    }
    case Opcode::kDynamicSlice: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      const std::vector<int64_t> starts =
          DynamicStarts(operands, 1, in.shape().dims(), shape.dims());
      Gather1(in, out, [&](const std::vector<int64_t>& index) {
        int64_t s = 0;
        for (size_t k = 0; k < index.size(); ++k) s += (starts[k] + index[k]) * in_strides[k];
        return s;
      });
      return out;
    }
    case Opcode::kDynamicUpdateSlice: {
      const Literal& base = *operands[0];
      const Literal& update = *operands[1];
      std::memcpy(out.raw_data(), base.raw_data(), base.raw_size());
      const std::vector<int64_t> starts =
          DynamicStarts(operands, 2, base.shape().dims(), update.shape().dims());
      const std::vector<int64_t> out_strides = Strides(shape.dims());
      const int width = ByteWidth(shape.element_type());
      std::vector<int64_t> index(update.shape().rank(), 0);
      const int64_t n = update.element_count();
      for (int64_t i = 0; i < n; ++i) {
        int64_t d = 0;
        for (size_t k = 0; k < index.size(); ++k) d += (starts[k] + index[k]) * out_strides[k];
        std::memcpy(out.raw_data() + d * width, update.raw_data() + i * width, width);
        Next(update.shape().dims(), index);
      }
      return out;
    }
    case Opcode::kConcatenate: {
      const int64_t axis = inst.dimension(0);
      const std::vector<int64_t> out_strides = Strides(shape.dims());
      const int width = ByteWidth(shape.element_type());
      int64_t offset = 0;
      for (const Literal* part : operands) {
        std::vector<int64_t> index(part->shape().rank(), 0);
        const int64_t n = part->element_count();
        for (int64_t i = 0; i < n; ++i) {
          int64_t d = 0;
          for (size_t k = 0; k < index.size(); ++k) {
            d += (index[k] + (static_cast<int64_t>(k) == axis ? offset : 0)) * out_strides[k];
          }
          std::memcpy(out.raw_data() + d * width, part->raw_data() + i * width, width);
          Next(part->shape().dims(), index);
        }
        offset += part->shape().dim(axis);
      }
      return out;
    }
    case Opcode::kPad: {
      const Literal& in = *operands[0];
      const Literal& value = *operands[1];
      const int width = ByteWidth(shape.element_type());
      for (int64_t i = 0; i < out.element_count(); ++i) {
        std::memcpy(out.raw_data() + i * width, value.raw_data(), width);
      }
      const auto& padding = inst.attrs<PadAttrs>().padding;
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      Gather1(in, out, [&](const std::vector<int64_t>& index) -> int64_t {
        int64_t s = 0;
        for (size_t k = 0; k < index.size(); ++k) {
          const int64_t shifted = index[k] - padding[k].low;
          const int64_t step = padding[k].interior + 1;
          if (shifted < 0 || shifted % step != 0) return -1;
          const int64_t source = shifted / step;
          if (source >= in.shape().dim(k)) return -1;
          s += source * in_strides[k];
        }
        return s;
      });
      return out;
    }
    case Opcode::kIota: {
      const int64_t axis = inst.iota_dimension();
      std::vector<int64_t> index(shape.rank(), 0);
      for (int64_t i = 0; i < out.element_count(); ++i) {
        Scalar v;
        v.i = index[axis];
        v.f = static_cast<double>(index[axis]);
        v.c = {v.f, 0};
        StoreScalar(out, i, v);
        Next(shape.dims(), index);
      }
      return out;
    }
    default:
      return absl::UnimplementedError(absl::StrCat("not supported: ",
                                                   std::string(OpcodeName(inst.opcode())),
                                                   " in instruction `", inst.name(), "`"));
  }
}

}  // namespace hlogym

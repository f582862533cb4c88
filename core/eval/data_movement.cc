// Data-movement kernels: every output element is a copy of one input element
// (or a constant), found by index arithmetic. Type-agnostic: they move bytes.
// bitcast alone sees layouts (it reinterprets the physical buffer).
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

// Copies a box of elements: for every index i of `dims` (row-major), the
// element at src_base + sum(i * src_strides) goes to dst_base + sum(i *
// dst_strides) (offsets in elements; strides may be 0 or negative). Every
// data-movement op is one or more such copies. Dimensions are merged where
// both sides are contiguous across them, and the innermost runs as a typed
// loop, in parallel over the outer rows.
struct BoxCopy {
  std::vector<int64_t> dims, src_strides, dst_strides;
  int64_t src_base = 0, dst_base = 0;
};

template <typename T>
void CopyBoxTyped(const BoxCopy& box, const uint8_t* src_bytes, uint8_t* dst_bytes) {
  const T* src = reinterpret_cast<const T*>(src_bytes);
  T* dst = reinterpret_cast<T*>(dst_bytes);
  const int64_t rank = static_cast<int64_t>(box.dims.size());
  if (rank == 0) {
    dst[box.dst_base] = src[box.src_base];
    return;
  }
  const int64_t inner = box.dims[rank - 1];
  const int64_t src_inner = box.src_strides[rank - 1], dst_inner = box.dst_strides[rank - 1];
  const std::vector<int64_t> outer_dims(box.dims.begin(), box.dims.end() - 1);
  const int64_t rows = Product(outer_dims);
  // Rows per task so that each task moves a reasonable number of elements.
  const int64_t rows_per_task = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(inner, 1));
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  auto run = [&](int64_t task_lo, int64_t task_hi) {
    const int64_t row_lo = task_lo * rows_per_task;
    const int64_t row_hi = std::min(rows, task_hi * rows_per_task);
    std::vector<int64_t> index(outer_dims.size());
    Unflatten(row_lo, outer_dims, index.data());
    for (int64_t row = row_lo; row < row_hi; ++row) {
      int64_t s = box.src_base, d = box.dst_base;
      for (size_t k = 0; k < index.size(); ++k) {
        s += index[k] * box.src_strides[k];
        d += index[k] * box.dst_strides[k];
      }
      if (src_inner == 1 && dst_inner == 1) {
        std::memcpy(dst + d, src + s, inner * sizeof(T));
      } else if (src_inner == 0 && dst_inner == 1) {
        std::fill_n(dst + d, inner, src[s]);
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[d + j * dst_inner] = src[s + j * src_inner];
      }
      Next(outer_dims, index);
    }
  };
  if (rows * inner <= (1 << 15)) {
    run(0, tasks);
  } else {
    ParallelFor(0, tasks, 1, run);
  }
}

void CopyBox(BoxCopy box, int width, const uint8_t* src, uint8_t* dst) {
  // Drop size-1 dimensions, then merge a dimension into the next one when
  // both sides step across it as one run.
  for (const int64_t d : box.dims) {
    if (d == 0) return;
  }
  BoxCopy merged;
  merged.src_base = box.src_base;
  merged.dst_base = box.dst_base;
  for (size_t k = 0; k < box.dims.size(); ++k) {
    if (box.dims[k] == 1) continue;
    if (!merged.dims.empty() &&
        merged.src_strides.back() == box.src_strides[k] * box.dims[k] &&
        merged.dst_strides.back() == box.dst_strides[k] * box.dims[k]) {
      merged.dims.back() *= box.dims[k];
      merged.src_strides.back() = box.src_strides[k];
      merged.dst_strides.back() = box.dst_strides[k];
      continue;
    }
    merged.dims.push_back(box.dims[k]);
    merged.src_strides.push_back(box.src_strides[k]);
    merged.dst_strides.push_back(box.dst_strides[k]);
  }
  switch (width) {
    case 1: return CopyBoxTyped<uint8_t>(merged, src, dst);
    case 2: return CopyBoxTyped<uint16_t>(merged, src, dst);
    case 4: return CopyBoxTyped<uint32_t>(merged, src, dst);
    case 8: return CopyBoxTyped<uint64_t>(merged, src, dst);
    case 16: {
      struct Wide { uint64_t a, b; };
      return CopyBoxTyped<Wide>(merged, src, dst);
    }
    default: {
      // Any other width: copy bytes, one more dimension inside.
      for (int64_t& st : merged.src_strides) st *= width;
      for (int64_t& st : merged.dst_strides) st *= width;
      merged.dims.push_back(width);
      merged.src_strides.push_back(1);
      merged.dst_strides.push_back(1);
      merged.src_base *= width;
      merged.dst_base *= width;
      return CopyBoxTyped<uint8_t>(merged, src, dst);
    }
  }
}

// A box over all of `out` (its row-major strides on the destination side).
BoxCopy OverOutput(const Shape& out) {
  BoxCopy box;
  box.dims.assign(out.dims().begin(), out.dims().end());
  box.dst_strides = Strides(out.dims());
  box.src_strides.assign(box.dims.size(), 0);
  return box;
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

// The layout's minor-to-major order, row-major where the shape has none.
std::vector<int64_t> MinorToMajor(const Shape& shape) {
  const DimVector& m2m = shape.layout().minor_to_major;
  if (shape.has_layout() && static_cast<int64_t>(m2m.size()) == shape.rank()) {
    return std::vector<int64_t>(m2m.begin(), m2m.end());
  }
  const DimVector row_major = Layout::RowMajor(shape.rank()).minor_to_major;
  return std::vector<int64_t>(row_major.begin(), row_major.end());
}

bool IsRowMajor(const std::vector<int64_t>& minor_to_major) {
  for (size_t k = 0; k < minor_to_major.size(); ++k) {
    if (minor_to_major[k] != static_cast<int64_t>(minor_to_major.size() - 1 - k)) return false;
  }
  return true;
}

// Strides (in elements) of each logical dimension in the physical buffer.
std::vector<int64_t> PhysicalStrides(const Shape& shape, const std::vector<int64_t>& m2m) {
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : m2m) {
    strides[d] = stride;
    stride *= shape.dim(d);
  }
  return strides;
}

bool Tiled(const Shape& shape) {
  return shape.has_layout() && shape.layout().extras != nullptr &&
         !shape.layout().extras->tiles.empty();
}

// bitcast reinterprets the physical buffer: the operand's logical values go
// to memory in its layout's order, and the result reads that memory in its
// own layout's order. Literals are row-major logical, so a bitcast between
// non-row-major layouts moves elements (a transpose, for example); between
// row-major ones it is a plain reshape.
absl::StatusOr<Literal> Bitcast(const Instruction& inst, const Literal& in, Literal out) {
  const Shape& from = inst.operand(0)->shape();
  const Shape& to = inst.shape();
  if (Tiled(from) || Tiled(to)) {
    return absl::UnimplementedError(absl::StrCat(
        "not supported: bitcast with a tiled layout (", from.ToString(), " to ", to.ToString(),
        ") in instruction `", inst.name(), "`"));
  }
  const std::vector<int64_t> from_m2m = MinorToMajor(from), to_m2m = MinorToMajor(to);
  const bool from_row_major = IsRowMajor(from_m2m), to_row_major = IsRowMajor(to_m2m);
  std::vector<uint8_t> scratch;
  const uint8_t* physical = in.raw_data();
  if (!from_row_major) {
    scratch.resize(in.raw_size());
    BoxCopy box;
    box.dims.assign(from.dims().begin(), from.dims().end());
    box.src_strides = Strides(from.dims());
    box.dst_strides = PhysicalStrides(from, from_m2m);
    CopyBox(std::move(box), ByteWidth(from.element_type()), in.raw_data(), scratch.data());
    physical = scratch.data();
  }
  if (to_row_major) {
    std::memcpy(out.raw_data(), physical, out.raw_size());
  } else {
    BoxCopy box = OverOutput(to);
    box.src_strides = PhysicalStrides(to, to_m2m);
    CopyBox(std::move(box), ByteWidth(to.element_type()), physical, out.raw_data());
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst, Operands operands) {
  const Shape& shape = inst.shape();
  Literal out(shape);
  const int width = shape.IsArray() ? ByteWidth(shape.element_type()) : 0;
  switch (inst.opcode()) {
    case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kCopy: {
      const Literal& in = *operands[0];
      if (in.raw_size() != out.raw_size()) {
        return absl::UnimplementedError(absl::StrCat(
            "not supported: ", std::string(OpcodeName(inst.opcode())), " changing the element size in `",
            inst.name(), "`"));
      }
      if (inst.opcode() == Opcode::kBitcast) return Bitcast(inst, in, std::move(out));
      std::memcpy(out.raw_data(), in.raw_data(), in.raw_size());
      return out;
    }
    case Opcode::kBroadcast: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      BoxCopy box = OverOutput(shape);
      auto dims = inst.dimensions();
      for (size_t k = 0; k < dims.size(); ++k) box.src_strides[dims[k]] = in_strides[k];
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kTranspose: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      BoxCopy box = OverOutput(shape);
      auto perm = inst.dimensions();
      for (size_t k = 0; k < perm.size(); ++k) box.src_strides[k] = in_strides[perm[k]];
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kReverse: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      BoxCopy box = OverOutput(shape);
      box.src_strides = in_strides;
      for (int64_t d : inst.dimensions()) {
        box.src_base += (shape.dim(d) - 1) * in_strides[d];
        box.src_strides[d] = -in_strides[d];
      }
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kSlice: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      const auto& a = inst.attrs<SliceAttrs>();
      BoxCopy box = OverOutput(shape);
      for (int64_t k = 0; k < shape.rank(); ++k) {
        const int64_t stride = k < static_cast<int64_t>(a.strides.size()) ? a.strides[k] : 1;
        box.src_base += a.starts[k] * in_strides[k];
        box.src_strides[k] = stride * in_strides[k];
      }
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kDynamicSlice: {
      const Literal& in = *operands[0];
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      const std::vector<int64_t> starts =
          DynamicStarts(operands, 1, in.shape().dims(), shape.dims());
      BoxCopy box = OverOutput(shape);
      box.src_strides = in_strides;
      for (int64_t k = 0; k < shape.rank(); ++k) box.src_base += starts[k] * in_strides[k];
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kDynamicUpdateSlice: {
      const Literal& base = *operands[0];
      const Literal& update = *operands[1];
      std::memcpy(out.raw_data(), base.raw_data(), base.raw_size());
      const std::vector<int64_t> starts =
          DynamicStarts(operands, 2, base.shape().dims(), update.shape().dims());
      BoxCopy box;
      box.dims.assign(update.shape().dims().begin(), update.shape().dims().end());
      box.src_strides = Strides(update.shape().dims());
      box.dst_strides = Strides(shape.dims());
      for (int64_t k = 0; k < shape.rank(); ++k) box.dst_base += starts[k] * box.dst_strides[k];
      CopyBox(std::move(box), width, update.raw_data(), out.raw_data());
      return out;
    }
    case Opcode::kConcatenate: {
      const int64_t axis = inst.dimension(0);
      const std::vector<int64_t> out_strides = Strides(shape.dims());
      int64_t offset = 0;
      for (const Literal* part : operands) {
        BoxCopy box;
        box.dims.assign(part->shape().dims().begin(), part->shape().dims().end());
        box.src_strides = Strides(part->shape().dims());
        box.dst_strides = out_strides;
        box.dst_base = offset * out_strides[axis];
        CopyBox(std::move(box), width, part->raw_data(), out.raw_data());
        offset += part->shape().dim(axis);
      }
      return out;
    }
    case Opcode::kPad: {
      const Literal& in = *operands[0];
      const Literal& value = *operands[1];
      BoxCopy fill = OverOutput(shape);  // every element from the scalar pad value
      CopyBox(std::move(fill), width, value.raw_data(), out.raw_data());
      // Then the input elements that land inside the output: input index i
      // of dimension k goes to low + i * (interior + 1), which negative low
      // or high padding can push outside.
      const auto& padding = inst.attrs<PadAttrs>().padding;
      const std::vector<int64_t> in_strides = Strides(in.shape().dims());
      const std::vector<int64_t> out_strides = Strides(shape.dims());
      BoxCopy box;
      for (int64_t k = 0; k < shape.rank(); ++k) {
        const int64_t step = padding[k].interior + 1;
        const int64_t low = padding[k].low;
        // First and one-past-last input index whose position is in [0, dim).
        int64_t first = low >= 0 ? 0 : (-low + step - 1) / step;
        int64_t last = in.shape().dim(k);
        while (last > first && low + (last - 1) * step >= shape.dim(k)) --last;
        if (last <= first) return out;
        box.dims.push_back(last - first);
        box.src_strides.push_back(in_strides[k]);
        box.dst_strides.push_back(step * out_strides[k]);
        box.src_base += first * in_strides[k];
        box.dst_base += (low + first * step) * out_strides[k];
      }
      CopyBox(std::move(box), width, in.raw_data(), out.raw_data());
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

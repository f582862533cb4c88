#include "core/features/attribute_features.h"

#include <algorithm>
#include <cmath>

#include "core/features/graph_features.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// Writes up to `width` values of `list` at out[offset], padding with -1.
template <typename List>
void PutList(float* out, int offset, int width, const List& list) {
  int i = 0;
  for (auto v : list) {
    if (i == width) break;
    out[offset + i++] = static_cast<float>(v);
  }
  for (; i < width; ++i) out[offset + i] = -1.f;
}

void PutWindow(float* out, const Window& window) {
  std::vector<int64_t> size, stride, lo, hi, lhs, rhs;
  for (const WindowDimension& d : window) {
    size.push_back(d.size);
    stride.push_back(d.stride);
    lo.push_back(d.padding_low);
    hi.push_back(d.padding_high);
    lhs.push_back(d.lhs_dilation);
    rhs.push_back(d.rhs_dilation);
  }
  PutList(out, 0, 4, size);
  PutList(out, 4, 4, stride);
  PutList(out, 8, 4, lo);
  PutList(out, 12, 4, hi);
  PutList(out, 16, 2, lhs);
  PutList(out, 18, 2, rhs);
}

// A compact, bounded code for a numeric constant: its value clipped to
// [-1e6, 1e6] (and 0 for NaN), so 0, 1 and -inf-like sentinels stand out.
float ClippedValue(double v) {
  if (std::isnan(v)) return 0.f;
  return static_cast<float>(std::clamp(v, -1e6, 1e6));
}

}  // namespace

void EncodeAttributes(const Instruction& inst, float* out) {
  std::fill(out, out + kNodeAttrCount, 0.f);
  switch (inst.opcode()) {
    case Opcode::kParameter:
      out[0] = static_cast<float>(inst.parameter_number());
      return;
    case Opcode::kGetTupleElement:
      out[0] = static_cast<float>(inst.tuple_index());
      return;
    case Opcode::kIota:
      out[0] = static_cast<float>(inst.iota_dimension());
      return;
    case Opcode::kConstant: {
      if (!inst.has_attrs<ConstantAttrs>()) return;
      const Literal& literal = inst.literal();
      out[1] = literal.shape().IsScalar() ? 1.f : 0.f;
      out[2] = literal.is_elided() ? 1.f : 0.f;
      if (literal.shape().IsScalar() && !literal.is_elided()) {
        out[0] = ClippedValue(literal.GetAsDouble(0));
      }
      return;
    }
    case Opcode::kSlice: {
      if (!inst.has_attrs<SliceAttrs>()) return;
      const auto& a = inst.attrs<SliceAttrs>();
      PutList(out, 0, 8, a.starts);
      PutList(out, 8, 8, a.limits);
      PutList(out, 16, 8, a.strides);
      return;
    }
    case Opcode::kDynamicSlice:
      if (inst.has_attrs<DynamicSliceAttrs>()) {
        PutList(out, 0, 8, inst.attrs<DynamicSliceAttrs>().sizes);
      }
      return;
    case Opcode::kPad: {
      std::vector<int64_t> lo, hi, interior;
      if (!inst.has_attrs<PadAttrs>()) return;
      for (const PaddingDimension& d : inst.attrs<PadAttrs>().padding) {
        lo.push_back(d.low);
        hi.push_back(d.high);
        interior.push_back(d.interior);
      }
      PutList(out, 0, 8, lo);
      PutList(out, 8, 8, hi);
      PutList(out, 16, 8, interior);
      return;
    }
    case Opcode::kCompare: {
      if (!inst.has_attrs<CompareAttrs>()) return;
      const auto& a = inst.attrs<CompareAttrs>();
      out[static_cast<int>(a.direction)] = 1.f;  // one-hot in [0, 6)
      out[6] = static_cast<float>(a.type);
      return;
    }
    case Opcode::kDot: case Opcode::kRaggedDot: {
      if (!inst.has_attrs<DotAttrs>()) return;
      const auto& a = inst.attrs<DotAttrs>();
      PutList(out, 0, 4, a.dims.lhs_batch);
      PutList(out, 4, 4, a.dims.lhs_contracting);
      PutList(out, 8, 4, a.dims.rhs_batch);
      PutList(out, 12, 4, a.dims.rhs_contracting);
      for (Precision p : a.precision) {
        out[16] = std::max(out[16], static_cast<float>(p));
      }
      return;
    }
    case Opcode::kConvolution: {
      if (!inst.has_attrs<ConvolutionAttrs>()) return;
      const auto& a = inst.attrs<ConvolutionAttrs>();
      PutWindow(out, a.window);
      out[20] = static_cast<float>(a.feature_group_count);
      out[21] = static_cast<float>(a.batch_group_count);
      return;
    }
    case Opcode::kReduceWindow: case Opcode::kSelectAndScatter:
      if (inst.has_attrs<WindowAttrs>()) PutWindow(out, inst.attrs<WindowAttrs>().window);
      return;
    case Opcode::kGather: {
      if (!inst.has_attrs<GatherAttrs>()) return;
      const auto& a = inst.attrs<GatherAttrs>();
      PutList(out, 0, 8, a.slice_sizes);
      PutList(out, 8, 4, a.dims.offset_dims);
      PutList(out, 12, 4, a.dims.collapsed_slice_dims);
      PutList(out, 16, 4, a.dims.start_index_map);
      out[20] = static_cast<float>(a.dims.index_vector_dim);
      out[21] = a.indices_are_sorted ? 1.f : 0.f;
      return;
    }
    case Opcode::kScatter: {
      if (!inst.has_attrs<ScatterAttrs>()) return;
      const auto& a = inst.attrs<ScatterAttrs>();
      PutList(out, 0, 4, a.dims.update_window_dims);
      PutList(out, 4, 4, a.dims.inserted_window_dims);
      PutList(out, 8, 4, a.dims.scatter_dims_to_operand_dims);
      out[12] = static_cast<float>(a.dims.index_vector_dim);
      out[13] = a.indices_are_sorted ? 1.f : 0.f;
      out[14] = a.unique_indices ? 1.f : 0.f;
      return;
    }
    case Opcode::kSort:
      PutList(out, 0, 8, inst.dimensions());
      out[8] = inst.has_attrs<SortAttrs>() && inst.attrs<SortAttrs>().is_stable ? 1.f : 0.f;
      return;
    case Opcode::kTopK: {
      if (!inst.has_attrs<TopKAttrs>()) return;
      const auto& a = inst.attrs<TopKAttrs>();
      out[0] = static_cast<float>(a.k);
      out[1] = a.largest ? 1.f : 0.f;
      return;
    }
    case Opcode::kFusion: {
      if (inst.has_attrs<FusionAttrs>()) {
        out[static_cast<int>(inst.fusion_kind())] = 1.f;  // one-hot in [0, 4)
      }
      const Computation* fused =
          inst.called_computations().empty() ? nullptr : inst.fused_computation();
      if (fused != nullptr) {
        out[4] = static_cast<float>(fused->instruction_count());
        if (fused->root() != nullptr) out[5] = static_cast<float>(fused->root()->opcode());
        int reduces = 0;
        for (const auto& i : fused->instructions()) reduces += i->opcode() == Opcode::kReduce;
        out[6] = static_cast<float>(reduces);
      }
      return;
    }
    case Opcode::kAlternatives:
      out[0] = static_cast<float>(inst.operand_count());
      return;
    case Opcode::kReducePrecision: {
      if (!inst.has_attrs<ReducePrecisionAttrs>()) return;
      const auto& a = inst.attrs<ReducePrecisionAttrs>();
      out[0] = static_cast<float>(a.exponent_bits);
      out[1] = static_cast<float>(a.mantissa_bits);
      return;
    }
    case Opcode::kBatchNormTraining: case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      if (!inst.has_attrs<BatchNormAttrs>()) return;
      const auto& a = inst.attrs<BatchNormAttrs>();
      out[0] = static_cast<float>(a.epsilon);
      out[1] = static_cast<float>(a.feature_index);
      return;
    }
    case Opcode::kRngBitGenerator:
      if (inst.has_attrs<RngBitGeneratorAttrs>()) {
        out[0] = static_cast<float>(inst.attrs<RngBitGeneratorAttrs>().algorithm);
      }
      return;
    case Opcode::kScan: {
      PutList(out, 0, 8, inst.dimensions());
      if (!inst.has_attrs<ScanAttrs>()) return;
      const auto& a = inst.attrs<ScanAttrs>();
      out[8] = static_cast<float>(a.num_carries);
      out[9] = a.is_reverse ? 1.f : 0.f;
      return;
    }
    default:
      // broadcast, transpose, reduce, concatenate, reverse, map, ...
      if (!inst.dimensions().empty()) PutList(out, 0, 8, inst.dimensions());
      return;
  }
}

}  // namespace hlogym

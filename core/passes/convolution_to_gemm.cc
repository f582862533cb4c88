#include "core/passes/convolution_to_gemm.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/literal.h"
#include "core/passes/fusion_chain.h"
#include "core/passes/lowering_walk.h"

namespace hlogym {
namespace {

// The sizes a convolution works with, in its roles rather than its
// dimension order.
struct ConvGeometry {
  int64_t batch = 0, features = 0, groups = 1, group_in = 0, out_features = 0;
  std::vector<int64_t> in_size, window, out_size, padded;
  int64_t window_positions = 1, out_positions = 1;
};

// The geometry of `conv`, or why the pass leaves it (non-empty `why`).
ConvGeometry Geometry(const Instruction& conv, std::string& why) {
  ConvGeometry g;
  why.clear();
  if (conv.opcode() != Opcode::kConvolution || conv.operand_count() != 2 ||
      !conv.has_attrs<ConvolutionAttrs>() || !conv.shape().IsArray() ||
      !conv.operand(0)->shape().IsArray() || !conv.operand(1)->shape().IsArray()) {
    why = "not a convolution of two arrays";
    return g;
  }
  if (why = CommonLoweringRefusal(conv); !why.empty()) return g;
  const auto& attrs = conv.attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& d = attrs.dims;
  const Shape& in = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const Shape& out = conv.shape();
  const size_t spatial = d.input_spatial.size();
  if (attrs.window.size() != spatial || d.kernel_spatial.size() != spatial ||
      d.output_spatial.size() != spatial || in.rank() != static_cast<int64_t>(spatial) + 2 ||
      kernel.rank() != in.rank() || out.rank() != in.rank()) {
    why = "window and dimension labels do not match the ranks";
    return g;
  }
  if (attrs.batch_group_count != 1) {
    why = "batch_group_count > 1";
    return g;
  }
  if (in.element_count() == 0 || kernel.element_count() == 0 || out.element_count() == 0) {
    why = "an empty operand or result";
    return g;
  }
  g.batch = in.dim(d.input_batch);
  g.features = in.dim(d.input_feature);
  g.groups = attrs.feature_group_count;
  g.group_in = kernel.dim(d.kernel_input_feature);
  g.out_features = kernel.dim(d.kernel_output_feature);
  if (g.groups < 1 || g.features != g.group_in * g.groups || g.out_features % g.groups != 0 ||
      out.dim(d.output_feature) != g.out_features || out.dim(d.output_batch) != g.batch) {
    why = "feature counts that do not match feature_group_count";
    return g;
  }
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDimension& w = attrs.window[s];
    const int64_t size = kernel.dim(d.kernel_spatial[s]);
    if (w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1 || w.size != size) {
      why = "a window with a stride or dilation below 1, or not the kernel's size";
      return g;
    }
    const int64_t in_size = in.dim(d.input_spatial[s]);
    const int64_t padded = w.padding_low + w.padding_high + (in_size - 1) * w.lhs_dilation + 1;
    const int64_t reach = (size - 1) * w.rhs_dilation + 1;
    const int64_t out_size = padded < reach ? 0 : (padded - reach) / w.stride + 1;
    if (out.dim(d.output_spatial[s]) != out_size) {
      why = "an output size the window does not give";
      return g;
    }
    g.in_size.push_back(in_size);
    g.window.push_back(size);
    g.out_size.push_back(out_size);
    g.padded.push_back(padded);
    g.window_positions *= size;
    g.out_positions *= out_size;
  }
  if (std::min(g.window_positions, g.out_positions) > ConvolutionToGemmPass::kMaxSlices) {
    why = absl::StrCat("more than ", ConvolutionToGemmPass::kMaxSlices,
                       " window and output positions (", g.window_positions, " and ",
                       g.out_positions, ")");
  }
  return g;
}

// The im2col matrix of `conv`'s input: [groups,] (batch, output position) x
// (window position, input feature of the group), as one fusion.
absl::StatusOr<Instruction*> Im2col(Rewriter& rewriter, Instruction* conv, const ConvGeometry& g) {
  const auto& attrs = conv->attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& d = attrs.dims;
  const int64_t spatial = static_cast<int64_t>(g.window.size());
  FusionChain chain(rewriter, conv->parent());
  Instruction* in = conv->operand(0);
  const PrimitiveType type = in->shape().element_type();

  // [batch, spatial..., feature], padded (and base-dilated) as the window sees it.
  std::vector<int64_t> perm = {d.input_batch};
  perm.insert(perm.end(), d.input_spatial.begin(), d.input_spatial.end());
  perm.push_back(d.input_feature);
  Instruction* x = chain.Transpose(in, perm);
  bool pads = false;
  PadAttrs pad;
  pad.padding.resize(static_cast<size_t>(spatial + 2));
  for (int64_t s = 0; s < spatial; ++s) {
    const WindowDimension& w = attrs.window[s];
    pad.padding[s + 1] = {w.padding_low, w.padding_high, w.lhs_dilation - 1};
    pads |= w.padding_low != 0 || w.padding_high != 0 || w.lhs_dilation != 1;
  }
  if (pads) {
    Instruction* zero = chain.Constant(Literal(Shape::Scalar(type)));
    std::vector<int64_t> dims = {g.batch};
    dims.insert(dims.end(), g.padded.begin(), g.padded.end());
    dims.push_back(g.features);
    Instruction* padded = chain.Add(Opcode::kPad, Shape::Array(type, dims), {x, zero});
    padded->mutable_attrs<PadAttrs>() = std::move(pad);
    x = padded;
  }

  // One slice per window position (every output position under it) or per
  // output position (every window position over it), whichever is fewer;
  // both stack to [batch, output positions, window positions, feature].
  const bool by_window = g.window_positions <= g.out_positions;
  const int64_t count = by_window ? g.window_positions : g.out_positions;
  const std::vector<int64_t>& outer = by_window ? g.window : g.out_size;
  std::vector<int64_t> index(static_cast<size_t>(spatial), 0);
  std::vector<Instruction*> pieces;
  for (int64_t p = 0; p < count; ++p) {
    SliceAttrs slice;
    slice.starts = {0};
    slice.limits = {g.batch};
    slice.strides = {1};
    std::vector<int64_t> piece_dims = {g.batch};
    if (!by_window) piece_dims.push_back(1);
    for (int64_t s = 0; s < spatial; ++s) {
      const WindowDimension& w = attrs.window[s];
      if (by_window) {
        const int64_t start = index[s] * w.rhs_dilation;
        slice.starts.push_back(start);
        slice.limits.push_back(start + (g.out_size[s] - 1) * w.stride + 1);
        slice.strides.push_back(w.stride);
        piece_dims.push_back(g.out_size[s]);
      } else {
        const int64_t start = index[s] * w.stride;
        slice.starts.push_back(start);
        slice.limits.push_back(start + (g.window[s] - 1) * w.rhs_dilation + 1);
        slice.strides.push_back(w.rhs_dilation);
        piece_dims.push_back(g.window[s]);
      }
    }
    if (by_window) piece_dims.push_back(1);
    slice.starts.push_back(0);
    slice.limits.push_back(g.features);
    slice.strides.push_back(1);
    piece_dims.push_back(g.features);
    pieces.push_back(chain.Reshape(chain.Slice(x, std::move(slice)), piece_dims));
    for (int64_t s = spatial - 1; s >= 0; --s) {
      if (++index[s] < outer[s]) break;
      index[s] = 0;
    }
  }
  Instruction* stacked = pieces.front();
  if (pieces.size() > 1) {
    std::vector<int64_t> dims(pieces.front()->shape().dims().begin(),
                              pieces.front()->shape().dims().end());
    const int64_t axis = by_window ? spatial + 1 : 1;
    dims[axis] = count;
    stacked = chain.Add(Opcode::kConcatenate, Shape::Array(type, dims), pieces);
    stacked->mutable_dimensions().assign({axis});
  }
  const int64_t rows = g.batch * g.out_positions;
  const int64_t cols = g.window_positions * g.group_in;
  Instruction* matrix;
  if (g.groups == 1) {
    matrix = chain.Reshape(stacked, {rows, cols});
  } else {
    Instruction* split = chain.Reshape(
        stacked, {g.batch, g.out_positions, g.window_positions, g.groups, g.group_in});
    matrix = chain.Reshape(chain.Transpose(split, {3, 0, 1, 2, 4}), {g.groups, rows, cols});
  }
  return chain.Fuse(matrix);
}

// The kernel as [groups,] (window position, input feature) x output feature
// of the group, reversed where the window asks, as one fusion.
absl::StatusOr<Instruction*> PackedKernel(Rewriter& rewriter, Instruction* conv,
                                          const ConvGeometry& g) {
  const auto& attrs = conv->attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& d = attrs.dims;
  FusionChain chain(rewriter, conv->parent());
  Instruction* k = conv->operand(1);
  std::vector<int64_t> reversed;
  for (size_t s = 0; s < attrs.window.size(); ++s) {
    if (attrs.window[s].reversal) reversed.push_back(d.kernel_spatial[s]);
  }
  if (!reversed.empty()) {
    Instruction* r = chain.Add(Opcode::kReverse, k->shape(), {k});
    r->mutable_dimensions().assign(reversed.begin(), reversed.end());
    k = r;
  }
  std::vector<int64_t> perm(d.kernel_spatial.begin(), d.kernel_spatial.end());
  perm.push_back(d.kernel_input_feature);
  perm.push_back(d.kernel_output_feature);
  k = chain.Transpose(k, perm);  // [window..., input feature, output feature]
  const int64_t rows = g.window_positions * g.group_in;
  if (g.groups == 1) return chain.Fuse(chain.Reshape(k, {rows, g.out_features}));
  const int64_t group_out = g.out_features / g.groups;
  Instruction* split = chain.Reshape(k, {g.window_positions, g.group_in, g.groups, group_out});
  return chain.Fuse(
      chain.Reshape(chain.Transpose(split, {2, 0, 1, 3}), {g.groups, rows, group_out}));
}

// The product [groups,] rows x output features put back into `conv`'s
// dimension order, as one fusion.
absl::StatusOr<Instruction*> OutputOfProduct(Rewriter& rewriter, Instruction* conv,
                                             Instruction* product, const ConvGeometry& g) {
  const ConvolutionDimensions& d = conv->attrs<ConvolutionAttrs>().dims;
  const int64_t spatial = static_cast<int64_t>(g.window.size());
  FusionChain chain(rewriter, conv->parent());
  std::vector<int64_t> dims = {g.batch};
  dims.insert(dims.end(), g.out_size.begin(), g.out_size.end());
  Instruction* y;  // [batch, output spatial..., output feature]
  if (g.groups == 1) {
    dims.push_back(g.out_features);
    y = chain.Reshape(product, dims);
  } else {
    std::vector<int64_t> grouped = {g.groups};
    grouped.insert(grouped.end(), dims.begin(), dims.end());
    grouped.push_back(g.out_features / g.groups);
    std::vector<int64_t> perm;
    for (int64_t i = 1; i <= spatial + 1; ++i) perm.push_back(i);
    perm.push_back(0);
    perm.push_back(spatial + 2);
    dims.push_back(g.out_features);
    y = chain.Reshape(chain.Transpose(chain.Reshape(product, grouped), perm), dims);
  }
  std::vector<int64_t> to_output(static_cast<size_t>(spatial + 2));
  to_output[d.output_batch] = 0;
  for (int64_t s = 0; s < spatial; ++s) to_output[d.output_spatial[s]] = s + 1;
  to_output[d.output_feature] = spatial + 1;
  return chain.Fuse(chain.Transpose(y, to_output));
}

absl::Status Lower(Rewriter& rewriter, Instruction* conv, const ConvGeometry& g) {
  ASSIGN_OR_RETURN(Instruction * lhs, Im2col(rewriter, conv, g));
  ASSIGN_OR_RETURN(Instruction * rhs, PackedKernel(rewriter, conv, g));
  const auto& attrs = conv->attrs<ConvolutionAttrs>();
  DotAttrs dot_attrs;
  dot_attrs.precision = attrs.precision;
  std::vector<int64_t> dims;
  if (g.groups == 1) {
    dot_attrs.dims = {{}, {1}, {}, {0}};
    dims = {g.batch * g.out_positions, g.out_features};
  } else {
    dot_attrs.dims = {{0}, {2}, {0}, {1}};
    dims = {g.groups, g.batch * g.out_positions, g.out_features / g.groups};
  }
  Instruction* product =
      rewriter.Add(conv->parent(),
                   Instruction::Create(
                       Opcode::kDot, Shape::Array(conv->shape().element_type(), dims), {lhs, rhs}));
  product->mutable_attrs<DotAttrs>() = std::move(dot_attrs);
  ASSIGN_OR_RETURN(Instruction * result, OutputOfProduct(rewriter, conv, product, g));
  return rewriter.Replace(conv, result);
}

}  // namespace

std::string ConvolutionToGemmRefusal(const Instruction& conv) {
  std::string why;
  Geometry(conv, why);
  return why;
}

absl::StatusOr<bool> ConvolutionToGemmPass::Run(Module& module, Rewriter& rewriter) {
  return LowerEach(
      module, rewriter, name(), Opcode::kConvolution,
      [](const Instruction& conv) { return ConvolutionToGemmRefusal(conv).empty(); },
      [&](Instruction* conv) {
        std::string why;
        return Lower(rewriter, conv, Geometry(*conv, why));
      });
}

}  // namespace hlogym

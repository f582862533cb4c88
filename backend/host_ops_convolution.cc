// convolution as im2col + GEMM. Rows are (batch, output position), columns
// (window position, input feature of the group); the kernel is packed to
// [group][window position, input feature][output feature of the group].
#include <algorithm>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "backend/buffer_assignment.h"
#include "backend/host_ops.h"
#include "backend/host_ops_util.h"
#include "core/base/parallel.h"

namespace hlogym {
namespace {

// The im2col matrix is filled and multiplied this many bytes at a time, so
// a backward-filter convolution (few rows, huge windows) stays small.
constexpr int64_t kChunkBytes = int64_t{8} << 20;

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int64_t i = shape.rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape.dim(i + 1);
  return strides;
}

template <typename T>
class Im2colConvolution : public HostOp {
 public:
  explicit Im2colConvolution(const Instruction& conv) {
    const auto& attrs = conv.attrs<ConvolutionAttrs>();
    const ConvolutionDimensions& d = attrs.dims;
    const Shape& in = conv.operand(0)->shape();
    const Shape& kernel = conv.operand(1)->shape();
    const Shape& out = conv.shape();
    window_ = attrs.window;
    spatial_ = static_cast<int64_t>(d.input_spatial.size());
    groups_ = attrs.feature_group_count;
    batch_ = in.dim(d.input_batch);
    group_in_ = kernel.dim(d.kernel_input_feature);
    out_features_ = kernel.dim(d.kernel_output_feature);
    group_out_ = out_features_ / groups_;
    const std::vector<int64_t> in_strides = RowMajorStrides(in);
    const std::vector<int64_t> kernel_strides = RowMajorStrides(kernel);
    in_batch_stride_ = in_strides[d.input_batch];
    in_feature_stride_ = in_strides[d.input_feature];
    kernel_in_stride_ = kernel_strides[d.kernel_input_feature];
    kernel_out_stride_ = kernel_strides[d.kernel_output_feature];
    window_positions_ = 1;
    out_positions_ = 1;
    for (int64_t s = 0; s < spatial_; ++s) {
      in_size_.push_back(in.dim(d.input_spatial[s]));
      in_spatial_stride_.push_back(in_strides[d.input_spatial[s]]);
      kernel_size_.push_back(kernel.dim(d.kernel_spatial[s]));
      kernel_spatial_stride_.push_back(kernel_strides[d.kernel_spatial[s]]);
      out_size_.push_back(out.dim(d.output_spatial[s]));
      window_positions_ *= kernel.dim(d.kernel_spatial[s]);
      out_positions_ *= out.dim(d.output_spatial[s]);
    }
    rows_ = batch_ * out_positions_;
    cols_ = window_positions_ * group_in_;
    chunk_rows_ = std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(cols_ * sizeof(T), 1), 1,
                                      std::max<int64_t>(rows_, 1));
    col_ = ScratchBuffer(chunk_rows_ * cols_ * sizeof(T));

    // The kernel is used in place when it already is [window..., in, out]
    // with one group and no reversal.
    bool kernel_in_place = groups_ == 1;
    for (int64_t s = 0; s < spatial_; ++s) {
      kernel_in_place &= d.kernel_spatial[s] == s && !window_[s].reversal;
    }
    kernel_in_place &= d.kernel_input_feature == spatial_ && d.kernel_output_feature == spatial_ + 1;
    if (!kernel_in_place) packed_kernel_ = ScratchBuffer(LeafBytes(kernel));

    // The output is written in place when it is [batch, positions..., feature].
    bool out_in_place = d.output_batch == 0 && d.output_feature == spatial_ + 1;
    for (int64_t s = 0; s < spatial_; ++s) out_in_place &= d.output_spatial[s] == s + 1;
    if (!out_in_place) {
      out_scratch_ = ScratchBuffer(rows_ * out_features_ * sizeof(T));
      // From [batch, positions..., feature] to the output's dimension order.
      out_scratch_dims_.push_back(batch_);
      for (int64_t s = 0; s < spatial_; ++s) out_scratch_dims_.push_back(out_size_[s]);
      out_scratch_dims_.push_back(out_features_);
      out_perm_.assign(out.rank(), 0);
      out_perm_[d.output_batch] = 0;
      for (int64_t s = 0; s < spatial_; ++s) out_perm_[d.output_spatial[s]] = s + 1;
      out_perm_[d.output_feature] = spatial_ + 1;
    }
  }

  absl::Status Run(void* const* buffers) override {
    const T* in = static_cast<const T*>(buffers[0]);
    const T* kernel = static_cast<const T*>(buffers[1]);
    if (!packed_kernel_.empty()) {
      T* packed = static_cast<T*>(packed_kernel_.data());
      PackKernel(kernel, packed);
      kernel = packed;
    }
    T* out = static_cast<T*>(out_scratch_.empty() ? buffers[2] : out_scratch_.data());
    T* col = static_cast<T*>(col_.data());
    const bool f64 = sizeof(T) == 8;
    for (int64_t g = 0; g < groups_; ++g) {
      for (int64_t r0 = 0; r0 < rows_; r0 += chunk_rows_) {
        const int64_t r1 = std::min(rows_, r0 + chunk_rows_);
        FillColumns(in, g, r0, r1, col);
        Gemm(f64, false, false, r1 - r0, group_out_, cols_, col, cols_,
             kernel + g * cols_ * group_out_, group_out_, out + r0 * out_features_ + g * group_out_,
             out_features_);
      }
    }
    if (!out_scratch_.empty()) PermuteDense(out, buffers[2], out_scratch_dims_, out_perm_, sizeof(T));
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "im2col-conv"; }

 private:
  // packed[g][window position][c][o] = kernel[c, g*group_out + o, window (reversed where asked)].
  void PackKernel(const T* kernel, T* packed) const {
    const int64_t row_count = groups_ * window_positions_ * group_in_;
    ParallelFor(0, row_count, 64, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t c = row % group_in_;
        int64_t w = (row / group_in_) % window_positions_;
        const int64_t g = row / (group_in_ * window_positions_);
        int64_t from = c * kernel_in_stride_ + g * group_out_ * kernel_out_stride_;
        for (int64_t s = spatial_ - 1; s >= 0; --s) {
          int64_t k = w % kernel_size_[s];
          w /= kernel_size_[s];
          if (window_[s].reversal) k = kernel_size_[s] - 1 - k;
          from += k * kernel_spatial_stride_[s];
        }
        T* to = packed + row * group_out_;
        for (int64_t o = 0; o < group_out_; ++o) to[o] = kernel[from + o * kernel_out_stride_];
      }
    });
  }

  // col[r - r0][w * group_in + c] = the input under window position w of row r.
  void FillColumns(const T* in, int64_t g, int64_t r0, int64_t r1, T* col) const {
    ParallelFor(r0, r1, 16, [&](int64_t begin, int64_t end) {
      // Inline storage: a timed run must not touch the heap.
      absl::InlinedVector<int64_t, 8> y(spatial_), k(spatial_);
      for (int64_t r = begin; r < end; ++r) {
        int64_t rest = r;
        for (int64_t s = spatial_ - 1; s >= 0; --s) {
          y[s] = rest % out_size_[s];
          rest /= out_size_[s];
        }
        const int64_t b = rest;
        const T* base = in + b * in_batch_stride_ + g * group_in_ * in_feature_stride_;
        T* to = col + (r - r0) * cols_;
        std::fill(k.begin(), k.end(), 0);
        for (int64_t w = 0; w < window_positions_; ++w, to += group_in_) {
          int64_t offset = 0;
          bool inside = true;
          for (int64_t s = 0; s < spatial_ && inside; ++s) {
            const WindowDimension& wd = window_[s];
            int64_t p = y[s] * wd.stride - wd.padding_low + k[s] * wd.rhs_dilation;
            if (wd.lhs_dilation > 1) {
              if (p % wd.lhs_dilation != 0) inside = false;
              p = p >= 0 ? p / wd.lhs_dilation : -1;
            }
            if (p < 0 || p >= in_size_[s]) inside = false;
            offset += p * in_spatial_stride_[s];
          }
          if (inside) {
            const T* from = base + offset;
            for (int64_t c = 0; c < group_in_; ++c) to[c] = from[c * in_feature_stride_];
          } else {
            std::fill(to, to + group_in_, T(0));
          }
          for (int64_t s = spatial_ - 1; s >= 0; --s) {
            if (++k[s] < kernel_size_[s]) break;
            k[s] = 0;
          }
        }
      }
    });
  }

  Window window_;
  int64_t spatial_ = 0, groups_ = 1, batch_ = 1, group_in_ = 1, group_out_ = 1, out_features_ = 1;
  int64_t in_batch_stride_ = 0, in_feature_stride_ = 0, kernel_in_stride_ = 0, kernel_out_stride_ = 0;
  std::vector<int64_t> in_size_, in_spatial_stride_, kernel_size_, kernel_spatial_stride_, out_size_;
  int64_t window_positions_ = 1, out_positions_ = 1, rows_ = 0, cols_ = 0, chunk_rows_ = 1;
  ScratchBuffer col_, packed_kernel_, out_scratch_;
  std::vector<int64_t> out_scratch_dims_, out_perm_;
};

}  // namespace

std::unique_ptr<HostOp> MakeIm2colConvolution(const Instruction& conv) {
  if (conv.opcode() != Opcode::kConvolution || conv.operand_count() != 2 ||
      !conv.has_attrs<ConvolutionAttrs>()) {
    return nullptr;
  }
  const auto& attrs = conv.attrs<ConvolutionAttrs>();
  const PrimitiveType type = conv.shape().element_type();
  if (conv.operand(0)->shape().element_type() != type ||
      conv.operand(1)->shape().element_type() != type) {
    return nullptr;
  }
  const ConvolutionDimensions& d = attrs.dims;
  const int64_t spatial = static_cast<int64_t>(d.input_spatial.size());
  if (attrs.batch_group_count != 1 || attrs.feature_group_count < 1 ||
      static_cast<int64_t>(attrs.window.size()) != spatial ||
      static_cast<int64_t>(d.kernel_spatial.size()) != spatial ||
      static_cast<int64_t>(d.output_spatial.size()) != spatial) {
    return nullptr;
  }
  const Shape& in = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const int64_t groups = attrs.feature_group_count;
  if (kernel.dim(d.kernel_output_feature) % groups != 0 ||
      in.dim(d.input_feature) != kernel.dim(d.kernel_input_feature) * groups) {
    return nullptr;
  }
  for (const WindowDimension& w : attrs.window) {
    if (w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1) return nullptr;
  }
  if (type == PrimitiveType::kF32) return std::make_unique<Im2colConvolution<float>>(conv);
  if (type == PrimitiveType::kF64) return std::make_unique<Im2colConvolution<double>>(conv);
  return nullptr;
}

}  // namespace hlogym

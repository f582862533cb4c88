// convolution with any dim_labels, strides, padding, dilations, window
// reversal, feature and batch groups, as im2col + GEMM: for each group, a
// matrix of input patches (one row per output position, one column per
// window element and input feature) times the kernel matrix. Real floats
// only: f64 in double (dgemm), f32/bf16/f16 in single precision (sgemm), as
// XLA:CPU computes them; the result is rounded to the output type.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/eval/float_codec.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c);
template <>
void Gemm<float>(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}
template <>
void Gemm<double>(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}

// All of a literal's elements as T.
template <typename T>
std::vector<T> ToVector(const Literal& literal) {
  std::vector<T> values(literal.element_count());
  VisitFloatCodec(literal.shape().element_type(), [&](auto codec) {
    const uint8_t* data = literal.raw_data();
    ParallelFor(static_cast<int64_t>(values.size()), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) values[i] = static_cast<T>(codec.Load(data, i));
    });
  });
  return values;
}

template <typename T>
absl::Status Convolve(const Instruction& inst, const Literal& lhs, const Literal& rhs,
                      Literal& out) {
  const auto& a = inst.attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& cd = a.dims;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape& os = out.shape();
  const int64_t spatial = static_cast<int64_t>(cd.input_spatial.size());
  const std::vector<int64_t> l_strides = Strides(ls.dims());
  const std::vector<int64_t> r_strides = Strides(rs.dims());
  const std::vector<int64_t> o_strides = Strides(os.dims());
  const int64_t G = a.feature_group_count, BG = a.batch_group_count;
  const int64_t groups = std::max(G, BG);
  const int64_t out_features = os.dim(cd.output_feature);
  const int64_t group_features = out_features / groups;
  const int64_t kernel_in = rs.dim(cd.kernel_input_feature);
  const int64_t out_batch = os.dim(cd.output_batch);
  std::vector<int64_t> window_sizes, out_spatial_sizes;
  for (int64_t d : cd.kernel_spatial) window_sizes.push_back(rs.dim(d));
  for (int64_t d : cd.output_spatial) out_spatial_sizes.push_back(os.dim(d));
  const int64_t window_count = Product(window_sizes);
  const int64_t positions = out_batch * Product(out_spatial_sizes);
  const int64_t columns = window_count * kernel_in;  // the GEMM's contraction
  if (positions == 0 || out_features == 0) return absl::OkStatus();

  const std::vector<T> lv = ToVector<T>(lhs);
  const std::vector<T> rv = ToVector<T>(rhs);
  // Window element w: its index per spatial dimension.
  std::vector<int64_t> window_index(window_count * spatial);
  {
    std::vector<int64_t> wi(spatial, 0);
    for (int64_t w = 0; w < window_count; ++w, Next(window_sizes, wi)) {
      std::copy(wi.begin(), wi.end(), window_index.begin() + w * spatial);
    }
  }
  // Rows per block, so a block of patches stays around 64 MiB.
  const int64_t block_rows =
      std::max<int64_t>(1, std::min(positions, (int64_t{8} << 20) / std::max<int64_t>(1, columns)));
  std::vector<T> patches(block_rows * columns), kernel(columns * group_features),
      result(block_rows * group_features);
  const int64_t l_feature_stride = l_strides[cd.input_feature];

  for (int64_t group = 0; group < groups; ++group) {
    const int64_t feature_offset = G > 1 ? group * kernel_in : 0;
    const int64_t batch_offset = BG > 1 ? group * out_batch : 0;
    // Kernel matrix: row w * kernel_in + c, column j (output feature).
    for (int64_t w = 0; w < window_count; ++w) {
      int64_t r_off = 0;
      for (int64_t s = 0; s < spatial; ++s) {
        const WindowDimension& wd = a.window[s];
        const int64_t i = window_index[w * spatial + s];
        r_off += (wd.reversal ? wd.size - 1 - i : i) * r_strides[cd.kernel_spatial[s]];
      }
      for (int64_t c = 0; c < kernel_in; ++c) {
        for (int64_t j = 0; j < group_features; ++j) {
          kernel[(w * kernel_in + c) * group_features + j] =
              rv[r_off + c * r_strides[cd.kernel_input_feature] +
                 (group * group_features + j) * r_strides[cd.kernel_output_feature]];
        }
      }
    }
    for (int64_t first = 0; first < positions; first += block_rows) {
      const int64_t rows = std::min(block_rows, positions - first);
      // Patches: row p (output batch, output spatial position).
      ParallelFor(rows, [&](int64_t lo, int64_t hi) {
        std::vector<int64_t> pi(spatial + 1);
        std::vector<int64_t> p_dims = {out_batch};
        p_dims.insert(p_dims.end(), out_spatial_sizes.begin(), out_spatial_sizes.end());
        for (int64_t r = lo; r < hi; ++r) {
          Unflatten(first + r, p_dims, pi.data());
          T* row = patches.data() + r * columns;
          const int64_t l_batch = (batch_offset + pi[0]) * l_strides[cd.input_batch] +
                                  feature_offset * l_feature_stride;
          for (int64_t w = 0; w < window_count; ++w) {
            T* dst = row + w * kernel_in;
            int64_t l_off = l_batch;
            bool inside = true;
            for (int64_t s = 0; s < spatial && inside; ++s) {
              const WindowDimension& wd = a.window[s];
              const int64_t pos = pi[s + 1] * wd.stride +
                                  window_index[w * spatial + s] * wd.rhs_dilation - wd.padding_low;
              if (pos < 0 || pos % wd.lhs_dilation != 0) {
                inside = false;
                break;
              }
              const int64_t src = pos / wd.lhs_dilation;
              if (src >= ls.dim(cd.input_spatial[s])) inside = false;
              l_off += src * l_strides[cd.input_spatial[s]];
            }
            if (!inside) {
              std::fill(dst, dst + kernel_in, T{0});
            } else if (l_feature_stride == 1) {
              std::copy(lv.data() + l_off, lv.data() + l_off + kernel_in, dst);
            } else {
              for (int64_t c = 0; c < kernel_in; ++c) dst[c] = lv[l_off + c * l_feature_stride];
            }
          }
        }
      }, columns);
      Gemm<T>(rows, group_features, columns, patches.data(), kernel.data(), result.data());
      VisitFloatCodec(os.element_type(), [&](auto codec) {
        uint8_t* data = out.raw_data();
        ParallelFor(rows, [&](int64_t lo, int64_t hi) {
          std::vector<int64_t> pi(spatial + 1);
          std::vector<int64_t> p_dims = {out_batch};
          p_dims.insert(p_dims.end(), out_spatial_sizes.begin(), out_spatial_sizes.end());
          for (int64_t r = lo; r < hi; ++r) {
            Unflatten(first + r, p_dims, pi.data());
            int64_t o_off = pi[0] * o_strides[cd.output_batch] +
                            group * group_features * o_strides[cd.output_feature];
            for (int64_t s = 0; s < spatial; ++s) o_off += pi[s + 1] * o_strides[cd.output_spatial[s]];
            for (int64_t j = 0; j < group_features; ++j) {
              codec.Store(data, o_off + j * o_strides[cd.output_feature],
                          result[r * group_features + j]);
            }
          }
        }, group_features);
      });
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Shape& os = inst.shape();
  for (PrimitiveType t : {lhs.shape().element_type(), rhs.shape().element_type(), os.element_type()}) {
    if (!HasFloatCodec(t)) {
      return absl::UnimplementedError(absl::StrCat(
          "not supported: convolution of ", std::string(PrimitiveTypeName(t)),
          " in instruction `", inst.name(), "`"));
    }
  }
  const auto& a = inst.attrs<ConvolutionAttrs>();
  if (a.feature_group_count > 1 && a.batch_group_count > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "not supported: convolution with both feature_group_count and batch_group_count above 1"
        " in instruction `", inst.name(), "`"));
  }
  Literal out(os);
  const bool f64 = lhs.shape().element_type() == PrimitiveType::kF64 ||
                   os.element_type() == PrimitiveType::kF64;
  absl::Status status = f64 ? Convolve<double>(inst, lhs, rhs, out)
                            : Convolve<float>(inst, lhs, rhs, out);
  if (!status.ok()) return status;
  return out;
}

}  // namespace hlogym

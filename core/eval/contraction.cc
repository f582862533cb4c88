// dot (any batch and contracting dimensions; f32/f64 and narrow floats on
// OpenBLAS, integers and complex by plain loops) and convolution (any
// dim_labels, strides, padding, dilations, feature and batch groups).
#include <cblas.h>

#include <algorithm>
#include <complex>

#include "absl/strings/str_cat.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

// Linear offsets of every combination of `dims` of a shape, row-major in the
// order the dims are listed.
std::vector<int64_t> Offsets(const Shape& shape, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = Strides(shape.dims());
  std::vector<int64_t> sizes;
  for (int64_t d : dims) sizes.push_back(shape.dim(d));
  std::vector<int64_t> offsets(Product(sizes));
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t o = 0;
    for (size_t j = 0; j < dims.size(); ++j) o += index[j] * strides[dims[j]];
    offsets[i] = o;
    Next(sizes, index);
  }
  return offsets;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const DotDimensions& dd = inst.attrs<DotAttrs>().dims;
  const std::vector<int64_t> ob = Offsets(lhs.shape(), dd.lhs_batch);
  const std::vector<int64_t> om =
      Offsets(lhs.shape(), FreeDims(lhs.shape().rank(), dd.lhs_batch, dd.lhs_contracting));
  const std::vector<int64_t> ok = Offsets(lhs.shape(), dd.lhs_contracting);
  const std::vector<int64_t> rb = Offsets(rhs.shape(), dd.rhs_batch);
  const std::vector<int64_t> rk = Offsets(rhs.shape(), dd.rhs_contracting);
  const std::vector<int64_t> rn =
      Offsets(rhs.shape(), FreeDims(rhs.shape().rank(), dd.rhs_batch, dd.rhs_contracting));
  const int64_t B = ob.size(), M = om.size(), K = ok.size(), N = rn.size();
  Literal out(inst.shape());
  const PrimitiveType in_type = lhs.shape().element_type();
  const PrimitiveType out_type = inst.shape().element_type();

  if (IsFloat(in_type) && IsFloat(rhs.shape().element_type()) && IsFloat(out_type)) {
    const bool f64 = in_type == PrimitiveType::kF64 || out_type == PrimitiveType::kF64;
    std::vector<double> a(B * M * K), b(B * K * N), c(B * M * N);
    for (int64_t x = 0; x < B; ++x)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) a[(x * M + m) * K + k] = lhs.GetAsDouble(ob[x] + om[m] + ok[k]);
    for (int64_t x = 0; x < B; ++x)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) b[(x * K + k) * N + n] = rhs.GetAsDouble(rb[x] + rk[k] + rn[n]);
    if (f64) {
      for (int64_t x = 0; x < B; ++x) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a.data() + x * M * K, K,
                    b.data() + x * K * N, N, 0.0, c.data() + x * M * N, N);
      }
    } else {
      // Single precision, as XLA computes f32 (and upcast f16/bf16) dots.
      std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(c.size());
      for (int64_t x = 0; x < B; ++x) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, af.data() + x * M * K,
                    K, bf.data() + x * K * N, N, 0.0f, cf.data() + x * M * N, N);
      }
      std::copy(cf.begin(), cf.end(), c.begin());
    }
    for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, c[i]);
    return out;
  }
  // Integers, pred and complex: exact loops in the output type's arithmetic.
  ParallelFor(B * M * N, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t x = i / (M * N), m = (i / N) % M, n = i % N;
      if (IsComplex(out_type)) {
        std::complex<double> sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          sum += lhs.GetAsComplex(ob[x] + om[m] + ok[k]) * rhs.GetAsComplex(rb[x] + rk[k] + rn[n]);
        }
        out.SetFromComplex(i, sum);
      } else {
        uint64_t sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          sum += static_cast<uint64_t>(lhs.GetAsInt64(ob[x] + om[m] + ok[k])) *
                 static_cast<uint64_t>(rhs.GetAsInt64(rb[x] + rk[k] + rn[n]));
        }
        out.SetFromInt64(i, static_cast<int64_t>(sum));
      }
    }
  });
  return out;
}

absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const auto& a = inst.attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& cd = a.dims;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape& os = inst.shape();
  if (!IsFloat(ls.element_type()) || !IsFloat(os.element_type())) {
    return absl::UnimplementedError(absl::StrCat(
        "not supported: convolution of ", std::string(PrimitiveTypeName(ls.element_type())),
        " in instruction `", inst.name(), "`"));
  }
  const int64_t spatial = static_cast<int64_t>(cd.input_spatial.size());
  const std::vector<int64_t> ls_strides = Strides(ls.dims());
  const std::vector<int64_t> rs_strides = Strides(rs.dims());
  const int64_t G = a.feature_group_count, BG = a.batch_group_count;
  const int64_t out_features = os.dim(cd.output_feature);
  const int64_t kernel_in = rs.dim(cd.kernel_input_feature);
  const int64_t out_batch = os.dim(cd.output_batch);
  std::vector<int64_t> kernel_sizes;
  for (int64_t d : cd.kernel_spatial) kernel_sizes.push_back(rs.dim(d));
  const int64_t window_count = Product(kernel_sizes);
  Literal out(os);
  // Converted once so the inner loop reads doubles, not typed elements.
  std::vector<double> lv(lhs.element_count()), rv(rhs.element_count());
  for (int64_t i = 0; i < lhs.element_count(); ++i) lv[i] = lhs.GetAsDouble(i);
  for (int64_t i = 0; i < rhs.element_count(); ++i) rv[i] = rhs.GetAsDouble(i);

  ParallelFor(out.element_count(), [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> oi(os.rank()), wi(spatial);
    for (int64_t i = lo; i < hi; ++i) {
      Unflatten(i, os.dims(), oi.data());
      const int64_t b = oi[cd.output_batch];
      const int64_t o = oi[cd.output_feature];
      const int64_t group = o / (out_features / G);
      const int64_t batch_group = o / (out_features / BG);
      const int64_t in_b = batch_group * out_batch + b;
      double sum = 0;
      std::fill(wi.begin(), wi.end(), 0);
      for (int64_t w = 0; w < window_count; ++w, Next(kernel_sizes, wi)) {
        int64_t l_off = in_b * ls_strides[cd.input_batch];
        int64_t r_off = o * rs_strides[cd.kernel_output_feature];
        bool inside = true;
        for (int64_t s = 0; s < spatial; ++s) {
          const WindowDimension& wd = a.window[s];
          const int64_t k = wd.reversal ? wd.size - 1 - wi[s] : wi[s];
          const int64_t pos = oi[cd.output_spatial[s]] * wd.stride + wi[s] * wd.rhs_dilation - wd.padding_low;
          if (pos < 0 || pos % wd.lhs_dilation != 0) {
            inside = false;
            break;
          }
          const int64_t src = pos / wd.lhs_dilation;
          if (src >= ls.dim(cd.input_spatial[s])) {
            inside = false;
            break;
          }
          l_off += src * ls_strides[cd.input_spatial[s]];
          r_off += k * rs_strides[cd.kernel_spatial[s]];
        }
        if (!inside) continue;
        for (int64_t c = 0; c < kernel_in; ++c) {
          const int64_t in_f = group * kernel_in + c;
          sum += lv[l_off + in_f * ls_strides[cd.input_feature]] *
                 rv[r_off + c * rs_strides[cd.kernel_input_feature]];
        }
      }
      out.SetFromDouble(i, sum);
    }
  });
  return out;
}

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, Operands) {
  return absl::UnimplementedError(absl::StrCat(
      "not supported: rng-bit-generator in instruction `", inst.name(),
      "` (XLA's Philox/ThreeFry bit streams are not reproduced yet)"));
}

}  // namespace hlogym

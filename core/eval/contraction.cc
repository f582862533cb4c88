// dot (any batch and contracting dimensions; real floats on OpenBLAS,
// integers and complex by plain loops).
#include <cblas.h>

#include <algorithm>
#include <complex>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/eval/float_codec.h"
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

// Packs both operands as [batch][rows][contraction] and [batch][contraction]
// [columns] matrices of T, multiplies them with BLAS, and rounds the result
// to the output type.
template <typename T>
void FloatDot(const Literal& lhs, const Literal& rhs, Literal& out,
              const std::vector<int64_t>& ob, const std::vector<int64_t>& om,
              const std::vector<int64_t>& ok, const std::vector<int64_t>& rb,
              const std::vector<int64_t>& rk, const std::vector<int64_t>& rn) {
  const int64_t B = ob.size(), M = om.size(), K = ok.size(), N = rn.size();
  std::vector<T> a(B * M * K), b(B * K * N), c(B * M * N);
  VisitFloatCodec(lhs.shape().element_type(), [&](auto codec) {
    const uint8_t* data = lhs.raw_data();
    ParallelFor(B * M, [&](int64_t lo, int64_t hi) {
      for (int64_t xm = lo; xm < hi; ++xm) {
        const int64_t base = ob[xm / M] + om[xm % M];
        T* row = a.data() + xm * K;
        for (int64_t k = 0; k < K; ++k) row[k] = static_cast<T>(codec.Load(data, base + ok[k]));
      }
    }, K);
  });
  VisitFloatCodec(rhs.shape().element_type(), [&](auto codec) {
    const uint8_t* data = rhs.raw_data();
    ParallelFor(B * K, [&](int64_t lo, int64_t hi) {
      for (int64_t xk = lo; xk < hi; ++xk) {
        const int64_t base = rb[xk / K] + rk[xk % K];
        T* row = b.data() + xk * N;
        for (int64_t n = 0; n < N; ++n) row[n] = static_cast<T>(codec.Load(data, base + rn[n]));
      }
    }, N);
  });
  for (int64_t x = 0; x < B; ++x) {
    if constexpr (std::is_same_v<T, double>) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a.data() + x * M * K, K,
                  b.data() + x * K * N, N, 0.0, c.data() + x * M * N, N);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data() + x * M * K,
                  K, b.data() + x * K * N, N, 0.0f, c.data() + x * M * N, N);
    }
  }
  VisitFloatCodec(out.shape().element_type(), [&](auto codec) {
    uint8_t* data = out.raw_data();
    ParallelFor(static_cast<int64_t>(c.size()), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) codec.Store(data, i, c[i]);
    });
  });
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

  const PrimitiveType rhs_type = rhs.shape().element_type();
  if (HasFloatCodec(in_type) && HasFloatCodec(rhs_type) && HasFloatCodec(out_type)) {
    const bool f64 = in_type == PrimitiveType::kF64 || out_type == PrimitiveType::kF64;
    if (f64) {
      FloatDot<double>(lhs, rhs, out, ob, om, ok, rb, rk, rn);
    } else {
      // Single precision, as XLA computes f32 (and upcast f16/bf16) dots.
      FloatDot<float>(lhs, rhs, out, ob, om, ok, rb, rk, rn);
    }
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

}  // namespace hlogym

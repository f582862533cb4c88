#include "backend/host_ops_util.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "absl/container/inlined_vector.h"
#include "core/base/parallel.h"
#include "core/ir/float_formats.h"

namespace hlogym {
namespace {

// Index vectors live inline up to this rank: host ops permute inside timed
// runs, which must not touch the heap.
using Dims = absl::InlinedVector<int64_t, 8>;

template <typename T>
void Permute(const T* in, T* out, const Dims& out_dims, const Dims& in_strides_by_out,
             int64_t total) {
  const int64_t rank = static_cast<int64_t>(out_dims.size());
  if (rank == 0) {
    if (total > 0) out[0] = in[0];
    return;
  }
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = in_strides_by_out[rank - 1];
  const int64_t rows = inner == 0 ? 0 : total / inner;
  auto body = [&](int64_t begin, int64_t end) {
    Dims index(rank, 0);
    // Multi-index of the first row of the range (the last dim is 0).
    int64_t row = begin;
    for (int64_t d = rank - 2; d >= 0; --d) {
      index[d] = row % out_dims[d];
      row /= out_dims[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      int64_t from = 0;
      for (int64_t d = 0; d + 1 < rank; ++d) from += index[d] * in_strides_by_out[d];
      T* to = out + r * inner;
      for (int64_t i = 0; i < inner; ++i) to[i] = in[from + i * inner_stride];
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++index[d] < out_dims[d]) break;
        index[d] = 0;
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1));
  if (rows <= grain) {
    body(0, rows);
  } else {
    ParallelFor(0, rows, grain, body);
  }
}

}  // namespace

bool IsInOrder(absl::Span<const int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

void PermuteDense(const void* in, void* out, absl::Span<const int64_t> in_dims,
                  absl::Span<const int64_t> perm, int element_bytes) {
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  Dims in_strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * in_dims[i + 1];
  Dims out_dims(rank), strides_by_out(rank);
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    strides_by_out[i] = in_strides[perm[i]];
    total *= out_dims[i];
  }
  switch (element_bytes) {
    case 4:
      Permute(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), out_dims,
              strides_by_out, total);
      return;
    case 8:
      Permute(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), out_dims,
              strides_by_out, total);
      return;
    case 2:
      Permute(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), out_dims,
              strides_by_out, total);
      return;
    default:
      break;
  }
  // Other widths: permute element indices of a byte array of that width.
  for (int64_t i = 0; i < rank; ++i) strides_by_out[i] *= element_bytes;
  const auto* from = static_cast<const uint8_t*>(in);
  auto* to = static_cast<uint8_t*>(out);
  Dims index(rank, 0);
  for (int64_t e = 0; e < total; ++e) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += index[d] * strides_by_out[d];
    std::memcpy(to + e * element_bytes, from + offset, element_bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
}

void Gemm(bool f64, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
          const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  const CBLAS_TRANSPOSE ta = transpose_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transpose_b ? CblasTrans : CblasNoTrans;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      std::memset(static_cast<uint8_t*>(c) + i * ldc * (f64 ? 8 : 4), 0, n * (f64 ? 8 : 4));
    }
    return;
  }
  if (f64) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, static_cast<const double*>(a), lda,
                static_cast<const double*>(b), ldb, 0.0, static_cast<double*>(c), ldc);
  } else {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, static_cast<const float*>(a), lda,
                static_cast<const float*>(b), ldb, 0.0f, static_cast<float*>(c), ldc);
  }
}

namespace {

void ForChunks(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  constexpr int64_t kGrain = 1 << 15;
  if (n <= kGrain) {
    body(0, n);
    return;
  }
  ParallelFor(0, n, kGrain, body);
}

// All 65536 f16 values as floats, made once.
const std::vector<float>& HalfTable() {
  static const std::vector<float>* table = [] {
    auto* t = new std::vector<float>(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      (*t)[bits] = HalfBitsToFloat(static_cast<uint16_t>(bits));
    }
    return t;
  }();
  return *table;
}

}  // namespace

void WidenToFloat(PrimitiveType type, const void* in, float* out, int64_t n) {
  if (type == PrimitiveType::kF32) {
    std::memcpy(out, in, n * sizeof(float));
    return;
  }
  const auto* bits = static_cast<const uint16_t*>(in);
  if (type == PrimitiveType::kBF16) {
    ForChunks(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const uint32_t wide = static_cast<uint32_t>(bits[i]) << 16;
        std::memcpy(&out[i], &wide, sizeof(float));
      }
    });
    return;
  }
  const std::vector<float>& table = HalfTable();
  ForChunks(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) out[i] = table[bits[i]];
  });
}

void NarrowFromFloat(PrimitiveType type, const float* in, void* out, int64_t n) {
  if (type == PrimitiveType::kF32) {
    std::memcpy(out, in, n * sizeof(float));
    return;
  }
  auto* bits = static_cast<uint16_t*>(out);
  if (type == PrimitiveType::kBF16) {
    ForChunks(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        uint32_t u;
        std::memcpy(&u, &in[i], sizeof(u));
        if ((u & 0x7fffffffu) > 0x7f800000u) {
          bits[i] = FloatToBF16Bits(in[i]);  // NaN: the format's own rule
        } else {
          bits[i] = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        }
      }
    });
    return;
  }
  ForChunks(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) bits[i] = FloatToHalfBits(in[i]);
  });
}

std::vector<int64_t> FreeDims(int64_t rank, absl::Span<const int64_t> batch,
                              absl::Span<const int64_t> contracting) {
  std::vector<bool> used(rank, false);
  for (int64_t d : batch) used[d] = true;
  for (int64_t d : contracting) used[d] = true;
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[d]) free.push_back(d);
  }
  return free;
}

ScratchBuffer::ScratchBuffer(size_t bytes) {
  if (bytes == 0) return;
  storage_ = std::make_unique_for_overwrite<uint8_t[]>(bytes + 64);
  const auto address = reinterpret_cast<uintptr_t>(storage_.get());
  offset_ = (64 - address % 64) % 64;
}

}  // namespace hlogym

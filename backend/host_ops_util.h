// Helpers shared by the BLAS-backed host ops: permuting dense arrays and a
// GEMM that dispatches on float or double.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/ir/primitive_type.h"

namespace hlogym {

// out = in with dimensions permuted: out's dimension i is in's dimension
// perm[i]. Both dense row-major; `element_bytes` is 4 or 8 (others copy
// byte-wise). Runs in parallel on large arrays.
void PermuteDense(const void* in, void* out, absl::Span<const int64_t> in_dims,
                  absl::Span<const int64_t> perm, int element_bytes);

// Whether `perm` is 0, 1, 2, ...
bool IsInOrder(absl::Span<const int64_t> perm);

// A dot operand's free dimensions: those neither batch nor contracting, in order.
std::vector<int64_t> FreeDims(int64_t rank, absl::Span<const int64_t> batch,
                              absl::Span<const int64_t> contracting);

// C[m x n] = op(A) * op(B), row-major, for float or double (f64 when
// `f64`); op transposes when asked. K == 0 gives zeros.
void Gemm(bool f64, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
          const void* a, int64_t lda, const void* b, int64_t ldb, void* c, int64_t ldc);

// Converts n elements of f16, bf16 or f32 to float32 (exactly), and back
// from float32 rounding to nearest even. In parallel on large arrays.
void WidenToFloat(PrimitiveType type, const void* in, float* out, int64_t n);
void NarrowFromFloat(PrimitiveType type, const float* in, void* out, int64_t n);

}  // namespace hlogym

// Helpers shared by the BLAS-backed host ops: permuting dense arrays and a
// GEMM that dispatches on float or double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

// A host op's scratch memory, allocated with the op and 64-byte aligned, left
// uninitialized: large blocks come straight from fresh pages, first touched
// by the first run (a warm-up) rather than zeroed while compiling, where they
// made a warm recompile of a module with bf16 dots take 300 ms. Users write
// every byte they read.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  explicit ScratchBuffer(size_t bytes);
  void* data() const { return storage_ == nullptr ? nullptr : storage_.get() + offset_; }
  bool empty() const { return storage_ == nullptr; }

 private:
  std::unique_ptr<uint8_t[]> storage_;
  size_t offset_ = 0;  // to the first 64-byte boundary
};

}  // namespace hlogym

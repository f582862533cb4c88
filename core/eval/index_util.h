// Row-major index arithmetic shared by the interpreter's kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/ir/shape.h"

namespace hlogym {

// Row-major strides (in elements) of `dims`.
inline std::vector<int64_t> Strides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// Linear index -> multi-index.
inline void Unflatten(int64_t linear, absl::Span<const int64_t> dims, int64_t* index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    index[i] = dims[i] == 0 ? 0 : linear % dims[i];
    linear = dims[i] == 0 ? 0 : linear / dims[i];
  }
}

// Advances a multi-index in row-major order; false after the last one.
inline bool Next(absl::Span<const int64_t> dims, std::vector<int64_t>& index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

inline int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace hlogym

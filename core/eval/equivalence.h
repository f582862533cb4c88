// Equivalence: do two modules compute the same thing? Both run on the same
// inputs; every output leaf is compared (not just the first, unlike HloEnv).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlogym {

struct EquivalenceOptions {
  // Floats match when |x - y| <= atol + rtol * |y|. f16, bf16 and the f8
  // types use narrow_tolerance for both. Integers and pred must be equal.
  double rtol = 1e-4;
  double atol = 1e-5;
  double narrow_tolerance = 2e-2;
};

struct EquivalenceReport {
  bool equivalent = true;
  int64_t output_index = -1;   // first mismatching output leaf
  int64_t element_index = -1;  // its first mismatching element
  std::string expected, actual;
  std::string message;         // empty when equivalent
};

EquivalenceReport CompareLiterals(const std::vector<Literal>& expected,
                                  const std::vector<Literal>& actual,
                                  const EquivalenceOptions& options = {});

// Runs `a` and `b` on the formula inputs of `a` (they must take the same
// parameters) and compares. Errors: either module fails to evaluate.
absl::StatusOr<EquivalenceReport> Equivalent(const Module& a, const Module& b,
                                             const EquivalenceOptions& options = {});

}  // namespace hlogym

// The reference interpreter: a plain, obviously correct evaluator of any
// Module on the CPU. Every rewrite, backend and agent is checked against it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/module.h"

namespace hlogym {

// The trips a while may take before evaluation stops with an error: a loop
// whose condition never turns false would otherwise hang the caller (a
// validation, a test). At ~1 us a trip at least, this is 4 s of evaluation
// or more; every loop of the corpus and dataset ends within it (their oracle
// tests run them all).
inline constexpr int64_t kMaxWhileTrips = int64_t{1} << 22;

// Runs the entry computation on `arguments` (one per entry parameter, shapes
// checked). Returns the root's value (a tuple Literal for tuple roots).
// Unsupported constructs are errors naming the instruction, never wrong values.
absl::StatusOr<Literal> Evaluate(const Module& module, absl::Span<const Literal> arguments);

// The same, with the root's leaves flattened in order (as the oracle records).
absl::StatusOr<std::vector<Literal>> EvaluateFlat(const Module& module,
                                                  absl::Span<const Literal> arguments);

// Runs one computation of a module on arguments given by pointer.
absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            absl::Span<const Literal* const> arguments);

}  // namespace hlogym

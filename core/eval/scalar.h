// Scalar values and XLA's elementwise semantics on them. Array kernels and
// reducer/comparator computations both go through these functions, so each
// opcode's meaning is written exactly once.
#pragma once

#include <complex>
#include <cstdint>

#include "absl/status/statusor.h"
#include "core/ir/attributes.h"
#include "core/ir/literal.h"
#include "core/ir/opcode.h"

namespace hlogym {

// One element. Floats live in `f` (already rounded to their type), integers
// and pred in `i` (unsigned 64-bit values as their bit pattern), complex in `c`.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  std::complex<double> c;
};

Scalar LoadScalar(const Literal& literal, int64_t index);
void StoreScalar(Literal& literal, int64_t index, const Scalar& value);

// Rounds a value computed in double to `type` (f32 rounding, f16 RNE, ...),
// or wraps an integer to the type's width.
Scalar RoundTo(PrimitiveType type, Scalar value);

// Elementwise ops. `type` is the operand element type; the result is of the
// instruction's element type `out` (pred for compare and is-finite).
absl::StatusOr<Scalar> ApplyUnary(Opcode opcode, PrimitiveType type, PrimitiveType out,
                                  const Scalar& x);
absl::StatusOr<Scalar> ApplyBinary(Opcode opcode, PrimitiveType type, PrimitiveType out,
                                   const Scalar& x, const Scalar& y);
bool Compare(ComparisonDirection direction, ComparisonType comparison, PrimitiveType type,
             const Scalar& x, const Scalar& y);
// convert: value semantics (float->int saturates, NaN -> 0).
Scalar ConvertScalar(PrimitiveType from, PrimitiveType to, const Scalar& x);

}  // namespace hlogym

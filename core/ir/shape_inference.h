// Shape inference: the result shape an instruction must have, computed from
// its opcode, operand shapes, attributes and called computations.
#pragma once

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"

namespace hlogym {

// Ignores the instruction's own shape. The error message says what is wrong
// (operand count, dtypes, dimensions, attributes) but not where; callers
// (the verifier, the parser) prefix the instruction's name.
// Opcodes whose shape cannot be inferred from the IR (parameter, constant,
// custom-call, rng-bit-generator's output width, ...) return the declared
// shape when it is consistent with what can be checked.
absl::StatusOr<Shape> InferShape(const Instruction& instruction);

}  // namespace hlogym

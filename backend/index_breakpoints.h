// Where along one dimension of an instruction's index space the data
// movement under it changes shape: the operand boundaries of a concatenate
// and the edges of a pad that the instruction reads through (slices,
// reverses, broadcasts, transposes, elementwise ops and reduces map the
// position on). A kernel that loops over that dimension in one loop per
// segment between breakpoints lets the elemental emitter pick the one
// concatenate operand (or pad side) each segment reads, instead of
// computing every operand per element and selecting; its loads are then at
// affine, unclamped indices and the loop vectorizes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/instruction.h"

namespace hlogym {

// At most this many segments per split loop (each is a copy of the loop
// body, so compile time grows with it); more breakpoints give none.
inline constexpr int64_t kMaxLoopSegments = 8;

// The positions p in (0, instruction.shape().dim(dim)), sorted, at which
// some concatenate or pad reached from `instruction` (in its computation;
// parameters and ops with computed indices end the walk) switches between
// operands or between inside and padding, for positions of `dim`. Empty
// when there are none or more than kMaxLoopSegments - 1.
std::vector<int64_t> IndexBreakpoints(const Instruction& instruction, int64_t dim);

}  // namespace hlogym

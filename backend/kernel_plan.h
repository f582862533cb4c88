// What both kernel targets (CPU and NVPTX) agree on about a kernel-forming
// instruction: whether it can be a compiled kernel, the key its code is
// cached under, and which values it stores into which buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"

namespace hlogym {

// Whether `instruction` (a fusion, or an unfused elemental op with array
// operands) can become a compiled kernel on either target.
bool CanCompileKernel(const Instruction& instruction);

// The computations that run as programs, `entry` first: it and what its
// while, conditional and call instructions run, transitively (not reducers
// or comparators, which are inlined into their users' kernels).
std::vector<const Computation*> ProgramComputations(const Computation& entry);

// The key a compiled kernel is cached under: the fingerprint of a fused
// computation (or an unfused op's text without names) plus every shape.
std::string KernelCacheKey(const Instruction& instruction);

// One value a kernel stores: leaf `leaf` of `producer` into buffer `buffer`
// (buffers are the operands in order, then the result's leaves).
struct KernelOutput {
  const Instruction* producer;
  int64_t leaf;
  int64_t buffer;
  Shape shape;
};

// The stores of a kernel whose computation's root is `root`: one per tuple
// operand, per leaf of a tuple-shaped op (variadic reduce), or the root.
absl::StatusOr<std::vector<KernelOutput>> KernelOutputs(const Instruction& root,
                                                        int64_t first_buffer);

// Work per output element, for task sizes: a reduction's row length.
int64_t WorkPerElement(const Instruction& instruction);

}  // namespace hlogym

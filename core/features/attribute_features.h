// The per-opcode attribute block of a node's features (kNodeAttrCount
// floats), in the spirit of HloEnv's opcode_attrs: each opcode family writes
// its typed attributes at fixed offsets, documented in docs/observation.md.
#pragma once

#include "core/ir/instruction.h"

namespace hlogym {

// Writes `out[0..kNodeAttrCount)`. Integer lists are padded with -1.
void EncodeAttributes(const Instruction& instruction, float* out);

}  // namespace hlogym

// Which producer may be fused into which consumer. "general" allows every
// pair the backends can emit, as HloEnv's GeneralFusion; "xla" adds XLA's GPU
// heuristics on top (no duplication of expensive producers, operand budget).
#pragma once

#include "core/ir/instruction.h"

namespace hlogym {

enum class FusionMode { kXla, kGeneral };

// XLA's cap on a fusion's operands plus outputs (MaxOperandsAndOutputsPerFusion).
inline constexpr int64_t kMaxFusionOperands = 96;

// Elementwise and data-movement ops (and loop fusions of them): what a loop
// kernel computes element by element.
bool IsLoopFusible(const Instruction& instruction);
// A reduce, or an input fusion rooted at one: fusible as a consumer only.
bool IsReductionHero(const Instruction& instruction);
// Transcendentals and divisions, which XLA will not duplicate.
bool IsExpensive(const Instruction& instruction);

// Whether `producer` may be fused into its user `consumer` under `mode`.
bool CanFuse(const Instruction& producer, const Instruction& consumer, FusionMode mode);

}  // namespace hlogym

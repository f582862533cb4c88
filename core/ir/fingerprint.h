// Fingerprint: a deterministic 64-bit structural hash of a module.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

#include "core/ir/module.h"

namespace hlogym {

// Depends on structure only: opcodes, shapes with layouts, typed attributes,
// constant values, semantic raw attributes (backend_config, custom-call
// attributes, ...), the operand graph and called computations, the order of
// parameters and of operands. Independent of instruction and computation
// names, unique ids, storage order, and metadata. Equal across runs and
// machines. The operands of an `alternatives` instruction are hashed as an
// unordered set, as in HloEnv; control predecessors as an unordered set.
// Only what a computation's root reaches (through operands and control
// predecessors) counts: dead instructions do not, so pruning dead code, or
// choosing alternative 0 everywhere and pruning, keeps the fingerprint of the
// module it restores. Other computations count only through their callers.
uint64_t Fingerprint(const Module& module);
// The same hash, of one computation (used to key compiled kernels).
uint64_t Fingerprint(const Computation& computation);
// The same Merkle hash (without the sharing part) of the values `values`
// compute, all in one computation, with that computation's parameters told
// apart by shape only, not by number: what a value computes whichever order
// the parameters are numbered in. Fusion building orders a fusion's outputs
// by it, so that merges done in another order give the same fusion.
std::vector<uint64_t> ValueFingerprints(absl::Span<Instruction* const> values);

}  // namespace hlogym

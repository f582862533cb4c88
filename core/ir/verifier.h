// Verifier: structural and type checks of a whole module. Each error names
// the computation and instruction at fault.
#pragma once

#include "absl/status/status.h"
#include "core/ir/module.h"

namespace hlogym {

struct VerifyOptions {
  // Also require layouts to agree where shape inference determines them.
  bool layout_sensitive = false;
};

// Checks: operand counts per opcode; every shape equals (ignoring layout) the
// inferred one; attributes within range; called computations have the right
// signatures (reducers, comparators, while condition/body, fusion parameters);
// users and operands consistent; names unique per computation; parameters
// numbered 0..n-1; a root in every computation; no cycles.
// Errors carry a status payload: IsVerifyError tells them from other errors,
// and FindFailingInstruction finds the instruction at fault, so a caller
// holding source positions can point at it.
absl::Status Verify(const Module& module, const VerifyOptions& options = {});

bool IsVerifyError(const absl::Status& status);

// The instruction a Verify error is about, or null (an error about a whole
// computation or module, or not a Verify error of this module).
const Instruction* FindFailingInstruction(const absl::Status& status, const Module& module);

}  // namespace hlogym

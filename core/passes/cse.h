// Common subexpression elimination ("cse"): in each computation (fused ones
// included, as XLA's), a later instruction identical to an earlier one is
// replaced by the earlier one. Identical means: same opcode, shape (layouts
// compared where both have one), operands (in either order for commutative
// ops), typed attributes, called computations (by structure: the graphs their
// roots reach match node for node, as fusion copies a fused computation per
// consumer), constant values and raw attributes other than metadata. Parameters, alternatives,
// side-effecting ops, collectives, rng ops, optimization barriers and
// instructions with control dependencies are never merged.
//
// Operands are compared by value number, so in dry mode, where nothing is
// replaced yet, chains of duplicates are found in one run as apply mode finds
// them: each duplicate offers its representative as the candidate.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class CsePass : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  // One run merges every duplicate: operands are compared by value number
  // in post-order and callees are visited before their callers, so a run
  // leaves no two identical mergeable instructions in a computation.
  bool idempotent() const override { return true; }
};

// Whether CSE would merge anything in `computation` alone (its callees
// compared by structure, as the pass does); changes nothing. A dry fusion's
// candidate body can repeat what the consumer computes already (the
// producer's copy of it), which the step's CSE then merges: a cost estimate
// of the candidate as built is too high for it (CostAfterChoices).
bool HasDuplicates(const Computation& computation);

// Whether CSE would take `a` and `b` for identical were their operands the
// same values: everything it compares but the operands (opcode, shape,
// attributes, called computations by structure). Two instructions for which
// this is false are never merged, whatever they read.
bool SameButOperands(const Instruction& a, const Instruction& b);

}  // namespace hlogym

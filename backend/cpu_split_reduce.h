// Reductions to few elements over many, split for the CPU's threads. A
// kernel's parallel range covers its output elements, so a reduce to a
// scalar (or to a row of 64 channel sums) is computed by the one or few
// tasks that own those elements while the rest of the kernel's outputs
// spread over every thread: a fusion of a 1M-element elementwise output and
// a sum over the same elements then runs the sum on one thread. A split
// reduce instead computes P partial results per output element, each over a
// chunk of the leading reduced dimensions, as a P x (outputs) group of the
// kernel spread over its whole parallel range; the executable then folds
// the partials in order, after the parallel loop.
//
// Only reducers whose reassociation XLA allows itself (XLA:CPU and XLA:GPU
// split reductions the same way) are split: float add, with partials and
// their fold in double and one rounding at the end, as the unsplit kernel
// sums (its result differs from the in-order double sum only where that
// sum lies next to a rounding boundary, as before); and float maximum and
// minimum, whose results are exact whatever the order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "backend/cpu_kernel.h"
#include "backend/elemental_emitter.h"
#include "core/ir/instruction.h"

namespace hlogym {

struct SplitReducePlan {
  int64_t lead_dims = 0;  // the leading reduced dimensions chunked (0..lead_dims-1)
  int64_t rows = 0;       // their product
  int64_t partials = 0;   // chunks of rows
  int64_t outputs = 0;    // the reduce's output elements
  int64_t work = 0;       // input elements per partial result
  bool columns = false;   // the innermost input dimension is kept
  Opcode op = Opcode::kAdd;
};

// The split of a reduce (an output of a kernel) when it has few outputs over
// many elements and a reducer that may be split; nullopt otherwise.
std::optional<SplitReducePlan> PlanSplitReduce(const Instruction& reduce);

// Emits the partial results [lo, hi) (row-major over partials x outputs)
// into `partials` (doubles), and, in the range holding partial 0, the init
// value into `init` (one double).
absl::Status EmitSplitReduce(ElementalEmitter& emitter, const Instruction& reduce,
                             const SplitReducePlan& plan, llvm::Value* partials,
                             llvm::Value* init, llvm::Value* lo, llvm::Value* hi);

// Folds each split reduce's partials in order into its output (after every
// range of the kernel ran).
void FinishSplitReductions(const CpuKernel& kernel, void* const* buffers);

}  // namespace hlogym

// The interpreter's kernels, one family per file. Each takes an instruction
// and its operand values and returns the result value.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/eval/scalar.h"
#include "core/ir/computation.h"
#include "core/ir/literal.h"

namespace hlogym {

using Operands = absl::Span<const Literal* const>;

// Calls a computation (a reducer, comparator, loop body...) on values.
using CallComputation =
    std::function<absl::StatusOr<Literal>(const Computation&, Operands arguments)>;

// A reducer or comparator over scalars. Computations made only of scalar
// elementwise ops run on a small register program without allocating;
// anything else falls back to calling the computation on Literals.
class ScalarFunction {
 public:
  static absl::StatusOr<ScalarFunction> Make(const Computation& computation,
                                             const CallComputation& call);
  // `in` holds one scalar per parameter; `out` receives one per result leaf.
  absl::Status Run(absl::Span<const Scalar> in, absl::Span<Scalar> out) const;

 private:
  // How an op runs: the common float ops through pre-resolved functions,
  // the rest through ApplyUnary/ApplyBinary.
  enum class Kind { kParameter, kConstant, kTuple, kSelect, kFloatBinary, kFloatCompare,
                    kPredAnd, kPredOr, kGeneric };
  struct Op {
    const Instruction* inst = nullptr;
    std::vector<int> operands;  // register indices
    Kind kind = Kind::kGeneric;
    double (*float_binary)(double, double) = nullptr;
    bool (*float_compare)(double, double) = nullptr;
    Scalar constant;
  };
  static void Resolve(Op& op);

  const Computation* computation_ = nullptr;
  CallComputation call_;
  bool compiled_ = false;
  std::vector<Op> program_;           // in post-order; register i = program_[i]
  std::vector<int> result_registers_;
};

absl::StatusOr<Literal> EvalElementwise(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands operands,
                                    const CallComputation& call);
absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands,
                                   const CallComputation& call);
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, Operands operands,
                                         const CallComputation& call);
absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst, Operands operands,
                                             const CallComputation& call);
absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands operands,
                                 const CallComputation& call);
absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, Operands operands);

// Runs `body(begin, end)` over [0, n) in parallel chunks when the work is
// large; `cost_per_item` (in element operations) sizes the chunks.
void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body,
                 int64_t cost_per_item = 1);

}  // namespace hlogym

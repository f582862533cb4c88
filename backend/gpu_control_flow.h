// while, conditional and call on the GPU: each called computation is a
// GpuExecutable of its own, driven by the host. Loop state stays on the
// device (copied between the executables' buffers); only the condition's
// predicate and a conditional's branch index come back to the host.
// Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/cpu_kernel.h"
#include "backend/gpu_kernel_cache.h"
#include "backend/while_state.h"
#include "core/ir/instruction.h"

namespace hlogym {

class GpuExecutable;

class GpuControlFlow {
 public:
  static absl::StatusOr<std::unique_ptr<GpuControlFlow>> Make(const Instruction& instruction,
                                                              GpuKernelCache& kernels,
                                                              CpuKernelCompiler& host);
  ~GpuControlFlow();

  // `operands`: every leaf of every operand; `results`: every leaf of the
  // result, where the final values go. Runs on the context's stream.
  absl::Status Run(absl::Span<const CUdeviceptr> operands, absl::Span<const CUdeviceptr> results);

  // The executables it drives (for statistics).
  std::vector<const GpuExecutable*> called() const;

 private:
  GpuControlFlow() = default;
  absl::Status RunWhile(absl::Span<const CUdeviceptr> operands, absl::Span<const CUdeviceptr> results);
  absl::Status RunBranch(int64_t branch, absl::Span<const CUdeviceptr> arguments,
                         absl::Span<const CUdeviceptr> results);

  Opcode opcode_ = Opcode::kCall;
  std::vector<std::unique_ptr<GpuExecutable>> executables_;  // while: condition, body
  std::vector<int64_t> result_bytes_;
  std::vector<int64_t> operand_first_leaf_, operand_leaf_count_;
  PrimitiveType selector_type_ = PrimitiveType::kPred;
  // while: which state leaves the body passes through and the condition
  // reads (PlanWhileStateCopies).
  WhileStateCopies copies_;
  std::optional<int64_t> trips_;  // StaticTripCount
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

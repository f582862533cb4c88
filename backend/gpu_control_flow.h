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
  // while, per state leaf (PlanWhileStateCopies): passed through by the
  // body or not, and of each kind, whether the condition reads it.
  std::vector<bool> forwarded_, changing_;
  std::vector<bool> condition_reads_forwarded_, condition_reads_changing_;
  std::optional<int64_t> trips_;  // StaticTripCount
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

// Builds the LLVM IR (NVPTX) of one GPU kernel for a kernel-forming
// instruction, with the shared elemental emitter computing the values: a loop
// kernel (one thread per output element, grid-stride) or, for reductions
// over the minor dimension, a row-reduction kernel (a block per output
// element, warp shuffles and shared memory, any reducer).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace hlogym {

struct GpuLaunch {
  int64_t blocks = 1;
  int64_t threads = 1;
};

struct GpuKernelIr {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::string name;     // the kernel's entry point
  GpuLaunch launch;
  std::string kind;     // "loop", "row-reduce", "scan" or "scatter"
  // Parameters: one global pointer per buffer, the operands in order and then
  // the result's leaves.
  int64_t buffer_count = 0;
};

// Whether `instruction` is a scan the GPU runs as a kernel: its body is
// elementwise over the slice (so each thread carries one slice position
// along the scan dimension), with inputs, outputs and carries of the slice's
// shape.
bool IsGpuScan(const Instruction& instruction);

// Whether `instruction` is a scatter the GPU runs as a kernel: one operand of
// a 32- or 64-bit type; a thread per update element applies the combiner
// atomically (atomic add, or a compare-and-swap loop for any other
// combiner). The caller copies the operand into the result first.
bool IsGpuScatter(const Instruction& instruction);

// Whether the GPU executable runs `instruction` as a kernel of its own:
// CanCompileKernel with array operands and an array or tuple result, a GPU
// scan or a GPU scatter. (One that fails to compile runs on the host.)
bool IsGpuKernel(const Instruction& instruction);

// The kernel `name` for `instruction` (IsGpuKernel must hold), in a module
// of its own.
absl::StatusOr<GpuKernelIr> EmitGpuKernelIr(const Instruction& instruction,
                                            const std::string& name);

// Adds kernel `name` for `instruction` to `module` (several kernels may share
// one module, as in a whole program's PTX); `kernel.context` and
// `kernel.module` stay empty.
absl::StatusOr<GpuKernelIr> EmitGpuKernelInto(const Instruction& instruction,
                                              const std::string& name, llvm::Module* module);

}  // namespace hlogym

// Lowers GPU kernel IR to PTX with LLVM's NVPTX backend: links the libdevice
// functions the kernel calls, optimizes at O3 and prints PTX for sm_90. Needs
// no GPU, so PTX can be made and checked (ptxas) on any machine.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "backend/gpu_kernel_emitter.h"
#include "core/ir/module.h"

namespace hlogym {

// The GPU architecture kernels are compiled for.
inline constexpr char kGpuArch[] = "sm_90";

// The libdevice bitcode: $HLOGYM_LIBDEVICE, else the CUDA toolkit's
// nvvm/libdevice/libdevice.10.bc (the toolkit found at build time, then
// $CUDA_HOME, then /usr/local/cuda). NotFoundError saying where it looked.
absl::StatusOr<std::string> LibdevicePath();

// PTX for every kernel in `module` (functions marked as kernels in
// nvvm.annotations; the rest are internalized and inlined).
absl::StatusOr<std::string> CompileToPtx(llvm::Module& module);
// PTX for one kernel (consumes its IR).
absl::StatusOr<std::string> CompileToPtx(GpuKernelIr kernel);

// One PTX module with a kernel per kernel-forming instruction of the
// computations the module runs (entry, loop bodies, branches) once
// LowerForGpu has lowered it, each named after its instruction in a
// comment: what hlogym.emit_ptx returns. Dots,
// control flow and other host-run instructions have none.
absl::StatusOr<std::string> EmitModulePtx(const Module& module);

}  // namespace hlogym

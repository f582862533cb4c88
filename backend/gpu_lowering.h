// What the GPU target runs in place of the module it is given: lowerings a
// GPU compiler makes before planning kernels, which are no agent's choice.
// Convolutions become im2col, a cuBLAS GEMM and a permutation
// (core/passes/convolution_to_gemm.h), where the elemental convolution
// kernel read its operands once per output element, untiled (17-20x XLA's
// time on the H100 for the corpus's convolutions); select-and-scatters of
// 32- and 64-bit types a reduce-window and an atomic scatter kernel
// (core/passes/select_and_scatter_to_scatter.h), and topks with k up to 32
// k row-reduction kernels (core/passes/topk_to_reductions.h), where both ran
// on the host; long cumulative scans over few rows scans in blocks
// (core/passes/scan_blocking.h), where the scan kernel had a thread per row.
// Shared by the executable, ahead-of-time kernel compiles and emit_ptx, so
// that all three see the same kernels.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlogym {

// A lowered copy of `module`, or null when nothing in it is lowered (the
// module runs as it is). HLOGYM_GPU_LOWERINGS in the environment picks the
// lowerings by pass name (comma-separated; `none` for none; all when unset),
// to compare with and without one on a GPU; a name that is no lowering is
// an error.
absl::StatusOr<std::unique_ptr<Module>> LowerForGpu(const Module& module);

}  // namespace hlogym

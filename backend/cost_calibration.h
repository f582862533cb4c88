// Fitting the cost model's CPU device to this machine: the kernels of some
// modules are compiled and timed one by one, and their fastest times are
// fitted with Calibrate(). The fitted device then estimates runtimes of
// other modules as this CPU runs them.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/cost_model.h"
#include "backend/cpu_kernel.h"
#include "core/ir/module.h"

namespace hlogym {

struct CalibrationResult {
  DeviceSpec device;    // CpuDevice() refitted: bandwidths, peak, launch cost
  int64_t samples = 0;  // kernels timed and fitted
};

// Compiles each module with `compiler`, runs it on its formula inputs
// `runs` times with every step of its entry computation timed, and fits
// CpuDevice() to the fastest time of each step that is a kernel of the
// model (steps inside loops and control flow are left out). Errors name the
// module that failed; fewer than 3 kernels in all is an error.
absl::StatusOr<CalibrationResult> CalibrateCpuDevice(absl::Span<const Module* const> modules,
                                                     CpuKernelCompiler& compiler, int runs = 5);

}  // namespace hlogym

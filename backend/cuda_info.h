// What the CUDA driver says about this machine's GPUs. Every function here
// works on any machine: without CUDA (not built with it, no driver, or a stub
// driver) it returns an error status, never aborts.
#pragma once

#include "absl/status/statusor.h"

namespace hlogym {

// Whether this build has CUDA support (the toolkit was found at configure
// time). A build with it still runs where no driver is installed.
bool BuiltWithCuda();

// The number of CUDA devices the driver sees (cuInit + cuDeviceGetCount).
// UnavailableError when built without CUDA, when no driver (libcuda.so.1) is
// installed, or when the driver cannot initialize (the toolkit's stub
// library, no GPU); the message says which.
absl::StatusOr<int> CudaDeviceCount();

}  // namespace hlogym

// The CUDA driver API, opened at run time (dlopen of libcuda.so.1) rather
// than linked, so every hlogym binary starts on machines without a driver
// and reports "no driver" as an error instead. Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlogym {

// X(name): each driver function hlogym calls, by its API name (cuda.h maps
// some to versioned symbols such as cuMemAlloc_v2; the table resolves those).
#define HLOGYM_CUDA_DRIVER_FUNCTIONS(X)                                                      \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)    \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)                \
  X(cuCtxSynchronize) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)         \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)          \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)                  \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy)               \
  X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                 \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuGetErrorName) X(cuGetErrorString)

struct CudaDriver {
#define HLOGYM_CUDA_DRIVER_POINTER(name) decltype(&::name) name = nullptr;
  HLOGYM_CUDA_DRIVER_FUNCTIONS(HLOGYM_CUDA_DRIVER_POINTER)
#undef HLOGYM_CUDA_DRIVER_POINTER

  // The loaded driver, or UnavailableError saying why (no libcuda.so.1, or
  // one without a function hlogym needs). Loaded once per process.
  static absl::StatusOr<const CudaDriver*> Get();

  // OK for CUDA_SUCCESS, else an error: "`what`: CUDA_ERROR_NAME (code): text".
  absl::Status Check(CUresult result, absl::string_view what) const;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

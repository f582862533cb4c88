// Compiled GPU kernels: PTX from the NVPTX compiler loaded into the driver,
// cached by KernelCacheKey (fused-computation fingerprint plus shapes) with a
// bound on the number kept. Executables hold their kernels, so evicting one
// never unloads code still in use. Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <cuda.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "backend/gpu_context.h"
#include "backend/gpu_kernel_emitter.h"
#include "core/ir/instruction.h"

namespace hlogym {

struct LoadedGpuKernel {
  ~LoadedGpuKernel();
  const GpuContext* gpu = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  GpuLaunch launch;
  std::string kind;  // "loop", "row-reduce"
  int64_t buffer_count = 0;
};

// Loads `ptx` into the driver and finds its entry point `function`; `what`
// names it in errors. The launch, kind and buffer count are left to the caller.
absl::StatusOr<std::shared_ptr<LoadedGpuKernel>> LoadPtxKernel(const GpuContext& gpu,
                                                              const std::string& ptx,
                                                              const std::string& function,
                                                              std::string_view what);

class GpuKernelCache {
 public:
  explicit GpuKernelCache(const GpuContext& gpu, int64_t capacity = 4096)
      : gpu_(gpu), capacity_(capacity) {}

  // The kernel for `instruction` (CanCompileKernel must hold), compiled and
  // loaded on first use. Thread-safe; compiles run outside the lock.
  absl::StatusOr<std::shared_ptr<const LoadedGpuKernel>> Get(const Instruction& instruction);

  // Drops every cached kernel; one an executable still holds is unloaded
  // when that executable goes.
  void Clear();

  int64_t compiled_count() const { return compiled_; }
  int64_t cache_hits() const { return hits_; }
  int64_t size() const;

 private:
  const GpuContext& gpu_;
  const int64_t capacity_;
  mutable std::mutex mutex_;
  // Most recently used first.
  std::list<std::pair<std::string, std::shared_ptr<const LoadedGpuKernel>>> order_;
  std::unordered_map<std::string, decltype(order_)::iterator> index_;
  int64_t compiled_ = 0, hits_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

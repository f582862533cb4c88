#include "backend/gpu_kernel_cache.h"

#ifdef HLOGYM_HAVE_CUDA

#include "absl/strings/str_cat.h"
#include "backend/kernel_plan.h"
#include "backend/nvptx_compiler.h"
#include "core/base/status_macros.h"

namespace hlogym {

LoadedGpuKernel::~LoadedGpuKernel() {
  if (module != nullptr && gpu != nullptr && gpu->MakeCurrent().ok()) {
    gpu->driver().cuModuleUnload(module);
  }
}

absl::StatusOr<std::shared_ptr<LoadedGpuKernel>> LoadPtxKernel(const GpuContext& gpu,
                                                              const std::string& ptx,
                                                              const std::string& function,
                                                              std::string_view what) {
  RETURN_IF_ERROR(gpu.MakeCurrent());
  const CudaDriver& d = gpu.driver();
  auto kernel = std::make_shared<LoadedGpuKernel>();
  // The driver's JIT error log names the PTX line at fault.
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  absl::Status loaded = d.Check(d.cuModuleLoadDataEx(&kernel->module, ptx.c_str(), 2, options, values),
                                absl::StrCat("loading the PTX of `", std::string(what), "`"));
  if (!loaded.ok()) return absl::InternalError(absl::StrCat(loaded.message(), ": ", log));
  kernel->gpu = &gpu;
  RETURN_IF_ERROR(d.Check(d.cuModuleGetFunction(&kernel->function, kernel->module, function.c_str()),
                          "cuModuleGetFunction"));
  return kernel;
}

int64_t GpuKernelCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(order_.size());
}

void GpuKernelCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  order_.clear();
}

absl::StatusOr<std::shared_ptr<const LoadedGpuKernel>> GpuKernelCache::Get(
    const Instruction& instruction) {
  const std::string key = KernelCacheKey(instruction);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      ++hits_;
      return it->second->second;
    }
  }
  const std::string name = "hlogym_kernel";
  ASSIGN_OR_RETURN(GpuKernelIr ir, EmitGpuKernelIr(instruction, name));
  const GpuLaunch launch = ir.launch;
  const std::string kind = ir.kind;
  const int64_t buffer_count = ir.buffer_count;
  ASSIGN_OR_RETURN(std::string ptx, CompileToPtx(std::move(ir)));
  ASSIGN_OR_RETURN(std::shared_ptr<LoadedGpuKernel> kernel,
                   LoadPtxKernel(gpu_, ptx, name, instruction.name()));
  kernel->launch = launch;
  kernel->kind = kind;
  kernel->buffer_count = buffer_count;
  std::lock_guard<std::mutex> lock(mutex_);
  ++compiled_;
  auto it = index_.find(key);
  if (it != index_.end()) return it->second->second;  // another thread won
  order_.emplace_front(key, kernel);
  index_[key] = order_.begin();
  while (static_cast<int64_t>(order_.size()) > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
  return std::shared_ptr<const LoadedGpuKernel>(kernel);
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

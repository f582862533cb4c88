#include "backend/cuda_driver.h"

#ifdef HLOGYM_HAVE_CUDA

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

#define HLOGYM_STRINGIFY(x) #x
// The symbol an API name maps to in cuda.h (cuMemAlloc -> "cuMemAlloc_v2").
#define HLOGYM_SYMBOL(x) HLOGYM_STRINGIFY(x)

struct Loaded {
  CudaDriver driver;
  absl::Status status;
};

Loaded Load() {
  Loaded loaded;
  // Never dlclose'd: the driver stays loaded for the process's lifetime.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.status = absl::UnavailableError(
        absl::StrCat("no CUDA driver: ", why ? why : "libcuda.so.1 not found"));
    return loaded;
  }
  CudaDriver& d = loaded.driver;
#define HLOGYM_CUDA_DRIVER_RESOLVE(name)                                                   \
  d.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, HLOGYM_SYMBOL(name)));        \
  if (d.name == nullptr && loaded.status.ok()) {                                           \
    loaded.status = absl::UnavailableError(absl::StrCat(                                   \
        "the CUDA driver libcuda.so.1 lacks ", HLOGYM_SYMBOL(name), " (driver too old?)")); \
  }
  HLOGYM_CUDA_DRIVER_FUNCTIONS(HLOGYM_CUDA_DRIVER_RESOLVE)
#undef HLOGYM_CUDA_DRIVER_RESOLVE
  return loaded;
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static const Loaded* loaded = new Loaded(Load());
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->driver;
}

absl::Status CudaDriver::Check(CUresult result, absl::string_view what) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  return absl::InternalError(absl::StrCat(std::string(what), ": ", name ? name : "CUresult",
                                          " (", static_cast<int>(result), ")",
                                          text ? absl::StrCat(": ", text) : ""));
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

#include "backend/cuda_info.h"

#include "absl/strings/str_cat.h"

#ifdef HLOGYM_HAVE_CUDA
#include <cuda.h>
#include <dlfcn.h>
#endif

namespace hlogym {

#ifdef HLOGYM_HAVE_CUDA

bool BuiltWithCuda() { return true; }

namespace {

// The driver is opened at run time, not linked: a binary linked against
// libcuda needs libcuda.so.1 just to start, and the developer and CI machines
// have the toolkit but no driver. Loading it here lets every hlogym binary run
// there and report "no driver" as an error instead.
struct Driver {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  std::string error;  // why loading failed, when it did
};

const Driver& LoadDriver() {
  static const Driver driver = [] {
    Driver d;
    // Never dlclose'd: the driver stays loaded for the process's lifetime.
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      d.error = absl::StrCat("no CUDA driver: ", why ? why : "libcuda.so.1 not found");
      return d;
    }
    d.init = reinterpret_cast<decltype(&::cuInit)>(dlsym(handle, "cuInit"));
    d.device_get_count =
        reinterpret_cast<decltype(&::cuDeviceGetCount)>(dlsym(handle, "cuDeviceGetCount"));
    d.get_error_name =
        reinterpret_cast<decltype(&::cuGetErrorName)>(dlsym(handle, "cuGetErrorName"));
    if (d.init == nullptr || d.device_get_count == nullptr) {
      d.error = "the CUDA driver libcuda.so.1 lacks cuInit or cuDeviceGetCount";
    }
    return d;
  }();
  return driver;
}

std::string ErrorName(const Driver& driver, CUresult result) {
  const char* name = nullptr;
  if (driver.get_error_name != nullptr && driver.get_error_name(result, &name) == CUDA_SUCCESS &&
      name != nullptr) {
    return absl::StrCat(name, " (", static_cast<int>(result), ")");
  }
  return absl::StrCat("CUresult ", static_cast<int>(result));
}

}  // namespace

absl::StatusOr<int> CudaDeviceCount() {
  const Driver& driver = LoadDriver();
  if (!driver.error.empty()) return absl::UnavailableError(driver.error);
  // cuInit is cheap after the first call and returns the same error each time
  // when it cannot initialize (CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_NO_DEVICE).
  if (CUresult result = driver.init(0); result != CUDA_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("the CUDA driver failed to initialize: ", ErrorName(driver, result)));
  }
  int count = 0;
  if (CUresult result = driver.device_get_count(&count); result != CUDA_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("cuDeviceGetCount failed: ", ErrorName(driver, result)));
  }
  return count;
}

#else  // !HLOGYM_HAVE_CUDA

bool BuiltWithCuda() { return false; }

absl::StatusOr<int> CudaDeviceCount() {
  return absl::UnavailableError("not supported: built without CUDA");
}

#endif

}  // namespace hlogym

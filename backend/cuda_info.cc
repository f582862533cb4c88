#include "backend/cuda_info.h"

#include "absl/strings/str_cat.h"
#include "backend/cuda_driver.h"

namespace hlogym {

#ifdef HLOGYM_HAVE_CUDA

bool BuiltWithCuda() { return true; }

absl::StatusOr<int> CudaDeviceCount() {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (!driver.ok()) return driver.status();
  const CudaDriver& d = **driver;
  // cuInit is cheap after the first call and returns the same error each time
  // when it cannot initialize (CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_NO_DEVICE).
  if (absl::Status s = d.Check(d.cuInit(0), "the CUDA driver failed to initialize"); !s.ok()) {
    return absl::UnavailableError(s.message());
  }
  int count = 0;
  if (absl::Status s = d.Check(d.cuDeviceGetCount(&count), "cuDeviceGetCount"); !s.ok()) {
    return absl::UnavailableError(s.message());
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

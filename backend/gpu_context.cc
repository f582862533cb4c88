#include "backend/gpu_context.h"

#ifdef HLOGYM_HAVE_CUDA

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<GpuContext*> GpuContext::Get() {
  static const absl::StatusOr<GpuContext*> context = []() -> absl::StatusOr<GpuContext*> {
    auto unavailable = [](const absl::Status& s) {
      return absl::UnavailableError(
          absl::StrCat(s.message(), " (no usable GPU; use the cpu backend instead)"));
    };
    absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
    if (!driver.ok()) return unavailable(driver.status());
    const CudaDriver& d = **driver;
    if (absl::Status s = d.Check(d.cuInit(0), "cuInit"); !s.ok()) return unavailable(s);
    int count = 0;
    if (absl::Status s = d.Check(d.cuDeviceGetCount(&count), "cuDeviceGetCount"); !s.ok()) {
      return unavailable(s);
    }
    if (count == 0) return unavailable(absl::UnavailableError("the CUDA driver sees no GPU"));
    // Never destroyed: kernels and buffers may outlive static destruction.
    auto* gpu = new GpuContext();
    gpu->driver_ = *driver;
    CUdevice device = 0;
    RETURN_IF_ERROR(d.Check(d.cuDeviceGet(&device, 0), "cuDeviceGet"));
    char name[256] = {};
    RETURN_IF_ERROR(d.Check(d.cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName"));
    gpu->name_ = name;
    RETURN_IF_ERROR(d.Check(d.cuDeviceGetAttribute(&gpu->sm_count_,
                                                   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
                            "cuDeviceGetAttribute"));
    // The primary context is the one cuBLAS (through the runtime) uses too.
    RETURN_IF_ERROR(d.Check(d.cuDevicePrimaryCtxRetain(&gpu->context_, device),
                            "cuDevicePrimaryCtxRetain"));
    RETURN_IF_ERROR(gpu->MakeCurrent());
    RETURN_IF_ERROR(d.Check(d.cuStreamCreate(&gpu->stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
    return gpu;
  }();
  return context;
}

absl::Status GpuContext::MakeCurrent() const {
  return driver_->Check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

absl::StatusOr<int64_t> GpuContext::UsedMemory() const {
  RETURN_IF_ERROR(MakeCurrent());
  size_t free = 0, total = 0;
  RETURN_IF_ERROR(driver_->Check(driver_->cuMemGetInfo(&free, &total), "cuMemGetInfo"));
  return static_cast<int64_t>(total - free);
}

absl::Status GpuContext::Synchronize() const {
  RETURN_IF_ERROR(MakeCurrent());
  return driver_->Check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(const GpuContext& gpu, int64_t bytes) {
  DeviceBuffer buffer;
  buffer.gpu_ = &gpu;
  buffer.size_ = bytes;
  if (bytes <= 0) return buffer;
  RETURN_IF_ERROR(gpu.MakeCurrent());
  absl::Status s = gpu.driver().Check(gpu.driver().cuMemAlloc(&buffer.pointer_, static_cast<size_t>(bytes)),
                                      absl::StrCat("cuMemAlloc of ", bytes, " bytes"));
  if (!s.ok()) return absl::ResourceExhaustedError(s.message());
  return buffer;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    this->~DeviceBuffer();
    gpu_ = other.gpu_;
    pointer_ = other.pointer_;
    size_ = other.size_;
    other.pointer_ = 0;
    other.size_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0 && gpu_ != nullptr && gpu_->MakeCurrent().ok()) {
    gpu_->driver().cuMemFree(pointer_);
  }
  pointer_ = 0;
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

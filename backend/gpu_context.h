// The GPU that hlogym runs on: device 0's primary context, one stream for
// every executable, and device memory that frees itself. Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <cuda.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "backend/cuda_driver.h"

namespace hlogym {

class GpuContext {
 public:
  // Device 0, initialized once per process; UnavailableError where there is
  // no driver or no GPU (the message says which), suggesting the CPU target.
  static absl::StatusOr<GpuContext*> Get();

  const CudaDriver& driver() const { return *driver_; }
  CUstream stream() const { return stream_; }
  const std::string& name() const { return name_; }
  int sm_count() const { return sm_count_; }

  // Makes the context current on the calling thread (every thread that calls
  // CUDA does this first; it is cheap).
  absl::Status MakeCurrent() const;
  // Bytes of device memory in use (total - free), for leak checks.
  absl::StatusOr<int64_t> UsedMemory() const;
  absl::Status Synchronize() const;

 private:
  GpuContext() = default;
  const CudaDriver* driver_ = nullptr;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_;
  int sm_count_ = 0;
};

// Device memory owned by one object; freed when it goes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(const GpuContext& gpu, int64_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return pointer_; }
  int64_t size() const { return size_; }

 private:
  const GpuContext* gpu_ = nullptr;
  CUdeviceptr pointer_ = 0;
  int64_t size_ = 0;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

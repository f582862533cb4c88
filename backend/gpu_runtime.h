// The GPU runtime: compiles a Module into a GpuExecutable and measures it on
// the formula inputs with CUDA events, one timed section at a time on the
// device, with one kernel cache and one measurement cache. Built only with
// CUDA; Create fails with a clear error where there is no GPU.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/formula_input_cache.h"
#include "backend/gpu_executable.h"
#include "backend/measurement.h"
#include "core/ir/module.h"

namespace hlogym {

struct GpuRuntimeReport {
  Measurement measurement;
  GpuExecutableStats stats;
  double compile_seconds = 0;
};

class GpuRuntime {
 public:
  static absl::StatusOr<std::unique_ptr<GpuRuntime>> Create(MeasurementOptions options = {});

  // The module's measurement, from the cache when an equal module (same
  // fingerprint) was measured before. Thread-safe.
  absl::StatusOr<Measurement> Measure(const Module& module);
  // Compiles the module's kernels into the kernel cache, so that timing
  // many modules one after the other can compile them in parallel first.
  // Allocates no device memory. Thread-safe.
  absl::Status Prepare(const Module& module);
  // Compiles and measures without the cache, reporting the executable too.
  absl::StatusOr<GpuRuntimeReport> MeasureUncached(const Module& module);
  // Times `modules` against one another with CUDA events
  // (MeasureInterleavedTimed), without the cache in either direction (see
  // CpuRuntime::MeasureInterleaved).
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0);

  GpuKernelCache& kernels() { return *kernels_; }
  CpuKernelCompiler& host_compiler() { return *host_; }
  const MeasurementCache& cache() const { return cache_; }
  const GpuContext& gpu() const { return gpu_; }

 private:
  GpuRuntime(const GpuContext& gpu, std::unique_ptr<CpuKernelCompiler> host,
             MeasurementOptions options)
      : gpu_(gpu), kernels_(std::make_unique<GpuKernelCache>(gpu)), host_(std::move(host)),
        options_(options) {}

  const GpuContext& gpu_;
  std::unique_ptr<GpuKernelCache> kernels_;
  FormulaInputCache<std::vector<Literal>> inputs_;
  std::unique_ptr<CpuKernelCompiler> host_;
  MeasurementOptions options_;
  MeasurementCache cache_;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

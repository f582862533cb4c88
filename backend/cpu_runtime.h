// The CPU runtime: compiles a Module into a CpuExecutable and measures it on
// the formula inputs, with one kernel compiler and one measurement cache.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/cpu_executable.h"
#include "backend/formula_input_cache.h"
#include "backend/measurement.h"
#include "core/ir/module.h"

namespace hlogym {

struct CpuRuntimeReport {
  Measurement measurement;
  CpuExecutableStats stats;
  double compile_seconds = 0;
};

class CpuRuntime {
 public:
  static absl::StatusOr<std::unique_ptr<CpuRuntime>> Create(MeasurementOptions options = {});
  ~CpuRuntime();

  // The module's measurement, from the cache when an equal module (same
  // fingerprint) was measured before. Thread-safe: compiles run in parallel,
  // timed runs one at a time on the CPU (DeviceTimingMutex("cpu")).
  absl::StatusOr<Measurement> Measure(const Module& module);

  // Compiles and measures without the cache, reporting the executable too.
  absl::StatusOr<CpuRuntimeReport> MeasureUncached(const Module& module);
  // Times `modules` against one another (MeasureInterleaved), without the
  // cache in either direction: for choosing between them, where reusing
  // these figures later would carry the choice's luck into them. Any module
  // that does not compile or run fails the call. `seconds_per_module` > 0
  // replaces the options' max_seconds.
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0);

  CpuKernelCompiler& compiler() { return *compiler_; }
  const MeasurementCache& cache() const { return cache_; }
  const MeasurementOptions& options() const { return options_; }

 private:
  class AlignedInputs;
  CpuRuntime(std::unique_ptr<CpuKernelCompiler> compiler, MeasurementOptions options);

  std::unique_ptr<CpuKernelCompiler> compiler_;
  MeasurementOptions options_;
  MeasurementCache cache_;
  std::unique_ptr<FormulaInputCache<AlignedInputs>> inputs_;
};

}  // namespace hlogym

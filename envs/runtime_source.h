// RuntimeSource: where an environment's runtimes come from (the cost model,
// the CPU backend, the GPU backend). Rewards are computed from them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backend/cost_model.h"
#include "backend/cpu_runtime.h"
#ifdef HLOGYM_HAVE_CUDA
#include "backend/gpu_runtime.h"
#endif
#include "core/ir/module.h"

namespace hlogym {

class RuntimeSource {
 public:
  virtual ~RuntimeSource() = default;
  // "cost:h100", "cpu", ...
  virtual std::string name() const = 0;
  // The module's runtime in seconds. Must be safe to call from several
  // threads at once on different modules.
  virtual absl::StatusOr<double> Runtime(const Module& module) = 0;
  // Whether equal modules always get equal runtimes (false for measurement).
  virtual bool deterministic() const = 0;
  // Does ahead of time what of Runtime(module) may run beside other work
  // (compiling kernels), so that timing many modules one after the other can
  // compile them in parallel first. Thread-safe; a no-op where there is
  // nothing to do ahead. An error here will recur in Runtime.
  virtual absl::Status Prepare(const Module& /*module*/) { return absl::OkStatus(); }
  // Prepare of each module, in parallel: one verdict per module, in order.
  // Callers that compile many modules before timing them use this, so that
  // a source in a worker process (IsolatedRuntimeSource) gets them in one
  // request and compiles them in parallel there.
  virtual std::vector<absl::Status> PrepareAll(const std::vector<const Module*>& modules);
  // Measures `modules` against one another for choosing between them: timed
  // runs interleaved in rounds (MeasureInterleaved), so that a change of
  // load shifts all alike, and kept out of any cache that Runtime() reads.
  // `seconds_per_module` > 0 replaces the source's max_seconds (slow modules
  // need more for a few runs each). Only the measured sources do this; the
  // others say "not supported".
  virtual absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0);
  // The device of the analytical cost model when the runtimes are its
  // estimates (EstimateCost), else null: callers may then estimate a
  // module they never build (CostAfterChoices) and get the same number.
  virtual const DeviceSpec* cost_model_device() const { return nullptr; }
};

// The analytical cost model on a device; deterministic and thread-safe.
class CostModelSource : public RuntimeSource {
 public:
  explicit CostModelSource(DeviceSpec device) : device_(std::move(device)) {}
  std::string name() const override { return "cost:" + device_.name; }
  absl::StatusOr<double> Runtime(const Module& module) override;
  bool deterministic() const override { return true; }
  const DeviceSpec* cost_model_device() const override { return &device_; }

 private:
  DeviceSpec device_;
};

// Runtimes measured on this machine's CPU: the module compiled by the CPU
// backend and timed on its formula inputs (cached by fingerprint). Not
// deterministic; thread-safe (timed runs take turns on the CPU).
class CpuMeasuredSource : public RuntimeSource {
 public:
  explicit CpuMeasuredSource(std::unique_ptr<CpuRuntime> runtime) : runtime_(std::move(runtime)) {}
  std::string name() const override { return "cpu"; }
  absl::StatusOr<double> Runtime(const Module& module) override;
  bool deterministic() const override { return false; }
  absl::Status Prepare(const Module& module) override;  // compiles its kernels
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0) override;
  CpuRuntime& runtime() { return *runtime_; }

 private:
  std::unique_ptr<CpuRuntime> runtime_;
};

#ifdef HLOGYM_HAVE_CUDA
// Runtimes measured on the GPU: the module compiled by the GPU backend and
// timed with CUDA events on its formula inputs (cached by fingerprint).
class GpuMeasuredSource : public RuntimeSource {
 public:
  explicit GpuMeasuredSource(std::unique_ptr<GpuRuntime> runtime) : runtime_(std::move(runtime)) {}
  std::string name() const override { return "gpu"; }
  absl::StatusOr<double> Runtime(const Module& module) override;
  bool deterministic() const override { return false; }
  absl::Status Prepare(const Module& module) override;  // compiles its kernels
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0) override;

 private:
  std::unique_ptr<GpuRuntime> runtime_;
};
#endif

// "cost" (the H100 cost model), "cost:h100", "cost:cpu", "cpu" (measured on
// this CPU) or "gpu" (measured on GPU 0; an error naming why where there is
// no CUDA build, driver or GPU). The measured ones take MeasurementOptions by
// name: "cpu(warmup_runs=1, min_runs=3, max_runs=20, target_spread=0.05,
// max_seconds=0.1)", each optional, and isolate=0|1 (measure in a worker
// process: IsolatedRuntimeSource; the default for gpu) with timeout_s.
absl::StatusOr<std::shared_ptr<RuntimeSource>> MakeRuntimeSource(std::string_view spec);

}  // namespace hlogym

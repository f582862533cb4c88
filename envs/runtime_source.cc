#include "envs/runtime_source.h"

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<double> CostModelSource::Runtime(const Module& module) {
  return EstimateCost(module, device_).seconds;
}

absl::StatusOr<double> CpuMeasuredSource::Runtime(const Module& module) {
  ASSIGN_OR_RETURN(Measurement m, runtime_->Measure(module));
  return m.median_seconds;
}

#ifdef HLOGYM_HAVE_CUDA
absl::StatusOr<double> GpuMeasuredSource::Runtime(const Module& module) {
  ASSIGN_OR_RETURN(Measurement m, runtime_->Measure(module));
  return m.median_seconds;
}
#endif

absl::StatusOr<std::shared_ptr<RuntimeSource>> MakeRuntimeSource(std::string_view spec) {
  if (spec == "cost") return std::make_shared<CostModelSource>(H100Device());
  if (spec.substr(0, 5) == "cost:") {
    ASSIGN_OR_RETURN(DeviceSpec device, DeviceByName(spec.substr(5)));
    return std::make_shared<CostModelSource>(device);
  }
  if (spec == "cpu") {
    ASSIGN_OR_RETURN(std::unique_ptr<CpuRuntime> runtime, CpuRuntime::Create());
    return std::make_shared<CpuMeasuredSource>(std::move(runtime));
  }
  if (spec == "gpu") {
#ifdef HLOGYM_HAVE_CUDA
    ASSIGN_OR_RETURN(std::unique_ptr<GpuRuntime> runtime, GpuRuntime::Create());
    return std::make_shared<GpuMeasuredSource>(std::move(runtime));
#else
    return absl::UnimplementedError(
        "not supported: reward source `gpu` (this hlogym was built without CUDA; use `cpu`, "
        "`cost`, `cost:h100` or `cost:cpu`)");
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown reward source `", std::string(spec), "`; known: cost, cost:h100, cost:cpu, cpu, gpu"));
}

}  // namespace hlogym

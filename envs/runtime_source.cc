#include "envs/runtime_source.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/rewrite/pass_options.h"
#include "envs/isolated_runtime_source.h"

namespace hlogym {
namespace {

// "cpu(min_runs=3, max_seconds=0.1)" -> the measurement options; `name` is
// "cpu" or "gpu", `options` what is between the parentheses (every key must
// have been read by now or here).
absl::StatusOr<MeasurementOptions> ParseMeasurementOptions(std::string_view name,
                                                           PassOptions& options) {
  MeasurementOptions m;
  ASSIGN_OR_RETURN(const int64_t warmup_runs, options.GetInt("warmup_runs", m.warmup_runs));
  ASSIGN_OR_RETURN(const int64_t min_runs, options.GetInt("min_runs", m.min_runs));
  ASSIGN_OR_RETURN(const int64_t max_runs, options.GetInt("max_runs", m.max_runs));
  ASSIGN_OR_RETURN(m.target_spread, options.GetDouble("target_spread", m.target_spread));
  ASSIGN_OR_RETURN(m.max_seconds, options.GetDouble("max_seconds", m.max_seconds));
  RETURN_IF_ERROR(options.CheckAllUsed(name));
  if (warmup_runs < 0 || min_runs < 1 || max_runs < min_runs || max_runs > 100000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reward source `", std::string(name), "`: need warmup_runs >= 0 and 1 <= min_runs <= ",
        "max_runs <= 100000, got ", warmup_runs, ", ", min_runs, ", ", max_runs));
  }
  if (!(m.target_spread >= 0) || !(m.max_seconds > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reward source `", std::string(name), "`: need target_spread >= 0 and max_seconds > 0, got ",
        m.target_spread, " and ", m.max_seconds));
  }
  m.warmup_runs = static_cast<int>(warmup_runs);
  m.min_runs = static_cast<int>(min_runs);
  m.max_runs = static_cast<int>(max_runs);
  return m;
}

// The shortest text that reads back as `value` exactly.
std::string ShortestDouble(double value) {
  char buffer[32];
  const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end.ptr);
}

// A measured source in this process, from its options.
absl::StatusOr<std::shared_ptr<RuntimeSource>> MakeMeasuredSource(std::string_view name,
                                                                  MeasurementOptions options) {
  if (name == "cpu") {
    ASSIGN_OR_RETURN(std::unique_ptr<CpuRuntime> runtime, CpuRuntime::Create(options));
    return std::make_shared<CpuMeasuredSource>(std::move(runtime));
  }
#ifdef HLOGYM_HAVE_CUDA
  ASSIGN_OR_RETURN(std::unique_ptr<GpuRuntime> runtime, GpuRuntime::Create(options));
  return std::make_shared<GpuMeasuredSource>(std::move(runtime));
#else
  return absl::UnimplementedError(
      "not supported: reward source `gpu` (this hlogym was built without CUDA; use `cpu`, "
      "`cost`, `cost:h100` or `cost:cpu`)");
#endif
}

}  // namespace

std::vector<absl::Status> RuntimeSource::PrepareAll(const std::vector<const Module*>& modules) {
  std::vector<absl::Status> verdicts(modules.size());
  ParallelForEach(0, static_cast<int64_t>(modules.size()),
                  [&](int64_t i) { verdicts[i] = Prepare(*modules[i]); });
  return verdicts;
}

absl::StatusOr<std::vector<Measurement>> RuntimeSource::MeasureInterleaved(
    const std::vector<const Module*>& /*modules*/, double /*seconds_per_module*/) {
  return absl::UnimplementedError(
      absl::StrCat("not supported: timing modules against one another on `", name(),
                   "` (only the measured sources cpu and gpu do)"));
}

absl::StatusOr<double> CostModelSource::Runtime(const Module& module) {
  return EstimateCost(module, device_).seconds;
}

absl::StatusOr<double> CpuMeasuredSource::Runtime(const Module& module) {
  ASSIGN_OR_RETURN(Measurement m, runtime_->Measure(module));
  return m.median_seconds;
}

absl::Status CpuMeasuredSource::Prepare(const Module& module) {
  // The kernels land in the runtime's cache, where Measure finds them.
  return CpuExecutable::Compile(module, runtime_->compiler()).status();
}

absl::StatusOr<std::vector<Measurement>> CpuMeasuredSource::MeasureInterleaved(
    const std::vector<const Module*>& modules, double seconds_per_module) {
  return runtime_->MeasureInterleaved(modules, seconds_per_module);
}

#ifdef HLOGYM_HAVE_CUDA
absl::StatusOr<double> GpuMeasuredSource::Runtime(const Module& module) {
  ASSIGN_OR_RETURN(Measurement m, runtime_->Measure(module));
  return m.median_seconds;
}

absl::Status GpuMeasuredSource::Prepare(const Module& module) {
  return runtime_->Prepare(module);
}

absl::StatusOr<std::vector<Measurement>> GpuMeasuredSource::MeasureInterleaved(
    const std::vector<const Module*>& modules, double seconds_per_module) {
  return runtime_->MeasureInterleaved(modules, seconds_per_module);
}
#endif

absl::StatusOr<std::shared_ptr<RuntimeSource>> MakeRuntimeSource(std::string_view spec) {
  if (spec == "cost") return std::make_shared<CostModelSource>(H100Device());
  if (spec.substr(0, 5) == "cost:") {
    ASSIGN_OR_RETURN(DeviceSpec device, DeviceByName(spec.substr(5)));
    return std::make_shared<CostModelSource>(device);
  }
  // Measured sources take options: "cpu(min_runs=3, max_seconds=0.1)".
  std::string_view name = spec, args;
  if (const size_t open = spec.find('('); open != std::string_view::npos && spec.back() == ')') {
    name = spec.substr(0, open);
    args = spec.substr(open + 1, spec.size() - open - 2);
  }
  if (name == "cpu" || name == "gpu") {
    ASSIGN_OR_RETURN(PassOptions options, PassOptions::Parse(args, "reward source"));
    // A GPU fault poisons the process's CUDA context, so the GPU measures
    // in a worker process unless asked not to; the CPU in this process.
    ASSIGN_OR_RETURN(const int64_t isolate, options.GetInt("isolate", name == "gpu" ? 1 : 0));
    IsolationOptions isolation;
    ASSIGN_OR_RETURN(isolation.timeout_seconds,
                     options.GetDouble("timeout_s", isolation.timeout_seconds));
    ASSIGN_OR_RETURN(MeasurementOptions measurement, ParseMeasurementOptions(name, options));
    if (isolate != 0 && isolate != 1) {
      return absl::InvalidArgumentError(absl::StrCat("reward source `", std::string(name),
                                                     "`: isolate is 0 or 1, got ", isolate));
    }
    if (isolate == 0) return MakeMeasuredSource(name, measurement);
    // The worker builds the same source in its process, not isolated again.
    const std::string worker_spec = absl::StrCat(
        std::string(name), "(isolate=0, warmup_runs=", measurement.warmup_runs,
        ", min_runs=", measurement.min_runs, ", max_runs=", measurement.max_runs,
        ", target_spread=", ShortestDouble(measurement.target_spread),
        ", max_seconds=", ShortestDouble(measurement.max_seconds), ")");
    return IsolatedRuntimeSource::Create(std::string(name), worker_spec, isolation);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown reward source `", std::string(spec),
      "`; known: cost, cost:h100, cost:cpu, cpu, gpu (the last two take measurement options, "
      "e.g. cpu(min_runs=3, max_seconds=0.1))"));
}

}  // namespace hlogym

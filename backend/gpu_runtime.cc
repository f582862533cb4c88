#include "backend/gpu_runtime.h"

#ifdef HLOGYM_HAVE_CUDA

#include <chrono>
#include <functional>

#include "absl/strings/str_cat.h"

#include "backend/gpu_kernel_emitter.h"
#include "backend/gpu_lowering.h"
#include "backend/kernel_plan.h"
#include "core/base/status_macros.h"
#include "core/eval/formula_inputs.h"
#include "core/ir/fingerprint.h"

namespace hlogym {

absl::StatusOr<std::unique_ptr<GpuRuntime>> GpuRuntime::Create(MeasurementOptions options) {
  ASSIGN_OR_RETURN(GpuContext * gpu, GpuContext::Get());
  ASSIGN_OR_RETURN(std::unique_ptr<CpuKernelCompiler> host, CpuKernelCompiler::Create());
  return std::unique_ptr<GpuRuntime>(new GpuRuntime(*gpu, std::move(host), options));
}

absl::Status GpuRuntime::Prepare(const Module& module) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  // Only the kernels: LLVM's NVPTX backend and the driver's JIT are what
  // compiling takes. A kernel that fails here runs on the host when the
  // module is measured (GpuExecutable), so its error is not Prepare's.
  ASSIGN_OR_RETURN(std::unique_ptr<Module> lowered, LowerForGpu(module));
  const Module& runs = lowered != nullptr ? *lowered : module;
  for (const Computation* program : ProgramComputations(*runs.entry())) {
    for (const auto& instruction : program->instructions()) {
      if (IsGpuKernel(*instruction)) {
        kernels_->Get(*instruction).IgnoreError();
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GpuRuntimeReport> GpuRuntime::MeasureUncached(const Module& module) {
  GpuRuntimeReport report;
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> executable,
                   GpuExecutable::Compile(module, *kernels_, *host_));
  report.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.stats = executable->stats();
  RETURN_IF_ERROR(executable->SetArguments(*inputs_.Get(module, [](const Module& m) {
    return std::make_shared<const std::vector<Literal>>(FormulaInputs(m));
  })));
  ASSIGN_OR_RETURN(report.measurement,
                   MeasureTimedRuns([&] { return executable->ExecuteTimed(); }, options_,
                                    DeviceTimingMutex(kGpuDevice)));
  return report;
}

absl::StatusOr<std::vector<Measurement>> GpuRuntime::MeasureInterleaved(
    const std::vector<const Module*>& modules, double seconds_per_module) {
  MeasurementOptions options = options_;
  if (seconds_per_module > 0) options.max_seconds = seconds_per_module;
  std::vector<std::unique_ptr<GpuExecutable>> executables;
  std::vector<std::function<absl::StatusOr<double>()>> runs;
  for (const Module* module : modules) {
    ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> executable,
                     GpuExecutable::Compile(*module, *kernels_, *host_));
    RETURN_IF_ERROR(executable->SetArguments(*inputs_.Get(*module, [](const Module& m) {
      return std::make_shared<const std::vector<Literal>>(FormulaInputs(m));
    })));
    executables.push_back(std::move(executable));
  }
  for (const std::unique_ptr<GpuExecutable>& executable : executables) {
    runs.push_back([&executable] { return executable->ExecuteTimed(); });
  }
  return MeasureInterleavedTimed(runs, options, DeviceTimingMutex(kGpuDevice));
}

absl::StatusOr<Measurement> GpuRuntime::Measure(const Module& module) {
  return cache_.GetOrMeasure(Fingerprint(module), [&]() -> absl::StatusOr<Measurement> {
    absl::StatusOr<GpuRuntimeReport> report = MeasureUncached(module);
    if (!report.ok()) return report.status();
    return report->measurement;
  });
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

#include "backend/gpu_runtime.h"

#ifdef HLOGYM_HAVE_CUDA

#include <chrono>

#include "absl/strings/str_cat.h"

#include "core/base/status_macros.h"
#include "core/eval/formula_inputs.h"
#include "core/ir/fingerprint.h"

namespace hlogym {

absl::StatusOr<std::unique_ptr<GpuRuntime>> GpuRuntime::Create(MeasurementOptions options) {
  ASSIGN_OR_RETURN(GpuContext * gpu, GpuContext::Get());
  ASSIGN_OR_RETURN(std::unique_ptr<CpuKernelCompiler> host, CpuKernelCompiler::Create());
  return std::unique_ptr<GpuRuntime>(new GpuRuntime(*gpu, std::move(host), options));
}

std::shared_ptr<const std::vector<Literal>> GpuRuntime::Inputs(const Module& module) {
  std::string key;
  for (const Instruction* p : module.entry()->parameters()) absl::StrAppend(&key, p->shape().ToString(), ";");
  std::lock_guard<std::mutex> lock(inputs_mutex_);
  for (auto it = inputs_.begin(); it != inputs_.end(); ++it) {
    if (it->first == key) {
      inputs_.splice(inputs_.begin(), inputs_, it);
      return inputs_.front().second;
    }
  }
  auto inputs = std::make_shared<const std::vector<Literal>>(FormulaInputs(module));
  inputs_.emplace_front(key, inputs);
  constexpr size_t kKept = 4;
  if (inputs_.size() > kKept) inputs_.pop_back();
  return inputs;
}

absl::StatusOr<GpuRuntimeReport> GpuRuntime::MeasureUncached(const Module& module) {
  GpuRuntimeReport report;
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> executable,
                   GpuExecutable::Compile(module, *kernels_, *host_));
  report.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.stats = executable->stats();
  RETURN_IF_ERROR(executable->SetArguments(*Inputs(module)));
  ASSIGN_OR_RETURN(report.measurement,
                   MeasureTimedRuns([&] { return executable->ExecuteTimed(); }, options_,
                                    DeviceTimingMutex("gpu:0")));
  return report;
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

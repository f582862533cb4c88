#include "backend/cost_calibration.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/cpu_executable.h"
#include "core/base/status_macros.h"
#include "core/eval/formula_inputs.h"

namespace hlogym {
namespace {

// The fastest time of each step of `module`'s entry computation over `runs`
// profiled runs, by instruction name.
absl::StatusOr<std::map<std::string, double>> FastestSteps(const Module& module,
                                                          CpuKernelCompiler& compiler, int runs) {
  ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutable> executable,
                   CpuExecutable::Compile(module, compiler));
  const std::vector<Literal> inputs = FormulaInputs(module);
  const std::vector<const void*> leaves = LeafData(inputs);
  std::map<std::string, double> fastest;
  // One more run than asked: the first touches fresh buffers.
  for (int run = 0; run <= runs; ++run) {
    ASSIGN_OR_RETURN(std::vector<CpuExecutable::StepTime> steps,
                     executable->ExecuteProfiled(leaves));
    if (run == 0) continue;
    for (const CpuExecutable::StepTime& step : steps) {
      auto [it, inserted] =
          fastest.emplace(step.instruction, std::numeric_limits<double>::infinity());
      it->second = std::min(it->second, step.seconds);
    }
  }
  return fastest;
}

}  // namespace

absl::StatusOr<CalibrationResult> CalibrateCpuDevice(absl::Span<const Module* const> modules,
                                                     CpuKernelCompiler& compiler, int runs) {
  if (runs < 1) {
    return absl::InvalidArgumentError(absl::StrCat("calibration needs runs >= 1, got ", runs));
  }
  const DeviceSpec initial = CpuDevice();
  std::vector<KernelSample> samples;
  for (const Module* module : modules) {
    absl::StatusOr<std::map<std::string, double>> fastest =
        FastestSteps(*module, compiler, runs);
    if (!fastest.ok()) {
      return absl::Status(fastest.status().code(),
                          absl::StrCat("calibrating on module `", module->name(),
                                       "`: ", fastest.status().message()));
    }
    // The model's kernels of the entry computation, matched to their steps
    // (those inside loops are timed as part of their loop).
    for (const KernelCost& k : EstimateCost(*module, initial).per_kernel) {
      if (k.kernel->parent() != module->entry()) continue;
      auto step = fastest->find(k.kernel->name());
      if (step == fastest->end()) continue;
      samples.push_back({k.bytes, k.flops, step->second});
    }
  }
  ASSIGN_OR_RETURN(DeviceSpec device, Calibrate(initial, samples));
  return CalibrationResult{device, static_cast<int64_t>(samples.size())};
}

}  // namespace hlogym

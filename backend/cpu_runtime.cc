#include "backend/cpu_runtime.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/base/status_macros.h"
#include "core/eval/formula_inputs.h"
#include "core/ir/fingerprint.h"

namespace hlogym {

// The formula inputs, copied once into 64-byte aligned leaves.
class CpuRuntime::AlignedInputs {
 public:
  explicit AlignedInputs(const Module& module) {
    for (const Literal& input : FormulaInputs(module)) Add(input);
  }
  ~AlignedInputs() {
    for (void* leaf : owned_) std::free(leaf);
  }
  AlignedInputs(const AlignedInputs&) = delete;
  AlignedInputs& operator=(const AlignedInputs&) = delete;
  const std::vector<const void*>& leaves() const { return leaves_; }

 private:
  void Add(const Literal& literal) {
    if (literal.is_tuple()) {
      for (const Literal& element : literal.tuple_elements()) Add(element);
      return;
    }
    const size_t size = (literal.raw_size() + kBufferAlignment) / kBufferAlignment * kBufferAlignment;
    void* leaf = std::aligned_alloc(kBufferAlignment, size);
    if (literal.raw_size() > 0) std::memcpy(leaf, literal.raw_data(), literal.raw_size());
    owned_.push_back(leaf);
    leaves_.push_back(leaf);
  }
  std::vector<void*> owned_;
  std::vector<const void*> leaves_;
};

CpuRuntime::CpuRuntime(std::unique_ptr<CpuKernelCompiler> compiler, MeasurementOptions options)
    : compiler_(std::move(compiler)),
      options_(options),
      inputs_(std::make_unique<FormulaInputCache<AlignedInputs>>()) {}

CpuRuntime::~CpuRuntime() = default;

absl::StatusOr<std::unique_ptr<CpuRuntime>> CpuRuntime::Create(MeasurementOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<CpuKernelCompiler> compiler, CpuKernelCompiler::Create());
  return std::unique_ptr<CpuRuntime>(new CpuRuntime(std::move(compiler), options));
}

absl::StatusOr<CpuRuntimeReport> CpuRuntime::MeasureUncached(const Module& module) {
  CpuRuntimeReport report;
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutable> executable,
                   CpuExecutable::Compile(module, *compiler_));
  report.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.stats = executable->stats();
  const std::shared_ptr<const AlignedInputs> inputs = inputs_->Get(
      module, [](const Module& m) { return std::make_shared<const AlignedInputs>(m); });
  ASSIGN_OR_RETURN(report.measurement,
                   MeasureRuns([&] { return executable->Execute(inputs->leaves()); }, options_,
                               DeviceTimingMutex(kCpuDevice)));
  return report;
}

absl::StatusOr<std::vector<Measurement>> CpuRuntime::MeasureInterleaved(
    const std::vector<const Module*>& modules, double seconds_per_module) {
  MeasurementOptions options = options_;
  if (seconds_per_module > 0) options.max_seconds = seconds_per_module;
  std::vector<std::unique_ptr<CpuExecutable>> executables;
  std::vector<std::shared_ptr<const AlignedInputs>> inputs;
  std::vector<std::function<absl::Status()>> runs;
  for (const Module* module : modules) {
    ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutable> executable,
                     CpuExecutable::Compile(*module, *compiler_));
    executables.push_back(std::move(executable));
    inputs.push_back(inputs_->Get(
        *module, [](const Module& m) { return std::make_shared<const AlignedInputs>(m); }));
  }
  for (size_t i = 0; i < modules.size(); ++i) {
    runs.push_back([&, i] { return executables[i]->Execute(inputs[i]->leaves()); });
  }
  return hlogym::MeasureInterleaved(runs, options, DeviceTimingMutex(kCpuDevice));
}

absl::StatusOr<Measurement> CpuRuntime::Measure(const Module& module) {
  return cache_.GetOrMeasure(Fingerprint(module), [&]() -> absl::StatusOr<Measurement> {
    absl::StatusOr<CpuRuntimeReport> report = MeasureUncached(module);
    if (!report.ok()) return report.status();
    return report->measurement;
  });
}

}  // namespace hlogym

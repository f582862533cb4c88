// Reference interpreter speed on the corpus (formula inputs).
//
//   BM_Evaluate/corpus/<name>   one full-size module, wall and process CPU time
//   BM_Evaluate/small/<name>    one small-shape twin
//   BM_EvaluateCorpus           all 25 full-size modules in turn: the figure
//                               the interpreter's < 60 s budget is about
//
// Each benchmark runs once by default (full-size modules take seconds); pass
// --benchmark_filter to pick modules. HLOGYM_EVAL_PROFILE=1 prints, after
// each evaluation, the interpreter's self time per opcode and element type. Data comes from $HLOGYM_SOURCE_DIR or
// the HLOGYM_SOURCE_DIR the build defines.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "benchmark/benchmark.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

struct Loaded {
  std::string name;
  std::shared_ptr<Module> module;
  std::vector<Literal> inputs;
};

std::vector<Loaded> LoadDir(const std::filesystem::path& dir) {
  std::vector<Loaded> modules;
  for (const auto& path : bench::HloPaths(dir)) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(bench::ReadText(path));
    if (!module.ok()) continue;  // the parser tests report parse failures
    std::shared_ptr<Module> shared = *std::move(module);
    std::vector<Literal> inputs = FormulaInputs(*shared);
    modules.push_back({path.stem().string(), std::move(shared), std::move(inputs)});
  }
  return modules;
}

void EvaluateOne(benchmark::State& state, const Loaded* loaded) {
  for (auto _ : state) {
    absl::StatusOr<std::vector<Literal>> outputs = EvaluateFlat(*loaded->module, loaded->inputs);
    if (!outputs.ok()) {
      state.SkipWithError(std::string(outputs.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(outputs->data());
  }
}

void EvaluateAll(benchmark::State& state, const std::vector<Loaded>* modules) {
  for (auto _ : state) {
    for (const Loaded& loaded : *modules) {
      absl::StatusOr<std::vector<Literal>> outputs = EvaluateFlat(*loaded.module, loaded.inputs);
      if (!outputs.ok()) {
        state.SkipWithError((loaded.name + ": " + std::string(outputs.status().message())).c_str());
        return;
      }
    }
  }
  state.counters["modules"] = static_cast<double>(modules->size());
}

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) {
  using namespace hlogym;
  const std::filesystem::path data = bench::SourceDir() / "data" / "corpus";
  // Kept alive for the whole run: benchmarks hold pointers into them.
  static const std::vector<Loaded> corpus = LoadDir(data / "hlo");
  static const std::vector<Loaded> small = LoadDir(data / "small" / "hlo");
  for (const Loaded& m : corpus) {
    benchmark::RegisterBenchmark(("BM_Evaluate/corpus/" + m.name).c_str(), EvaluateOne, &m)
        ->Iterations(1)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
  }
  for (const Loaded& m : small) {
    benchmark::RegisterBenchmark(("BM_Evaluate/small/" + m.name).c_str(), EvaluateOne, &m)
        ->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_EvaluateCorpus", EvaluateAll, &corpus)
      ->Iterations(1)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kSecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The CPU backend on the full-size corpus (data/corpus/hlo): per module,
// after the default pipeline, one benchmark times CpuExecutable::Execute on
// the formula inputs. Its counters give the cold compile time (a fresh kernel
// compiler), the kernel count, the measured median (backend/measurement) of
// the default-pipeline module and of the unfused module (the parsed text,
// every instruction its own kernel), and fusion_speedup = unfused / fused.
//   build/bench/hlogym_cpu_backend_bench --benchmark_filter='softmax|gelu'
// HLOGYM_BENCH_MODULES=a,b limits the modules by name prefix without
// paying for the others' set-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "backend/cpu_executable.h"
#include "backend/measurement.h"
#include "bench/bench_data.h"
#include "benchmark/benchmark.h"
#include "core/eval/formula_inputs.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

std::vector<const void*> Leaves(const std::vector<Literal>& inputs) {
  std::vector<const void*> leaves;
  std::vector<const Literal*> stack;
  for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) stack.push_back(&*it);
  while (!stack.empty()) {
    const Literal* l = stack.back();
    stack.pop_back();
    if (!l->is_tuple()) {
      leaves.push_back(l->raw_data());
      continue;
    }
    for (auto it = l->tuple_elements().rbegin(); it != l->tuple_elements().rend(); ++it) {
      stack.push_back(&*it);
    }
  }
  return leaves;
}

struct Compiled {
  std::unique_ptr<CpuKernelCompiler> compiler;
  std::unique_ptr<CpuExecutable> executable;
  double compile_seconds = 0;
};

absl::StatusOr<Compiled> CompileCold(const Module& module) {
  Compiled c;
  absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> compiler = CpuKernelCompiler::Create();
  if (!compiler.ok()) return compiler.status();
  c.compiler = *std::move(compiler);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(module, *c.compiler);
  if (!e.ok()) return e.status();
  c.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.executable = *std::move(e);
  return c;
}

void BM_CorpusModule(benchmark::State& state, const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Module>> unfused = ParseModule(text.str());
  absl::StatusOr<std::unique_ptr<Module>> fused = ParseModule(text.str());
  if (!unfused.ok() || !fused.ok()) {
    state.SkipWithError("parse failed");
    return;
  }
  if (!DefaultPipeline().Run(**fused).ok()) {
    state.SkipWithError("default pipeline failed");
    return;
  }
  const std::vector<Literal> inputs = FormulaInputs(**fused);
  const std::vector<const void*> leaves = Leaves(inputs);
  absl::StatusOr<Compiled> f = CompileCold(**fused);
  absl::StatusOr<Compiled> u = CompileCold(**unfused);
  if (!f.ok() || !u.ok()) {
    state.SkipWithError((f.ok() ? u.status() : f.status()).ToString().c_str());
    return;
  }
  MeasurementOptions options;
  options.max_seconds = 2.0;
  absl::StatusOr<Measurement> mf = MeasureRuns(
      [&] { return f->executable->Execute(leaves); }, options, DeviceTimingMutex("cpu"));
  absl::StatusOr<Measurement> mu = MeasureRuns(
      [&] { return u->executable->Execute(leaves); }, options, DeviceTimingMutex("cpu"));
  if (!mf.ok() || !mu.ok()) {
    state.SkipWithError((mf.ok() ? mu.status() : mf.status()).ToString().c_str());
    return;
  }
  if (const char* profile = std::getenv("HLOGYM_BENCH_PROFILE"); profile && *profile == '1') {
    // The five slowest steps of the default-pipeline module, on stderr.
    absl::StatusOr<std::vector<CpuExecutable::StepTime>> times =
        f->executable->ExecuteProfiled(leaves);
    if (times.ok()) {
      std::sort(times->begin(), times->end(),
                [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
      for (size_t i = 0; i < times->size() && i < 5; ++i) {
        std::fprintf(stderr, "  %s: %-40s %-12s %9.3f ms\n", path.stem().string().c_str(),
                     (*times)[i].instruction.c_str(), (*times)[i].kind.c_str(),
                     (*times)[i].seconds * 1e3);
      }
    }
  }
  for (auto _ : state) {
    absl::Status status = f->executable->Execute(leaves);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
  }
  const CpuExecutableStats& s = f->executable->stats();
  state.counters["kernels"] = static_cast<double>(s.total_kernel_count);
  state.counters["host_interp"] = static_cast<double>(s.total_interpreter_op_count);
  state.counters["compile_ms"] = f->compile_seconds * 1e3;
  state.counters["fused_us"] = mf->median_seconds * 1e6;
  state.counters["spread"] = mf->spread;
  state.counters["unfused_kernels"] = static_cast<double>(u->executable->stats().total_kernel_count);
  state.counters["unfused_us"] = mu->median_seconds * 1e6;
  state.counters["fusion_speedup"] = mu->median_seconds / mf->median_seconds;
  state.counters["arena_MB"] = static_cast<double>(s.arena_bytes) / 1e6;
  state.counters["unshared_MB"] = static_cast<double>(s.unshared_bytes) / 1e6;
}

bool Wanted(const std::string& name) {
  const char* only = std::getenv("HLOGYM_BENCH_MODULES");
  if (only == nullptr || *only == '\0') return true;
  for (absl::string_view prefix : absl::StrSplit(only, ',')) {
    if (!prefix.empty() && name.rfind(std::string(prefix), 0) == 0) return true;
  }
  return false;
}

const bool registered = [] {
  for (const std::filesystem::path& path : bench::HloPaths("data/corpus/hlo")) {
    if (!Wanted(path.stem().string())) continue;
    benchmark::RegisterBenchmark(("cpu_backend/" + path.stem().string()).c_str(),
                                 [path](benchmark::State& state) { BM_CorpusModule(state, path); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(3);
  }
  return true;
}();

}  // namespace
}  // namespace hlogym

// The CPU backend on the full-size corpus (data/corpus/hlo): per module,
// after the default pipeline, one benchmark times CpuExecutable::Execute on
// the formula inputs. Its counters give the cold compile time (a fresh kernel
// compiler), the kernel count, the measured medians (backend/measurement,
// the two timed in alternation) of the default-pipeline module and of the
// unfused module (the parsed text, every instruction its own kernel), and
// fusion_speedup = unfused / fused.
//   build/bench/hlogym_cpu_backend_bench --benchmark_filter='softmax|gelu'
// HLOGYM_BENCH_MODULES=a,b limits the modules by name prefix without
// paying for the others' set-up.
// More counters: interp_ms (one reference-interpreter run of the parsed
// module; HLOGYM_BENCH_INTERP=0 skips it), warm_compile_ms (the fused module
// again on its warm kernel cache), decision_ms / decision_max_ms (median and
// max over up to 8 fixed alternatives, spread evenly over the module's, of
// the parsed module with that one fusion decision taken, compiled after the
// module with none: a warm-cache recompile after one decision; its kernels
// compile at the same optimization level as every kernel's), est_us / est_ratio (the
// cost model, device cpu, against fused_us). The last benchmark,
// cpu_backend/~ranking, compares measured and estimated runtimes of pairs of
// graphs of one module (random fusion decisions, the unfused and the
// default-pipeline module, timed in alternation) and reports how often the model orders a pair as
// measurement does: raw CpuDevice(), and calibrated with Calibrate() on the
// kernels of every other module (fit on one half, scored on the other);
// HLOGYM_BENCH_RANK_DETAIL=1 prints each pair the raw model misorders.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "backend/cost_model.h"
#include "backend/cpu_executable.h"
#include "backend/measurement.h"
#include "bench/bench_data.h"
#include "benchmark/benchmark.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace hlogym {
namespace {

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

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One graph of a module for the ranking check: its measured median and what
// the cost model needs (per-kernel bytes/flops, to refit it).
struct RankSample {
  int module = 0;
  std::string graph;  // "unfused", "default", "p0.25", ...
  double measured = 0;
  CostEstimate estimate;
};
std::map<int, std::string>& ModuleNames() {
  static std::map<int, std::string> names;
  return names;
}
std::vector<RankSample>& RankSamples() {
  static std::vector<RankSample> samples;
  return samples;
}

// Records one ranking sample. With HLOGYM_BENCH_RANK_DUMP=DIR it also writes
// the graph to DIR/MODULE.GRAPH.hlo and a line "MODULE GRAPH SECONDS" to
// DIR/measured.tsv, so that a change to the cost model can be scored on the
// same measurements without timing anything again
// (bench/cost_model_ranking.py).
void AddRankSample(int module, const std::string& graph, double measured, const Module& m) {
  RankSamples().push_back({module, graph, measured, EstimateCost(m, CpuDevice())});
  const char* dir = std::getenv("HLOGYM_BENCH_RANK_DUMP");
  if (dir == nullptr || *dir == '\0') return;
  std::filesystem::create_directories(dir);
  const std::string stem = absl::StrCat(ModuleNames()[module], ".", graph);
  std::ofstream(std::filesystem::path(dir) / (stem + ".hlo")) << PrintModule(m);
  std::ofstream(std::filesystem::path(dir) / "measured.tsv", std::ios::app)
      << ModuleNames()[module] << "\t" << graph << "\t" << absl::StrFormat("%.9g", measured)
      << "\n";
}

// `base` with every producer-consumer fusion alternative decided by `choose`
// (the number of choices -> the choice).
using ChoiceFn = std::function<int64_t(int64_t, int64_t)>;
absl::StatusOr<std::unique_ptr<Module>> Decided(const Module& base, const ChoiceFn& choose) {
  std::unique_ptr<Module> m = base.Clone();
  absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass("fusion");
  if (!pass.ok()) return pass.status();
  absl::StatusOr<int64_t> n = RunDryPass(**pass, *m);
  if (!n.ok()) return n.status();
  std::vector<int64_t> choices;
  int64_t k = 0;
  for (const AlternativeNode& alt : FindAlternatives(*m)) {
    choices.push_back(choose(k++, alt.num_choices()));
  }
  absl::Status applied = ApplyChoices(*m, choices);
  if (!applied.ok()) return applied;
  return m;
}

int64_t AlternativeCount(const Module& base) {
  std::unique_ptr<Module> m = base.Clone();
  absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass("fusion");
  if (!pass.ok()) return 0;
  absl::StatusOr<int64_t> n = RunDryPass(**pass, *m);
  return n.ok() ? static_cast<int64_t>(FindAlternatives(*m).size()) : 0;
}

void BM_CorpusModule(benchmark::State& state, const std::filesystem::path& path,
                     int module_number) {
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
  if (const char* dump = std::getenv("HLOGYM_BENCH_DUMP"); dump && *dump == '1') {
    std::fprintf(stderr, "%s\n", PrintModule(**fused).c_str());
  }
  const std::vector<Literal> inputs = FormulaInputs(**fused);
  const std::vector<const void*> leaves = LeafData(inputs);
  absl::StatusOr<Compiled> f = CompileCold(**fused);
  absl::StatusOr<Compiled> u = CompileCold(**unfused);
  if (!f.ok() || !u.ok()) {
    state.SkipWithError((f.ok() ? u.status() : f.status()).ToString().c_str());
    return;
  }
  // Unfused and fused in alternation: their ratio is the figure.
  MeasurementOptions options;
  options.max_seconds = 2.0;
  absl::StatusOr<std::vector<Measurement>> both =
      MeasureInterleaved({[&] { return u->executable->Execute(leaves); },
                          [&] { return f->executable->Execute(leaves); }},
                         options, DeviceTimingMutex("cpu"));
  if (!both.ok()) {
    state.SkipWithError(both.status().ToString().c_str());
    return;
  }
  const Measurement* mu = &(*both)[0];
  const Measurement* mf = &(*both)[1];
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
  // Warm kernel cache: the same module again, and one decision away.
  {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<CpuExecutable>> again =
        CpuExecutable::Compile(**fused, *f->compiler);
    if (again.ok()) state.counters["warm_compile_ms"] = SecondsSince(start) * 1e3;
  }
  // One decision at a time, at up to 8 alternatives spread evenly over the
  // module's (the same ones every run): each one-decision module compiled on
  // the kernel cache of the module with none.
  const int64_t alternatives = AlternativeCount(**unfused);
  if (alternatives > 0) {
    absl::StatusOr<std::unique_ptr<Module>> none =
        Decided(**unfused, [](int64_t, int64_t) { return int64_t{0}; });
    absl::StatusOr<Compiled> base =
        none.ok() ? CompileCold(**none) : absl::StatusOr<Compiled>(none.status());
    std::vector<double> decision_ms;
    const int64_t picks = std::min<int64_t>(alternatives, 8);
    for (int64_t i = 0; base.ok() && i < picks; ++i) {
      const int64_t picked = i * alternatives / picks;
      absl::StatusOr<std::unique_ptr<Module>> one = Decided(
          **unfused, [&](int64_t k, int64_t n) { return k == picked && n > 1 ? int64_t{1} : 0; });
      if (!one.ok()) continue;
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::unique_ptr<CpuExecutable>> e =
          CpuExecutable::Compile(**one, *base->compiler);
      if (e.ok()) decision_ms.push_back(SecondsSince(start) * 1e3);
    }
    if (!decision_ms.empty()) {
      std::sort(decision_ms.begin(), decision_ms.end());
      state.counters["decision_ms"] = decision_ms[(decision_ms.size() - 1) / 2];
      state.counters["decision_max_ms"] = decision_ms.back();
    }
  }
  const CostEstimate estimate = EstimateCost(**fused, CpuDevice());
  state.counters["est_us"] = estimate.seconds * 1e6;
  state.counters["est_ratio"] = estimate.seconds / mf->median_seconds;
  if (const char* interp = std::getenv("HLOGYM_BENCH_INTERP"); !interp || *interp != '0') {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> result = Evaluate(**unfused, inputs);
    if (result.ok()) state.counters["interp_ms"] = SecondsSince(start) * 1e3;
  }
  // Ranking samples: the unfused and default modules, and random decisions
  // (modules whose fused run is short, to keep the bench's time bounded),
  // all measured in alternation so that a pair's order is not a change of
  // load between their measurements.
  std::mt19937_64 rng(1234 + module_number);
  // Skips the draw that once picked decision_ms's alternative, so that the
  // samples stay those of the ranking figures reported before.
  if (alternatives > 0) rng.discard(1);
  struct Variant {
    std::string name;
    std::unique_ptr<Module> module;
    std::unique_ptr<CpuExecutable> executable;
  };
  std::vector<Variant> variants;
  if (alternatives > 0 && mf->median_seconds < 0.1) {
    for (int variant = 0; variant < 4; ++variant) {
      const double p = 0.25 * (variant + 1);
      absl::StatusOr<std::unique_ptr<Module>> m = Decided(**unfused, [&](int64_t, int64_t n) {
        return n > 1 && std::uniform_real_distribution<double>(0, 1)(rng) < p
                   ? static_cast<int64_t>(1 + rng() % (n - 1))
                   : int64_t{0};
      });
      if (!m.ok()) continue;
      absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(**m, *u->compiler);
      if (!e.ok()) continue;
      variants.push_back({absl::StrCat("p", p), *std::move(m), *std::move(e)});
    }
  }
  if (variants.empty()) {
    AddRankSample(module_number, "unfused", mu->median_seconds, **unfused);
    AddRankSample(module_number, "default", mf->median_seconds, **fused);
  } else {
    MeasurementOptions quick;
    quick.max_seconds = 0.5;
    std::vector<std::function<absl::Status()>> runs = {
        [&] { return u->executable->Execute(leaves); },
        [&] { return f->executable->Execute(leaves); }};
    for (const Variant& v : variants) {
      runs.push_back([&v, &leaves] { return v.executable->Execute(leaves); });
    }
    absl::StatusOr<std::vector<Measurement>> r =
        MeasureInterleaved(runs, quick, DeviceTimingMutex("cpu"));
    if (r.ok()) {
      AddRankSample(module_number, "unfused", (*r)[0].median_seconds, **unfused);
      AddRankSample(module_number, "default", (*r)[1].median_seconds, **fused);
      for (size_t i = 0; i < variants.size(); ++i) {
        AddRankSample(module_number, variants[i].name, (*r)[i + 2].median_seconds,
                      *variants[i].module);
      }
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

// Estimated seconds of `estimate` (made with CpuDevice()) under `device`:
// its kernels' bytes and flops re-costed, transcendentals at the device's
// weight.
double Reestimate(const CostEstimate& estimate, const DeviceSpec& device) {
  const double extra = device.transcendental_flops - CpuDevice().transcendental_flops;
  double seconds = 0;
  for (const KernelCost& k : estimate.per_kernel) {
    const double flops = k.flops + k.transcendentals * extra;
    seconds += KernelSeconds(k.bytes, flops, device);
  }
  return seconds;
}

// Pairs of graphs of one module (modules where `score(module)`): how many
// the estimate orders as measurement does. Pairs whose measured times are
// within 5% of each other are ties and not counted.
std::pair<int, int> AgreeingPairs(const std::function<bool(int)>& score,
                                  const std::function<double(const RankSample&)>& estimate) {
  const std::vector<RankSample>& all = RankSamples();
  int agree = 0, pairs = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      if (all[i].module != all[j].module || !score(all[i].module)) continue;
      const double a = all[i].measured, b = all[j].measured;
      if (std::max(a, b) < 1.05 * std::min(a, b)) continue;
      ++pairs;
      if ((a < b) == (estimate(all[i]) < estimate(all[j]))) ++agree;
    }
  }
  return {agree, pairs};
}

// Calibrate() on the graphs of modules where `fit(module)`: each graph is
// one sample with its total bytes and flops, its launches taken off with the
// initial launch cost.
DeviceSpec FitOn(const std::function<bool(int)>& fit) {
  const DeviceSpec initial = CpuDevice();
  std::vector<KernelSample> samples;
  for (const RankSample& s : RankSamples()) {
    if (!fit(s.module)) continue;
    const double launches = static_cast<double>(s.estimate.kernels) * initial.launch_seconds;
    samples.push_back({s.estimate.bytes, s.estimate.flops, std::max(1e-7, s.measured - launches)});
  }
  absl::StatusOr<DeviceSpec> fitted = Calibrate(initial, samples);
  if (!fitted.ok()) return initial;
  // The fit's intercept is per graph, not per kernel: keep the launch cost.
  fitted->launch_seconds = initial.launch_seconds;
  return *fitted;
}

void BM_Ranking(benchmark::State& state) {
  for (auto _ : state) {
  }
  auto raw = [](const RankSample& s) { return s.estimate.seconds; };
  const auto [agree, pairs] = AgreeingPairs([](int) { return true; }, raw);
  state.counters["graphs"] = static_cast<double>(RankSamples().size());
  state.counters["pairs"] = pairs;
  state.counters["agree_raw"] = pairs > 0 ? static_cast<double>(agree) / pairs : 0;
  // The same measurements scored with transcendentals at 16 flops (the
  // model before they were the device's), to compare models without noise.
  DeviceSpec t16 = CpuDevice();
  t16.transcendental_flops = 16;
  const auto [agree16, pairs16] = AgreeingPairs(
      [](int) { return true; }, [&](const RankSample& s) { return Reestimate(s.estimate, t16); });
  state.counters["agree_raw_t16"] = pairs16 > 0 ? static_cast<double>(agree16) / pairs16 : 0;
  // Two-fold: fit on even-numbered modules, score odd ones, and back.
  const DeviceSpec even = FitOn([](int m) { return m % 2 == 0; });
  const DeviceSpec odd = FitOn([](int m) { return m % 2 == 1; });
  const auto [a1, p1] = AgreeingPairs(
      [](int m) { return m % 2 == 1; },
      [&](const RankSample& s) { return Reestimate(s.estimate, even); });
  const auto [a2, p2] = AgreeingPairs(
      [](int m) { return m % 2 == 0; },
      [&](const RankSample& s) { return Reestimate(s.estimate, odd); });
  // Per module, on stderr: where the model and measurement disagree.
  std::map<int, std::pair<int, int>> per_module;
  for (const RankSample& r : RankSamples()) {
    if (per_module.count(r.module)) continue;
    per_module[r.module] = AgreeingPairs([&](int m) { return m == r.module; }, raw);
  }
  if (const char* detail = std::getenv("HLOGYM_BENCH_RANK_DETAIL"); detail && *detail == '1') {
    // Each misordered pair: the two graphs' kernels, MB moved, MFLOP,
    // measured and estimated ms.
    const std::vector<RankSample>& all = RankSamples();
    auto describe = [](const RankSample& s) {
      return absl::StrFormat("%-8s k=%-4d %8.2f MB %8.2f MFLOP meas %8.3f est %8.3f ms",
                             s.graph, s.estimate.kernels, s.estimate.bytes / 1e6,
                             s.estimate.flops / 1e6, s.measured * 1e3, s.estimate.seconds * 1e3);
    };
    for (size_t i = 0; i < all.size(); ++i) {
      for (size_t j = i + 1; j < all.size(); ++j) {
        if (all[i].module != all[j].module) continue;
        const double a = all[i].measured, b = all[j].measured;
        if (std::max(a, b) < 1.05 * std::min(a, b)) continue;
        if ((a < b) == (raw(all[i]) < raw(all[j]))) continue;
        std::fprintf(stderr, "misordered %s\n  %s\n  %s\n", ModuleNames()[all[i].module].c_str(),
                     describe(all[i]).c_str(), describe(all[j]).c_str());
      }
    }
  }
  for (const auto& [m, ap] : per_module) {
    if (ap.second > 0) {
      std::fprintf(stderr, "ranking %-36s %d of %d pairs agree\n", ModuleNames()[m].c_str(),
                   ap.first, ap.second);
    }
  }
  state.counters["agree_calibrated"] =
      p1 + p2 > 0 ? static_cast<double>(a1 + a2) / (p1 + p2) : 0;
  std::fprintf(stderr,
               "ranking: %d of %d pairs agree (raw cpu model; %d with transcendentals at 16 "
               "flops); calibrated two-fold %d of %d; "
               "fitted on even modules: %.3g GB/s, %.3g GFLOP/s, %.3g us/kernel\n",
               agree, pairs, agree16, a1 + a2, p1 + p2, even.bandwidth_bytes_per_s / 1e9,
               even.peak_flops_per_s / 1e9, even.launch_seconds * 1e6);
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
  int number = 0;
  for (const std::filesystem::path& path : bench::HloPaths("data/corpus/hlo")) {
    ++number;
    if (!Wanted(path.stem().string())) continue;
    ModuleNames()[number] = path.stem().string();
    benchmark::RegisterBenchmark(
        ("cpu_backend/" + path.stem().string()).c_str(),
        [path, number](benchmark::State& state) { BM_CorpusModule(state, path, number); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(3);
  }
  benchmark::RegisterBenchmark("cpu_backend/~ranking", BM_Ranking)->Iterations(1);
  return true;
}();

}  // namespace
}  // namespace hlogym

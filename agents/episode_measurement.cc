#include "agents/episode_measurement.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/passes/default_pipeline.h"

namespace hlogym {
namespace {

// The modules one benchmark's rows are timed on.
struct Baselines {
  const Module* original = nullptr;  // after the pre-passes (owned by the set)
  std::unique_ptr<Module> fused;     // after the default pipeline
  absl::Status status;               // why they could not be had
};

Baselines MakeBaselines(const BenchmarkSet& benchmarks, int64_t benchmark) {
  Baselines b;
  absl::StatusOr<const PreparedBenchmark*> prepared = benchmarks.Prepared(benchmark);
  if (!prepared.ok()) {
    b.status = prepared.status();
    return b;
  }
  b.original = (*prepared)->module.get();
  // As BenchmarkSet does: the default pipeline runs from the source module.
  b.fused = benchmarks.source(benchmark).Clone();
  Pipeline pipeline = DefaultPipeline();
  b.status = pipeline.Run(*b.fused).status();
  return b;
}

}  // namespace

absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             std::vector<EpisodeResult>& results) {
  for (const EpisodeResult& r : results) {
    if (!r.error.empty()) continue;
    if (r.benchmark < 0 || r.benchmark >= benchmarks.size()) {
      return absl::OutOfRangeError(absl::StrCat("benchmark index ", r.benchmark,
                                                " is out of range [0, ", benchmarks.size(), ")"));
    }
    if (r.final_module == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the episode on ", r.benchmark_name, " kept no final module"));
    }
  }
  // Every module to time, once per benchmark for the baselines.
  std::map<int64_t, Baselines> baselines;
  for (const EpisodeResult& r : results) {
    if (r.error.empty() && !baselines.contains(r.benchmark)) {
      baselines.emplace(r.benchmark, MakeBaselines(benchmarks, r.benchmark));
    }
  }
  std::map<uint64_t, const Module*> distinct;  // by fingerprint
  for (const auto& [b, base] : baselines) {
    if (!base.status.ok()) continue;
    distinct.emplace(Fingerprint(*base.original), base.original);
    distinct.emplace(Fingerprint(*base.fused), base.fused.get());
  }
  for (const EpisodeResult& r : results) {
    if (r.error.empty()) distinct.emplace(r.fingerprint, r.final_module.get());
  }
  // Compiling runs in parallel; timing, below, one module after the other.
  std::vector<const Module*> modules;
  for (const auto& [fingerprint, module] : distinct) modules.push_back(module);
  ParallelForEach(0, static_cast<int64_t>(modules.size()), [&](int64_t i) {
    source.Prepare(*modules[i]).IgnoreError();  // it recurs in Runtime, per result
  });

  for (EpisodeResult& r : results) {
    if (!r.error.empty()) continue;
    const Baselines& base = baselines.at(r.benchmark);
    absl::Status status = base.status;
    auto time = [&](const Module& module, const char* what, double& seconds) {
      if (!status.ok()) return;
      absl::StatusOr<double> t = source.Runtime(module);
      if (t.ok()) {
        seconds = *t;
      } else {
        status = absl::Status(t.status().code(), absl::StrCat(what, ": ", t.status().message()));
      }
    };
    double original = 0, fused = 0, final_runtime = 0;
    if (status.ok()) {
      time(*base.original, "the original module", original);
      time(*base.fused, "the default-pipeline module", fused);
    }
    time(*r.final_module, "the final module", final_runtime);
    if (!status.ok()) {
      r.error = absl::StrCat("timing on ", source.name(), ": ", status.message());
      continue;
    }
    r.planned = {r.original_runtime, r.default_runtime, r.final_runtime};
    r.original_runtime = original;
    r.default_runtime = fused;
    r.final_runtime = final_runtime;
    r.measured_on = source.name();
  }
  return absl::OkStatus();
}

}  // namespace hlogym

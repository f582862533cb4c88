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

// A table row: one benchmark's episodes (of any agents) and the distinct
// modules they are timed on.
struct Row {
  int64_t benchmark = -1;
  std::vector<EpisodeResult*> results;
  Baselines base;
  std::vector<const Module*> modules;  // distinct by fingerprint
  std::map<uint64_t, size_t> index;    // fingerprint -> position in `modules`
  std::vector<absl::Status> prepared;  // per module: Prepare's verdict
  std::vector<absl::StatusOr<double>> runtimes;  // per module
  int runs = 0;                        // timed rounds, where interleaved

  size_t Add(const Module& module) {
    auto [it, added] = index.emplace(Fingerprint(module), modules.size());
    if (added) modules.push_back(&module);
    return it->second;
  }
};

// Times a row's modules: on a deterministic source each once; on a measured
// one those that compiled, together. A module that does not compile is left
// out rather than failing its row; an error of the interleaved timing fails
// every module timed in it (the source does not say which one failed).
void TimeRow(RuntimeSource& source, Row& row) {
  const size_t n = row.modules.size();
  row.runtimes.assign(n, absl::InternalError("not timed"));
  if (source.deterministic()) {
    for (size_t i = 0; i < n; ++i) row.runtimes[i] = source.Runtime(*row.modules[i]);
    return;
  }
  std::vector<size_t> timed;
  std::vector<const Module*> modules;
  for (size_t i = 0; i < n; ++i) {
    if (!row.prepared[i].ok()) {
      row.runtimes[i] = row.prepared[i];
      continue;
    }
    timed.push_back(i);
    modules.push_back(row.modules[i]);
  }
  if (modules.empty()) return;
  absl::StatusOr<std::vector<Measurement>> measured = source.MeasureInterleaved(modules);
  if (!measured.ok()) {
    const absl::Status failed(measured.status().code(),
                              absl::StrCat("timed together with ", modules.size() - 1,
                                           " other modules: ", measured.status().message()));
    for (size_t i : timed) row.runtimes[i] = failed;
    return;
  }
  for (size_t k = 0; k < timed.size(); ++k) row.runtimes[timed[k]] = (*measured)[k].median_seconds;
  row.runs = (*measured)[0].runs;
}

// Sets `r`'s runtimes from its row, or its error.
void Report(const RuntimeSource& source, const Row& row, EpisodeResult& r) {
  absl::Status status = row.base.status;
  auto take = [&](const Module& module, const char* what, double& seconds) {
    if (!status.ok()) return;
    const absl::StatusOr<double>& t = row.runtimes[row.index.at(Fingerprint(module))];
    if (t.ok()) {
      seconds = *t;
    } else {
      status = absl::Status(t.status().code(), absl::StrCat(what, ": ", t.status().message()));
    }
  };
  double original = 0, fused = 0, final_runtime = 0;
  if (status.ok()) {
    take(*row.base.original, "the original module", original);
    take(*row.base.fused, "the default-pipeline module", fused);
  }
  take(*r.final_module, "the final module", final_runtime);
  if (!status.ok()) {
    r.error = absl::StrCat("timing on ", source.name(), ": ", status.message());
    return;
  }
  r.planned = {r.original_runtime, r.default_runtime, r.final_runtime};
  r.original_runtime = original;
  r.default_runtime = fused;
  r.final_runtime = final_runtime;
  r.measured_on = source.name();
  r.measured_runs = row.runs;
  r.measured_modules = static_cast<int>(row.modules.size());
}

}  // namespace

absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             const std::vector<EpisodeResult*>& results) {
  for (const EpisodeResult* r : results) {
    if (!r->error.empty()) continue;
    if (r->benchmark < 0 || r->benchmark >= benchmarks.size()) {
      return absl::OutOfRangeError(absl::StrCat("benchmark index ", r->benchmark,
                                                " is out of range [0, ", benchmarks.size(), ")"));
    }
    if (r->final_module == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the episode on ", r->benchmark_name, " kept no final module"));
    }
  }
  std::map<int64_t, Row> by_benchmark;
  for (EpisodeResult* r : results) {
    if (!r->error.empty()) continue;
    Row& row = by_benchmark[r->benchmark];
    row.benchmark = r->benchmark;
    row.results.push_back(r);
  }
  std::vector<Row*> rows;
  for (auto& [benchmark, row] : by_benchmark) rows.push_back(&row);
  ParallelForEach(0, static_cast<int64_t>(rows.size()), [&](int64_t i) {
    rows[i]->base = MakeBaselines(benchmarks, rows[i]->benchmark);
  });
  // Every row's distinct modules; all of them compiled in parallel (the
  // timing below runs one row at a time, on every core).
  std::vector<std::pair<Row*, size_t>> to_prepare;
  for (Row* row : rows) {
    if (!row->base.status.ok()) continue;
    row->Add(*row->base.original);
    row->Add(*row->base.fused);
    for (const EpisodeResult* r : row->results) row->Add(*r->final_module);
    row->prepared.assign(row->modules.size(), absl::OkStatus());
    for (size_t k = 0; k < row->modules.size(); ++k) to_prepare.emplace_back(row, k);
  }
  std::vector<const Module*> modules;
  for (auto [row, k] : to_prepare) modules.push_back(row->modules[k]);
  std::vector<absl::Status> verdicts = source.PrepareAll(modules);
  for (size_t i = 0; i < to_prepare.size(); ++i) {
    auto [row, k] = to_prepare[i];
    row->prepared[k] = std::move(verdicts[i]);
  }
  for (Row* row : rows) {
    if (row->base.status.ok()) TimeRow(source, *row);
    for (EpisodeResult* r : row->results) Report(source, *row, *r);
  }
  return absl::OkStatus();
}

absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             std::vector<EpisodeResult>& results) {
  std::vector<EpisodeResult*> pointers;
  pointers.reserve(results.size());
  for (EpisodeResult& r : results) pointers.push_back(&r);
  return MeasureEpisodes(benchmarks, source, pointers);
}

}  // namespace hlogym

// Timing what episodes reached on another runtime source than the one they
// planned with. Agents that look ahead need thousands of runtimes per
// episode, which the cost model gives in microseconds; a table of results
// wants each end state measured on the real target. So episodes run on the
// cost model and their original, default-pipeline and final modules are
// then timed here, a table row at a time: a benchmark's distinct modules
// (across every agent's episodes on it) timed together, interleaved in
// rounds (RuntimeSource::MeasureInterleaved). Timed one after the other,
// minutes apart, a row's columns moved up to 2x with the load of a shared
// machine; timed together, a change of load shifts them all alike.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "agents/episode_runner.h"
#include "envs/benchmark_set.h"
#include "envs/runtime_source.h"

namespace hlogym {

// For each result without an error: moves the runtimes the episode saw into
// `planned`, and sets original_runtime (the benchmark after the pre-passes),
// default_runtime (after the default pipeline) and final_runtime (the
// episode's final_module) to what `source` says, `measured_on` to its name.
// The results may come from several agents' episodes: those on one
// benchmark form a row, whose distinct modules (by fingerprint: agents often
// end on the same graph, or on the default pipeline's) are timed once,
// together, so equal modules get the identical runtime. A measured source
// times a row with MeasureInterleaved (its kernels compiled for all rows in
// parallel first; `measured_runs` says how many rounds, `measured_modules`
// how many modules); a deterministic one is asked Runtime() once per module.
// A result whose modules cannot be timed gets `error` set (naming the module)
// and the others go on. Fails only for results that lack their final module
// or name a benchmark outside `benchmarks`.
absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             const std::vector<EpisodeResult*>& results);

// The same for one agent's results.
absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             std::vector<EpisodeResult>& results);

}  // namespace hlogym

// Timing what episodes reached on another runtime source than the one they
// planned with. Agents that look ahead need thousands of runtimes per
// episode, which the cost model gives in microseconds; a table of results
// wants each end state measured once, on the real target. So episodes run on
// the cost model and their original, default-pipeline and final modules are
// then timed here, one after the other (timed runs never overlap agents'
// work or each other).
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
// A result whose modules cannot be timed gets `error` set (naming the module)
// and the others go on. Fails only for results that lack their final module
// or name a benchmark outside `benchmarks`.
absl::Status MeasureEpisodes(const BenchmarkSet& benchmarks, RuntimeSource& source,
                             std::vector<EpisodeResult>& results);

}  // namespace hlogym

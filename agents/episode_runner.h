// Running agents through whole episodes: one episode on one benchmark, or
// many in parallel (one fresh agent and one env fork per episode, so results
// do not depend on the number of threads).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agents/agent.h"
#include "core/ir/module.h"
#include "envs/hlo_rewrite_env.h"

namespace hlogym {

struct EpisodeResult {
  int64_t benchmark = -1;
  std::string benchmark_name;
  uint64_t seed = 0;
  double original_runtime = 0;  // seconds, after the pre-passes
  double default_runtime = 0;   // after the default pipeline
  double final_runtime = 0;     // at the episode's end
  int64_t steps = 0;
  int64_t rewrites_applied = 0;
  bool terminated = false;
  bool truncated = false;
  uint64_t fingerprint = 0;     // of the final module
  std::vector<std::vector<int64_t>> choices;  // per step, replayable
  std::shared_ptr<const Module> final_module;  // the module at the episode's end
  double seconds = 0;           // wall time of the episode, agent included
  // Of it, waiting while another episode timed modules (MachineGate): not
  // the episode's own work, so EpisodeLimits::max_seconds leaves it out.
  double paused_seconds = 0;
  // Of it, the agent's time on a measured source (Agent::measuring_time).
  double measure_seconds = 0, measure_compile_seconds = 0;
  std::string stopped;          // why it ended early (EpisodeLimits, env limits), if it did
  std::string error;            // RunEpisodes: why this episode failed, if it did
  // Set by MeasureEpisodes: where the runtimes above were measured, and the
  // runtimes the episode itself saw (its env's runtime source).
  std::string measured_on;
  // The row this result was timed in: its distinct modules, and the timed
  // runs each got in interleaved rounds (0 where the source is deterministic).
  int measured_modules = 0, measured_runs = 0;
  struct {
    double original_runtime = 0, default_runtime = 0, final_runtime = 0;
  } planned;
};

// Guards against episodes that run away (some policies make modules grow
// step after step, e.g. random duplication of large fusions). Checked
// between steps; a stopped episode keeps the state it reached, which is a
// real result of the agent, and says why in `stopped`. 0 disables a limit.
// A step that would outgrow the env's graph limits (max_nodes, ...) stops the
// episode the same way. The limits do not stop an agent replaying a finished
// plan (Agent::following_plan): its steps are bounded by the plan, and a plan
// made in 29 s of a 30 s limit (a busy machine) was otherwise cut after one
// step, ending 12x slower than the state it had chosen.
struct EpisodeLimits {
  double max_seconds = 0;       // wall time, less pauses (EpisodeResult::paused_seconds)
  double max_growth = 0;        // instructions, relative to the episode's start
};

// The module an episode that ended in `env`'s current state ends with: an
// episode cut short (truncated, stopped) holds the next dry pass's
// alternatives, whose candidates would otherwise be compiled and timed with
// it; keeping the original everywhere gives that module back exactly.
absl::StatusOr<std::unique_ptr<Module>> EndModule(const HloRewriteEnv& env);

// Resets `env` on `benchmark` with `seed` and lets `agent` act until the
// episode ends. `beside_timing`: other episodes may time modules meanwhile
// (Agent::times_modules); this one's steps then go in MachineGate units, so
// that they pause while another times.
absl::StatusOr<EpisodeResult> RunEpisode(Agent& agent, HloRewriteEnv& env, int64_t benchmark,
                                         uint64_t seed, const EpisodeLimits& limits = {},
                                         bool beside_timing = false);

struct EpisodeTask {
  int64_t benchmark;
  uint64_t seed;       // for the env and for the episode's agent
  size_t agent = 0;    // index into RunEpisodes' agent specs
};

// Runs every task, up to `parallelism` at a time (0: all cores), each with
// its own agent MakeAgent(agent_specs[task.agent], task.seed, context) on its
// own fork of `prototype`. The agents' episodes run side by side, longest
// first (by the benchmark's size and Agent::relative_work): run one agent
// after another, a long episode left the other cores idle while it ended
// (the main job's greedy and xla ran at 1.1-1.2 cores of 2). `on_done` (may
// be empty) is called once per finished episode, never concurrently, also
// for failed episodes. Results are in task order and do not depend on the
// order episodes ran in; an episode that fails has its `error` set and the
// others still run; only a bad agent spec or task fails the whole call.
absl::StatusOr<std::vector<EpisodeResult>> RunEpisodes(
    const HloRewriteEnv& prototype, const std::vector<std::string>& agent_specs,
    const std::vector<EpisodeTask>& tasks, int parallelism,
    const std::function<void(const EpisodeResult&)>& on_done, const EpisodeLimits& limits = {},
    const AgentContext& context = {});

// The same with one agent for every task.
inline absl::StatusOr<std::vector<EpisodeResult>> RunEpisodes(
    const HloRewriteEnv& prototype, const std::string& agent_spec,
    const std::vector<EpisodeTask>& tasks, int parallelism,
    const std::function<void(const EpisodeResult&)>& on_done, const EpisodeLimits& limits = {},
    const AgentContext& context = {}) {
  return RunEpisodes(prototype, std::vector<std::string>{agent_spec}, tasks, parallelism,
                     on_done, limits, context);
}

}  // namespace hlogym

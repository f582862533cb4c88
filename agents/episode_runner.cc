#include "agents/episode_runner.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "agents/machine_gate.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/rewrite/decisions.h"
#include "oneapi/tbb/global_control.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/task_arena.h"

namespace hlogym {

absl::StatusOr<EpisodeResult> RunEpisode(Agent& agent, HloRewriteEnv& env, int64_t benchmark,
                                         uint64_t seed, const EpisodeLimits& limits,
                                         bool beside_timing) {
  const MachineGate::Stopwatch clock;
  EpisodeResult result;
  const Agent::MeasuringTime measuring_before = agent.measuring_time();
  auto unit = [&](auto&& work) {
    return beside_timing ? MachineGate::Planning(work) : work();
  };
  // An agent that times modules gates its own planning (units never nest).
  const bool gate_acts = beside_timing && !agent.times_modules(env);
  RETURN_IF_ERROR(unit([&] { return env.Reset(seed, benchmark); }));
  const double start_size = static_cast<double>(env.module().instruction_count());
  // A step (or an agent's lookahead) that would grow the graph past the
  // env's limits fails and leaves the env as it was: the episode stops there
  // and keeps the state it reached, as with the limits below.
  auto stop_at_limit = [&](const absl::Status& s) {
    result.stopped = absl::StrCat("stopped after ", env.info().step, " steps: ", s.message());
  };
  while (!env.info().terminated && !env.info().truncated) {
    absl::StatusOr<std::vector<int64_t>> choices =
        gate_acts ? MachineGate::Planning([&] { return agent.Act(env); }) : agent.Act(env);
    if (!choices.ok() && absl::IsResourceExhausted(choices.status())) {
      stop_at_limit(choices.status());
      break;
    }
    RETURN_IF_ERROR(choices.status());
    if (agent.following_plan()) {
      // On a big module, stepping a search plan again took a fifth of the
      // episode.
      if (std::unique_ptr<HloRewriteEnv> planned = agent.TakePlannedState(env)) {
        RETURN_IF_ERROR(env.TakeStateOf(std::move(*planned)));
        continue;
      }
    }
    if (absl::Status s = unit([&] { return env.Step(*choices).status(); }); !s.ok()) {
      if (!absl::IsResourceExhausted(s)) return s;
      stop_at_limit(s);
      break;
    }
    if (env.info().terminated || env.info().truncated) break;
    if (agent.following_plan()) continue;
    if (limits.max_seconds > 0 && clock.own() > limits.max_seconds) {
      result.stopped = absl::StrCat("stopped after ", env.info().step, " steps: over ",
                                    limits.max_seconds, " s");
      break;
    }
    const double size = static_cast<double>(env.module().instruction_count());
    if (limits.max_growth > 0 && size > limits.max_growth * start_size) {
      result.stopped = absl::StrCat("stopped after ", env.info().step, " steps: the module grew ",
                                    static_cast<int64_t>(size / start_size), "x");
      break;
    }
  }
  const EnvInfo& info = env.info();
  result.benchmark = benchmark;
  result.benchmark_name = info.benchmark_name;
  result.seed = seed;
  result.original_runtime = info.original_runtime;
  result.default_runtime = info.default_runtime;
  result.final_runtime = info.current_runtime;
  result.steps = info.step;
  result.rewrites_applied = info.rewrites_applied;
  result.terminated = info.terminated;
  result.truncated = info.truncated;
  result.fingerprint = info.fingerprint;
  result.choices = env.record().choices;
  // The module the episode's last runtime was taken on.
  ASSIGN_OR_RETURN(result.final_module, EndModule(env));
  result.seconds = clock.wall();
  result.paused_seconds = clock.paused();
  result.measure_seconds = agent.measuring_time().seconds - measuring_before.seconds;
  result.measure_compile_seconds =
      agent.measuring_time().compile_seconds - measuring_before.compile_seconds;
  return result;
}

absl::StatusOr<std::unique_ptr<Module>> EndModule(const HloRewriteEnv& env) {
  return CloneWithChoices(env.module(), std::vector<int64_t>(env.choice_counts().size(), 0));
}

absl::StatusOr<std::vector<EpisodeResult>> RunEpisodes(
    const HloRewriteEnv& prototype, const std::vector<std::string>& agent_specs,
    const std::vector<EpisodeTask>& tasks, int parallelism,
    const std::function<void(const EpisodeResult&)>& on_done, const EpisodeLimits& limits,
    const AgentContext& context) {
  // Bad specs and tasks fail before any episode starts.
  std::vector<std::unique_ptr<Agent>> probes;
  for (const std::string& spec : agent_specs) {
    ASSIGN_OR_RETURN(probes.emplace_back(), MakeAgent(spec, 0, context));
  }
  for (const EpisodeTask& task : tasks) {
    if (task.benchmark < 0 || task.benchmark >= prototype.benchmarks().size()) {
      return absl::OutOfRangeError(absl::StrCat("benchmark index ", task.benchmark,
                                                " is out of range [0, ",
                                                prototype.benchmarks().size(), ")"));
    }
    if (task.agent >= agent_specs.size()) {
      return absl::OutOfRangeError(absl::StrCat("agent index ", task.agent,
                                                " is out of range [0, ", agent_specs.size(),
                                                ")"));
    }
  }
  const bool any_times = std::any_of(probes.begin(), probes.end(), [&](const auto& probe) {
    return probe->times_modules(prototype);
  });
  const int cores = tbb::info::default_concurrency();
  const int threads = std::max(1, parallelism <= 0 ? cores : std::min(parallelism, cores));
  // An agent that times modules does it in an arena of all cores while the
  // episodes beside it wait (Agent::times_modules); that arena's workers
  // come on top of the ones the waiting episodes hold.
  std::optional<tbb::global_control> timing_workers;
  if (any_times) {
    timing_workers.emplace(tbb::global_control::max_allowed_parallelism, cores + threads);
  }
  // Longest first: the benchmark's size (before the pre-passes) times the
  // agent's relative work; ties in task order.
  std::vector<double> work(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    work[i] = static_cast<double>(prototype.benchmarks().source(tasks[i].benchmark)
                                      .instruction_count()) *
              probes[tasks[i].agent]->relative_work();
  }
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return work[a] > work[b]; });

  std::vector<EpisodeResult> results(tasks.size());
  std::mutex done_mutex;
  auto run = [&](size_t i) {
    const EpisodeTask& task = tasks[i];
    absl::StatusOr<EpisodeResult> result = [&]() -> absl::StatusOr<EpisodeResult> {
      ASSIGN_OR_RETURN(std::unique_ptr<Agent> agent,
                       MakeAgent(agent_specs[task.agent], task.seed, context));
      std::unique_ptr<HloRewriteEnv> env = prototype.Fork();
      return RunEpisode(*agent, *env, task.benchmark, task.seed, limits, any_times);
    }();
    if (result.ok()) {
      results[i] = *std::move(result);
    } else {
      results[i].benchmark = task.benchmark;
      results[i].benchmark_name = prototype.benchmarks().name(task.benchmark);
      results[i].seed = task.seed;
      results[i].error = std::string(result.status().message());
    }
    if (on_done) {
      std::lock_guard<std::mutex> lock(done_mutex);
      on_done(results[i]);
    }
  };
  // One loop per thread, each taking the next task in `order` when it is
  // free (a parallel_for would split the order into ranges). An episode is
  // isolated: a thread waiting inside it (greedy's parallel lookahead) must
  // not take up another thread's loop, which would hold the episode until
  // the whole queue ran.
  std::atomic<size_t> next{0};
  tbb::task_arena arena(threads);
  arena.execute([&] {
    ParallelForEach(0, threads, [&](int64_t) {
      for (size_t k = next++; k < order.size(); k = next++) {
        tbb::this_task_arena::isolate([&] { run(order[k]); });
      }
    });
  });
  return results;
}

}  // namespace hlogym

// Python bindings of the built-in agents: the registry (make_agent,
// agent_names), acting on a pool, and whole episodes run by C++ in parallel.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "agents/agent.h"
#include "agents/episode_measurement.h"
#include "agents/episode_runner.h"
#include "agents/pool_actor.h"
#include "agents/random_agent.h"
#include "core/base/status_macros.h"
#include "envs/env_pool.h"
#include "envs/runtime_source.h"
#include "python/src/bindings.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {
namespace {

py::dict ResultDict(const EpisodeResult& r) {
  py::dict d;
  d["benchmark"] = r.benchmark;
  d["benchmark_name"] = r.benchmark_name;
  d["seed"] = r.seed;
  d["original_runtime"] = r.original_runtime;
  d["default_runtime"] = r.default_runtime;
  d["final_runtime"] = r.final_runtime;
  d["steps"] = r.steps;
  d["rewrites_applied"] = r.rewrites_applied;
  d["terminated"] = r.terminated;
  d["truncated"] = r.truncated;
  d["fingerprint"] = r.fingerprint;
  d["choices"] = r.choices;
  d["seconds"] = r.seconds;
  d["paused_seconds"] = r.paused_seconds;
  d["measure_seconds"] = r.measure_seconds;
  d["measure_compile_seconds"] = r.measure_compile_seconds;
  d["stopped"] = r.stopped.empty() ? py::object(py::none()) : py::object(py::str(r.stopped));
  d["error"] = r.error.empty() ? py::object(py::none()) : py::object(py::str(r.error));
  if (!r.measured_on.empty()) {
    d["measured_on"] = r.measured_on;
    d["measured_modules"] = r.measured_modules;
    d["measured_runs"] = r.measured_runs;
    py::dict planned;
    planned["original_runtime"] = r.planned.original_runtime;
    planned["default_runtime"] = r.planned.default_runtime;
    planned["final_runtime"] = r.planned.final_runtime;
    d["planned"] = planned;
  }
  return d;
}

// One runtime source per spec for the whole process, so that the kernels and
// measurements it caches serve every later call.
std::shared_ptr<RuntimeSource> SharedRuntimeSource(const std::string& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<RuntimeSource>>* sources =
      new std::map<std::string, std::shared_ptr<RuntimeSource>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sources->find(spec);
  if (it == sources->end()) it = sources->emplace(spec, Unwrap(MakeRuntimeSource(spec))).first;
  return it->second;
}

// Episodes whose table timing waits for other agents' episodes on the same
// benchmarks, so that a row's modules are timed together (MeasureEpisodes).
// Holds their final modules, and the benchmark set through an env fork.
struct HeldEpisodes {
  std::shared_ptr<const HloRewriteEnv> prototype;  // shared by one call's agents
  std::vector<EpisodeResult> results;
};

py::list ResultList(const std::vector<EpisodeResult>& results) {
  py::list out;
  for (const EpisodeResult& r : results) out.append(ResultDict(r));
  return out;
}

// Times the rows of every batch's episodes on `measure_on` (see
// MeasureEpisodes), or where it is empty on the env's own source (its
// compiled kernels serve again); the batches must come from one env's
// benchmarks.
void MeasureHeld(const std::vector<HeldEpisodes*>& batches, const std::string& measure_on) {
  if (batches.empty()) return;
  const BenchmarkSet& benchmarks = batches[0]->prototype->benchmarks();
  std::vector<EpisodeResult*> results;
  for (HeldEpisodes* batch : batches) {
    if (&batch->prototype->benchmarks() != &benchmarks) {
      ThrowStatus(absl::InvalidArgumentError(
          "measure_episodes: the batches' episodes ran on different envs' benchmarks"));
    }
    for (EpisodeResult& r : batch->results) results.push_back(&r);
  }
  RuntimeSource& source =
      measure_on.empty() ? benchmarks.runtime() : *SharedRuntimeSource(measure_on);
  Check(MeasureEpisodes(benchmarks, source, results));
}

py::array_t<int64_t> ToArray(std::vector<int64_t> values, std::vector<py::ssize_t> shape) {
  py::array_t<int64_t> array(shape);
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

}  // namespace

void RegisterAgents(py::module_& m) {
  py::class_<RandomAgent>(m, "RandomAgent", "Uniform choices from a seeded generator.")
      .def(py::init<uint64_t>(), py::arg("seed") = 0)
      .def(
          "choose",
          [](RandomAgent& agent, const std::vector<int64_t>& num_choices) {
            absl::StatusOr<std::vector<int64_t>> choices = agent.Choose(num_choices);
            if (!choices.ok()) ThrowStatus(choices.status());
            return *choices;
          },
          py::arg("num_choices"), "One uniform choice in [0, n) per alternative.");

  m.def("agent_names", &AgentNames, "The names of the built-in agents.");

  py::class_<PoolActor>(m, "PoolActor", R"doc(
A built-in agent for every env of an EnvPool (one agent per env, agent i
seeded with seed + i). Most users want hlogym.make_agent().)doc")
      .def(py::init([](const std::string& spec, uint64_t seed) {
             return Unwrap(PoolActor::Create(spec, seed));
           }),
           py::arg("spec"), py::arg("seed") = 0)
      .def_property_readonly("spec", &PoolActor::spec)
      .def_property_readonly("seed", &PoolActor::seed)
      .def(
          "act_pool",
          [](PoolActor& actor, const EnvPool& pool) {
            std::vector<int64_t> actions;
            {
              py::gil_scoped_release release;
              actions = Unwrap(actor.ActPool(pool));
            }
            return ToArray(std::move(actions),
                           {pool.num_envs(), pool.spec().limits.max_alternatives});
          },
          py::arg("pool"), "Actions [num_envs, max_alternatives] for every env of the pool.")
      .def(
          "act_env",
          [](PoolActor& actor, const EnvPool& pool, int64_t env_id) {
            std::vector<int64_t> choices;
            const int64_t width = pool.spec().limits.max_alternatives;
            {
              py::gil_scoped_release release;
              const int64_t ids[] = {env_id};
              Check(pool.ReadEnvs(ids, [&](absl::Span<const HloRewriteEnv* const> envs) {
                ASSIGN_OR_RETURN(choices, actor.Act(*envs[0], env_id));
                return absl::OkStatus();
              }));
            }
            choices.resize(width, 0);
            return ToArray(std::move(choices), {width});
          },
          py::arg("pool"), py::arg("env_id"),
          "Actions [max_alternatives] for one env of the pool (by its own agent).");

  py::class_<HeldEpisodes, std::shared_ptr<HeldEpisodes>>(m, "HeldEpisodes", R"doc(
Episodes of run_episodes(..., hold=True): their results, and their final
modules kept for measure_episodes, which times them with other agents'.)doc")
      .def("results", [](const HeldEpisodes& held) { return ResultList(held.results); },
           "One dict per task, in task order (measured once measure_episodes ran).")
      .def("__len__", [](const HeldEpisodes& held) { return held.results.size(); });

  m.def(
      "measure_episodes",
      [](const std::vector<std::shared_ptr<HeldEpisodes>>& batches,
         const std::string& measure_on) {
        std::vector<HeldEpisodes*> pointers;
        for (const std::shared_ptr<HeldEpisodes>& batch : batches) pointers.push_back(batch.get());
        {
          py::gil_scoped_release release;
          MeasureHeld(pointers, measure_on);
        }
        py::list out;
        for (const HeldEpisodes* batch : pointers) out.append(ResultList(batch->results));
        return out;
      },
      py::arg("batches"), py::arg("measure_on") = "",
      R"doc(
Times the episodes of several run_episodes(..., hold=True) calls on the
same env (one per agent, say) on `measure_on` (empty: the env's own runtime
source, for tables of episodes measured there), a table row at a time: each
benchmark's original, default-pipeline and final modules of every batch,
distinct by fingerprint, are timed together, interleaved in rounds, so that
a row's columns share the moment they were timed and equal modules get the
identical runtime ('measured_modules' and 'measured_runs' per episode). The
runtimes the episodes saw move to 'planned'. Returns each batch's results.)doc");

  m.def(
      "run_episodes",
      [](const EnvPool& pool, const std::vector<std::string>& agents,
         const std::vector<std::tuple<int64_t, uint64_t, size_t>>& tasks, int parallelism,
         std::function<void(py::dict)> on_done, double max_seconds, double max_growth,
         const std::string& measure_on, bool hold) -> py::list {
        std::vector<EpisodeTask> episode_tasks;
        for (const auto& [benchmark, seed, agent] : tasks) {
          episode_tasks.push_back({benchmark, seed, agent});
        }
        std::function<void(const EpisodeResult&)> callback;
        if (on_done) {
          callback = [&on_done](const EpisodeResult& result) {
            py::gil_scoped_acquire acquire;
            try {
              on_done(ResultDict(result));
            } catch (py::error_already_set& e) {
              e.discard_as_unraisable("hlogym.run_episodes progress callback");
            }
          };
        }
        // One batch per agent, its tasks' results in task order.
        std::vector<std::shared_ptr<HeldEpisodes>> batches;
        {
          py::gil_scoped_release release;
          std::shared_ptr<const HloRewriteEnv> prototype = Unwrap(pool.ForkEnv(0));
          // Made before the episodes: a source that cannot be had here fails
          // the call at once.
          std::shared_ptr<RuntimeSource> measure =
              measure_on.empty() ? nullptr : SharedRuntimeSource(measure_on);
          // Agents with a measurement budget time their candidates on the
          // same source (its kernels and inputs serve both).
          std::vector<EpisodeResult> results = Unwrap(
              RunEpisodes(*prototype, agents, episode_tasks, parallelism, callback,
                          EpisodeLimits{max_seconds, max_growth}, AgentContext{measure}));
          for (size_t a = 0; a < agents.size(); ++a) {
            batches.push_back(std::make_shared<HeldEpisodes>(HeldEpisodes{prototype, {}}));
          }
          for (size_t i = 0; i < results.size(); ++i) {
            batches[episode_tasks[i].agent]->results.push_back(std::move(results[i]));
          }
          if (measure != nullptr && !hold) {
            std::vector<HeldEpisodes*> pointers;
            for (const auto& batch : batches) pointers.push_back(batch.get());
            MeasureHeld(pointers, measure_on);
          }
        }
        py::list out;
        for (const auto& batch : batches) {
          out.append(hold ? py::cast(batch) : py::object(ResultList(batch->results)));
        }
        return out;
      },
      py::arg("pool"), py::arg("agents"), py::arg("tasks"), py::arg("parallelism") = 0,
      py::arg("on_done") = nullptr, py::arg("max_seconds") = 0.0, py::arg("max_growth") = 0.0,
      py::arg("measure_on") = "", py::arg("hold") = false,
      R"doc(
Runs whole episodes of built-in agents on forks of the pool's env 0: one per
(benchmark index, seed, agent index) task, agent an index into `agents`
(specs), up to `parallelism` at a time, longest first, each with a fresh
agent seeded with the task's seed. `on_done(result)` is called as each ends.
Returns one list per agent of its tasks' dicts, in task order; a failed
episode has 'error' set. max_seconds and max_growth (instructions relative to
the start) stop runaway episodes between steps, keeping the state reached
('stopped' says why); 0: no limit. measure_on (a runtime source: 'cpu',
'gpu', 'cost:cpu', ...) times each episode's original, default-pipeline and
final modules there after all episodes ended, a benchmark's modules together
(see measure_episodes); the runtimes the episodes saw move to 'planned', and
'measured_on' names the source. Agents with a measurement budget
(search(measure=k)) time their candidate end states there too, while the
other episodes pause. hold=True gives a HeldEpisodes per agent instead and
leaves the timing to measure_episodes, with other calls' episodes.)doc");

  m.def(
      "runtime_source_error",
      [](const std::string& spec) -> py::object {
        absl::StatusOr<std::shared_ptr<RuntimeSource>> source;
        {
          py::gil_scoped_release release;
          source = MakeRuntimeSource(spec);
        }
        if (source.ok()) return py::none();
        return py::str(std::string(source.status().message()));
      },
      py::arg("spec"),
      "None if the runtime source `spec` (cost, cpu, gpu, ...) can be made here, else why not.");
}

}  // namespace hlogym

// Python bindings of the environment pool. Batch arrays reach numpy without a
// copy: each array's base is a capsule that keeps the C++ buffer alive. The
// GIL is released while C++ works.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "envs/dataset.h"
#include "envs/env_config.h"
#include "envs/env_pool.h"
#include "python/src/bindings.h"
#include "python/src/shared_reads.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {
namespace {

py::dtype NumpyType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return py::dtype::of<float>();
    case DType::kFloat64: return py::dtype::of<double>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kUInt8: return py::dtype::of<uint8_t>();
    case DType::kBool: return py::dtype("bool");
    case DType::kUInt64: return py::dtype::of<uint64_t>();
  }
  return py::dtype::of<uint8_t>();
}

// A numpy view of a batch array; the capsule owns a reference to its memory.
py::array ToNumpy(const BatchArray& array) {
  auto* owner = new std::shared_ptr<uint8_t>(array.data);
  py::capsule capsule(owner, [](void* p) { delete static_cast<std::shared_ptr<uint8_t>*>(p); });
  return py::array(NumpyType(array.dtype), array.shape, array.data.get(), capsule);
}

py::dict ToDict(const Batch& batch) {
  py::dict out;
  for (const BatchArray& array : batch.arrays()) out[array.name.c_str()] = ToNumpy(array);
  out["errors"] = batch.errors();
  return out;
}

py::dict InfoDict(const EnvInfo& info) {
  py::dict d;
  d["benchmark"] = info.benchmark;
  d["benchmark_name"] = info.benchmark_name;
  d["step"] = info.step;
  d["original_runtime"] = info.original_runtime;
  d["default_runtime"] = info.default_runtime;
  d["current_runtime"] = info.current_runtime;
  d["fingerprint"] = info.fingerprint;
  d["num_alternatives"] = info.num_alternatives;
  d["rewrites_applied"] = info.rewrites_applied;
  d["dry_pass"] = info.dry_pass;
  d["terminated"] = info.terminated;
  d["truncated"] = info.truncated;
  return d;
}

// Row 0 of a one-row batch array, without the batch axis (same memory).
py::array RowToNumpy(const BatchArray& array) {
  auto* owner = new std::shared_ptr<uint8_t>(array.data);
  py::capsule capsule(owner, [](void* p) { delete static_cast<std::shared_ptr<uint8_t>*>(p); });
  std::vector<int64_t> shape(array.shape.begin() + 1, array.shape.end());
  return py::array(NumpyType(array.dtype), shape, array.data.get(), capsule);
}

py::dict RecordDict(const EpisodeRecord& record) {
  py::dict d;
  d["benchmark"] = record.benchmark;
  d["choices"] = record.choices;
  d["rewards"] = record.rewards;
  return d;
}

// One environment's observation in fresh buffers (the observation arrays of
// a one-row batch).
py::dict ObserveEnv(const HloRewriteEnv& env) {
  auto batch = std::make_shared<Batch>(1, env.spec().limits);
  {
    SharedRead read(&env);
    py::gil_scoped_release release;
    Unwrap(env.Observe(batch->Observation(0), batch->extent(0)));
  }
  py::dict out;
  for (int field = 0; field <= kAltMaskField; ++field) {
    const BatchArray& array = batch->arrays()[field];
    out[array.name.c_str()] = RowToNumpy(array);
  }
  return out;
}

using ActionArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

void RegisterRewriteEnv(py::module_& m) {
  py::class_<HloRewriteEnv>(m, "RewriteEnv", R"doc(
One HLO rewrite environment outside any pool, as EnvPool.fork(env_id) returns
it: it starts where the pool's environment stood (same module, step, record
and random generator) and goes on independently. step() takes one choice per
offered alternatives node (FindAlternatives order, 0 keeps the original).)doc")
      .def(
          "step",
          [](HloRewriteEnv& env, ActionArray choices) {
            // Keeps the GIL: no other Python code runs while the env changes
            // (python/src/shared_reads.h).
            CheckNotBeingRead(&env, "RewriteEnv");
            return Unwrap(env.Step(absl::MakeConstSpan(choices.data(), choices.size())));
          },
          py::arg("choices"),
          "Applies the choices and advances; returns the reward. On error nothing changes.")
      .def(
          "reset",
          [](HloRewriteEnv& env, std::optional<uint64_t> seed, std::optional<int64_t> benchmark) {
            CheckNotBeingRead(&env, "RewriteEnv");
            Check(env.Reset(seed, benchmark));
          },
          py::arg("seed") = py::none(), py::arg("benchmark") = py::none(),
          "Starts an episode on `benchmark` (an index) or on a drawn one.")
      .def("observe", &ObserveEnv, "The current graph as a dict of arrays (no batch axis).")
      .def("info", [](const HloRewriteEnv& env) { return InfoDict(env.info()); })
      .def("record", [](const HloRewriteEnv& env) { return RecordDict(env.record()); })
      .def(
          "module",
          [](const HloRewriteEnv& env) {
            if (!env.in_episode()) Check(absl::FailedPreconditionError("the env has not been reset"));
            return std::shared_ptr<Module>(env.module().Clone());
          },
          "A copy of the current module.")
      .def_property_readonly("choice_counts", &HloRewriteEnv::choice_counts,
                             "Choices at each offered alternatives node.")
      .def("fork", [](const HloRewriteEnv& env) { return env.Fork(); },
           "An independent copy in the same state.");
}

}  // namespace

void RegisterEnvs(py::module_& m) {
  RegisterRewriteEnv(m);
  m.def(
      "load_env_config",
      [](const std::string& path) {
        EnvConfig c = Unwrap(LoadEnvConfig(path));
        py::dict d;
        d["id"] = c.id;
        d["pre_passes"] = c.pre_passes;
        d["dry_passes"] = c.dry_passes;
        d["dry_stages"] = c.dry_stages;
        d["post_passes"] = c.post_passes;
        d["max_steps"] = c.max_steps;
        d["max_nodes"] = c.max_nodes;
        d["max_edges"] = c.max_edges;
        d["max_alternatives"] = c.max_alternatives;
        d["max_choices"] = c.max_choices;
        d["observe_candidate_bodies"] = c.observe_candidate_bodies;
        d["reward"] = c.reward;
        d["dataset"] = c.dataset;
        return d;
      },
      py::arg("path"), "Reads and validates an env config YAML file into a dict.");
  m.def(
      "dataset_files",
      [](const std::string& directory, const std::string& split) {
        return Unwrap(DatasetFiles(directory, Unwrap(DatasetSplitFromName(split))));
      },
      py::arg("directory"), py::arg("split") = "all",
      "The .hlo files of a dataset directory in a split (all, train or test).");

  py::class_<EnvPool>(m, "EnvPool", R"doc(
The C++ environment pool under hlogym's Gymnasium vector environment. Most
users want hlogym.make(); this class is the raw, dict-of-arrays interface.)doc")
      .def(py::init([](const std::string& id, const std::vector<std::string>& files,
                       const std::vector<std::string>& pre_passes,
                       const std::vector<std::string>& dry_passes,
                       const std::vector<std::string>& post_passes, int64_t max_steps,
                       int64_t max_nodes, int64_t max_edges, int64_t max_alternatives,
                       int64_t max_choices, const std::string& reward, int64_t num_envs,
                       int64_t batch_size, int num_threads, uint64_t seed,
                       const std::vector<std::vector<std::string>>& dry_stages,
                       bool observe_candidate_bodies) {
             py::gil_scoped_release release;
             std::shared_ptr<RuntimeSource> runtime = Unwrap(MakeRuntimeSource(reward));
             std::shared_ptr<BenchmarkSet> benchmarks =
                 Unwrap(BenchmarkSet::Load(files, pre_passes, runtime));
             EnvSpec spec;
             spec.id = id;
             spec.dry_passes = dry_passes;
             spec.dry_stages = dry_stages;
             spec.post_passes = post_passes;
             spec.max_steps = max_steps;
             spec.limits = {max_nodes, max_edges, max_alternatives, max_choices};
             spec.node_scope = observe_candidate_bodies ? NodeScope::kAll
                                                        : NodeScope::kWithoutCandidateBodies;
             PoolOptions options{num_envs, batch_size, num_threads, seed};
             return Unwrap(EnvPool::Create(spec, benchmarks, options));
           }),
           py::arg("id"), py::arg("files"), py::arg("pre_passes"), py::arg("dry_passes"),
           py::arg("post_passes"), py::arg("max_steps"), py::arg("max_nodes"),
           py::arg("max_edges"), py::arg("max_alternatives"), py::arg("max_choices"),
           py::arg("reward"), py::arg("num_envs"), py::arg("batch_size") = 0,
           py::arg("num_threads") = 0, py::arg("seed") = 0,
           py::arg("dry_stages") = std::vector<std::vector<std::string>>(),
           py::arg("observe_candidate_bodies") = true)
      .def_property_readonly("num_envs", &EnvPool::num_envs)
      .def_property_readonly("batch_size", &EnvPool::batch_size)
      .def_property_readonly("num_threads", &EnvPool::num_threads)
      .def_property_readonly("benchmark_names",
                             [](const EnvPool& pool) {
                               std::vector<std::string> names;
                               for (int64_t i = 0; i < pool.benchmarks().size(); ++i) {
                                 names.push_back(pool.benchmarks().name(i));
                               }
                               return names;
                             })
      .def(
          "prepare",
          [](const EnvPool& pool) {
            py::gil_scoped_release release;
            for (int64_t i = 0; i < pool.benchmarks().size(); ++i) {
              Unwrap(pool.benchmarks().Prepared(i));
            }
          },
          "Prepares every benchmark now (pre-passes, original and default runtimes) "
          "instead of at its first draw.")
      .def(
          "reset",
          [](EnvPool& pool, std::optional<uint64_t> seed, std::vector<bool> mask) {
            std::shared_ptr<Batch> batch;
            {
              py::gil_scoped_release release;
              batch = Unwrap(pool.Reset(seed, mask));
            }
            return ToDict(*batch);
          },
          py::arg("seed") = py::none(), py::arg("mask") = std::vector<bool>())
      .def(
          "step",
          [](EnvPool& pool, ActionArray actions) {
            std::shared_ptr<Batch> batch;
            {
              py::gil_scoped_release release;
              batch = Unwrap(pool.Step(absl::MakeConstSpan(actions.data(), actions.size())));
            }
            return ToDict(*batch);
          },
          py::arg("actions"))
      .def(
          "send",
          [](EnvPool& pool, ActionArray actions,
             py::array_t<int32_t, py::array::c_style | py::array::forcecast> env_ids) {
            py::gil_scoped_release release;
            Check(pool.Send(absl::MakeConstSpan(actions.data(), actions.size()),
                            absl::MakeConstSpan(env_ids.data(), env_ids.size())));
          },
          py::arg("actions"), py::arg("env_ids"))
      .def("async_reset",
           [](EnvPool& pool) {
             py::gil_scoped_release release;
             Check(pool.AsyncReset());
           })
      .def("recv",
           [](EnvPool& pool) {
             std::shared_ptr<Batch> batch;
             {
               py::gil_scoped_release release;
               batch = Unwrap(pool.Recv());
             }
             return ToDict(*batch);
           })
      .def(
          "module",
          [](const EnvPool& pool, int64_t env_id) {
            // Without the GIL: the call waits for a step on another thread.
            py::gil_scoped_release release;
            return std::shared_ptr<Module>(Unwrap(pool.ModuleCopy(env_id)));
          },
          py::arg("env_id"), "A copy of the environment's current module.")
      .def(
          "info", [](const EnvPool& pool, int64_t env_id) {
            absl::StatusOr<EnvInfo> info;
            {
              py::gil_scoped_release release;
              info = pool.Info(env_id);
            }
            return InfoDict(Unwrap(std::move(info)));
          },
          py::arg("env_id"))
      .def(
          "record",
          [](const EnvPool& pool, int64_t env_id) {
            absl::StatusOr<EpisodeRecord> record;
            {
              py::gil_scoped_release release;
              record = pool.Record(env_id);
            }
            return RecordDict(Unwrap(std::move(record)));
          },
          py::arg("env_id"), "The episode so far: its benchmark, choices and rewards.")
      .def(
          "fork",
          [](const EnvPool& pool, int64_t env_id) {
            py::gil_scoped_release release;
            return Unwrap(pool.ForkEnv(env_id));
          },
          py::arg("env_id"),
          "A RewriteEnv continuing independently from where environment env_id stands.");
}

}  // namespace hlogym

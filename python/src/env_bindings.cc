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

using ActionArray = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

}  // namespace

void RegisterEnvs(py::module_& m) {
  m.def(
      "load_env_config",
      [](const std::string& path) {
        EnvConfig c = Unwrap(LoadEnvConfig(path));
        py::dict d;
        d["id"] = c.id;
        d["pre_passes"] = c.pre_passes;
        d["dry_passes"] = c.dry_passes;
        d["post_passes"] = c.post_passes;
        d["max_steps"] = c.max_steps;
        d["max_nodes"] = c.max_nodes;
        d["max_edges"] = c.max_edges;
        d["max_alternatives"] = c.max_alternatives;
        d["max_choices"] = c.max_choices;
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
                       int64_t batch_size, int num_threads, uint64_t seed) {
             py::gil_scoped_release release;
             std::shared_ptr<RuntimeSource> runtime = Unwrap(MakeRuntimeSource(reward));
             std::shared_ptr<BenchmarkSet> benchmarks =
                 Unwrap(BenchmarkSet::Load(files, pre_passes, runtime));
             EnvSpec spec;
             spec.id = id;
             spec.dry_passes = dry_passes;
             spec.post_passes = post_passes;
             spec.max_steps = max_steps;
             spec.limits = {max_nodes, max_edges, max_alternatives, max_choices};
             PoolOptions options{num_envs, batch_size, num_threads, seed};
             return Unwrap(EnvPool::Create(spec, benchmarks, options));
           }),
           py::arg("id"), py::arg("files"), py::arg("pre_passes"), py::arg("dry_passes"),
           py::arg("post_passes"), py::arg("max_steps"), py::arg("max_nodes"),
           py::arg("max_edges"), py::arg("max_alternatives"), py::arg("max_choices"),
           py::arg("reward"), py::arg("num_envs"), py::arg("batch_size") = 0,
           py::arg("num_threads") = 0, py::arg("seed") = 0)
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
            return std::shared_ptr<Module>(Unwrap(pool.ModuleCopy(env_id)));
          },
          py::arg("env_id"), "A copy of the environment's current module.")
      .def(
          "info", [](const EnvPool& pool, int64_t env_id) {
            return InfoDict(Unwrap(pool.Info(env_id)));
          },
          py::arg("env_id"))
      .def(
          "record",
          [](const EnvPool& pool, int64_t env_id) {
            EpisodeRecord record = Unwrap(pool.Record(env_id));
            py::dict d;
            d["benchmark"] = record.benchmark;
            d["choices"] = record.choices;
            d["rewards"] = record.rewards;
            return d;
          },
          py::arg("env_id"), "The episode so far: its benchmark, choices and rewards.");
}

}  // namespace hlogym

// Python bindings of the backend: the analytical cost model, compiled
// executables on the CPU and GPU targets (hlogym.compile), and PTX.
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backend/cost_calibration.h"
#include "backend/cost_model.h"
#include "backend/cpu_runtime.h"
#include "backend/nvptx_compiler.h"
#include "core/eval/formula_inputs.h"
#include "python/src/bindings.h"
#include "python/src/numpy_literals.h"
#include "python/src/shared_reads.h"
#include "python/src/status.h"
#ifdef HLOGYM_HAVE_CUDA
#include "backend/gpu_runtime.h"
#endif

namespace py = pybind11;

namespace hlogym {
namespace {

// A module compiled for one target, with a copy of the module (executables
// refer to it) and the runtime whose caches its kernels live in.
class Compiled {
 public:
  virtual ~Compiled() = default;
  virtual absl::StatusOr<std::vector<Literal>> Run(const std::vector<Literal>& arguments) = 0;
  virtual absl::StatusOr<Measurement> Measure() = 0;
  // Each step's median time (CpuExecutable::Profile).
  virtual absl::StatusOr<std::vector<CpuExecutable::StepTime>> Profile(
      const std::vector<Literal>& arguments, int runs) = 0;
  virtual py::dict Stats() const = 0;
  const Module& module() const { return *module_; }
  // Held by each run, measurement or profile, which Python threads may ask
  // for at once: the executable's arena holds one run's temporaries.
  std::mutex& runs() { return runs_; }

 protected:
  std::unique_ptr<Module> module_;

 private:
  std::mutex runs_;
};

// The runtime each target's executables share (kernel caches, inputs),
// made on first use.
template <typename Runtime>
Runtime& SharedRuntime() {
  static Runtime* runtime = [] {
    absl::StatusOr<std::unique_ptr<Runtime>> r = Runtime::Create();
    if (!r.ok()) ThrowStatus(r.status());
    return r->release();
  }();
  return *runtime;
}

// A cost-model device as Python sees it: its name ("cpu", "h100") or a dict
// of its fields (what device_spec() and calibrate() return).
py::dict DeviceDict(const DeviceSpec& d) {
  py::dict out;
  out["name"] = d.name;
  out["bandwidth_bytes_per_s"] = d.bandwidth_bytes_per_s;
  out["peak_flops_per_s"] = d.peak_flops_per_s;
  out["launch_seconds"] = d.launch_seconds;
  out["transcendental_flops"] = d.transcendental_flops;
  out["cache_bytes"] = d.cache_bytes;
  out["cache_bandwidth_bytes_per_s"] = d.cache_bandwidth_bytes_per_s;
  return out;
}

DeviceSpec DeviceFrom(const py::object& device) {
  if (py::isinstance<py::str>(device)) {
    absl::StatusOr<DeviceSpec> spec = DeviceByName(device.cast<std::string>());
    if (!spec.ok()) ThrowStatus(spec.status());
    return *spec;
  }
  if (!py::isinstance<py::dict>(device)) {
    throw py::type_error("device must be 'cpu', 'h100' or a dict from hlogym.device_spec() "
                         "or hlogym.calibrate()");
  }
  const py::dict d = device.cast<py::dict>();
  DeviceSpec spec;
  spec.name = d.contains("name") ? py::str(d["name"]).cast<std::string>() : "custom";
  auto field = [&](const char* key, double& out, bool positive) {
    if (!d.contains(key)) {
      throw py::value_error(absl::StrCat("device dict lacks '", key,
                                         "' (start from hlogym.device_spec('cpu'))"));
    }
    out = py::float_(d[key]).cast<double>();
    if (!std::isfinite(out) || out < 0 || (positive && out == 0)) {
      throw py::value_error(absl::StrCat("device dict: '", key, "' must be ",
                                         positive ? "positive" : "at least 0", ", got ", out));
    }
  };
  field("bandwidth_bytes_per_s", spec.bandwidth_bytes_per_s, true);
  field("peak_flops_per_s", spec.peak_flops_per_s, true);
  field("launch_seconds", spec.launch_seconds, false);
  field("transcendental_flops", spec.transcendental_flops, false);
  field("cache_bytes", spec.cache_bytes, false);
  field("cache_bandwidth_bytes_per_s", spec.cache_bandwidth_bytes_per_s, spec.cache_bytes > 0);
  return spec;
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CompileFor(CpuRuntime& runtime, const Module& m) {
  return CpuExecutable::Compile(m, runtime.compiler());
}

py::dict StatsDict(const CpuExecutableStats& s) {
  py::dict d;
  d["backend"] = "cpu";
  d["kernels"] = s.kernel_count;
  d["llvm_kernels"] = s.jit_kernel_count;
  d["blas_ops"] = s.blas_op_count;
  d["host_ops"] = s.native_host_op_count;  // topk, scatter, scan, sort, select-and-scatter
  d["interpreter_ops"] = s.interpreter_op_count;
  // What still runs on the reference interpreter, here and in called
  // computations, as "opcode `name`" (each allocates inside timed runs).
  d["interpreter_op_names"] = s.interpreter_ops;
  d["arena_bytes"] = s.arena_bytes;
  return d;
}

#ifdef HLOGYM_HAVE_CUDA
absl::StatusOr<std::unique_ptr<GpuExecutable>> CompileFor(GpuRuntime& runtime, const Module& m) {
  return GpuExecutable::Compile(m, runtime.kernels(), runtime.host_compiler());
}

py::dict StatsDict(const GpuExecutableStats& s) {
  py::dict d;
  d["backend"] = "gpu";
  d["kernels"] = s.kernel_count;
  d["gpu_kernels"] = s.total_gpu_kernel_count;
  d["cublas_ops"] = s.cublas_count;
  d["host_ops"] = s.total_host_op_count;
  d["control_flow"] = s.control_flow_count;
  d["first_host_op"] = s.first_host_op;
  d["arena_bytes"] = s.arena_bytes;
  return d;
}
#endif

// A module compiled on `Runtime`'s target (CpuRuntime or GpuRuntime).
template <typename Runtime>
class CompiledOn : public Compiled {
 public:
  static std::unique_ptr<Compiled> Make(const Module& module) {
    auto c = std::make_unique<CompiledOn>();
    c->module_ = module.Clone();
    auto e = CompileFor(SharedRuntime<Runtime>(), *c->module_);
    if (!e.ok()) ThrowStatus(e.status());
    c->executable_ = *std::move(e);
    return c;
  }
  absl::StatusOr<std::vector<Literal>> Run(const std::vector<Literal>& arguments) override {
    return executable_->Run(arguments);
  }
  absl::StatusOr<Measurement> Measure() override {
    auto report = SharedRuntime<Runtime>().MeasureUncached(*module_);
    if (!report.ok()) return report.status();
    return report->measurement;
  }
  absl::StatusOr<std::vector<CpuExecutable::StepTime>> Profile(
      const std::vector<Literal>& arguments, int runs) override {
    if constexpr (std::is_same_v<Runtime, CpuRuntime>) {
      return executable_->Profile(arguments, runs);
    } else {
      return absl::UnimplementedError(
          "not supported: profile() on the GPU target (no per-kernel timing there yet); "
          "measure() times the whole executable");
    }
  }
  py::dict Stats() const override { return StatsDict(executable_->stats()); }

 private:
  // CpuExecutable or GpuExecutable: what CompileFor makes on this runtime.
  using Executable = typename decltype(CompileFor(std::declval<Runtime&>(),
                                                  std::declval<const Module&>()))::value_type::element_type;
  std::unique_ptr<Executable> executable_;
};

}  // namespace

void RegisterBackend(py::module_& m) {
  py::class_<Compiled>(m, "Executable",
                       "A module compiled for the CPU or GPU target (hlogym.compile).")
      .def(
          "run",
          [](Compiled& self, std::optional<py::list> inputs) {
            const std::vector<Literal> arguments = Arguments(self.module(), inputs);
            absl::StatusOr<std::vector<Literal>> leaves;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> one_run(self.runs());
              leaves = self.Run(arguments);
            }
            if (!leaves.ok()) ThrowStatus(leaves.status());
            return Outputs(*leaves);
          },
          py::arg("inputs") = py::none(),
          "Runs on `inputs` (None: the formula inputs); returns the flattened outputs.")
      .def(
          "measure",
          [](Compiled& self) {
            absl::StatusOr<Measurement> m;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> one_run(self.runs());
              m = self.Measure();
            }
            if (!m.ok()) ThrowStatus(m.status());
            py::dict d;
            d["median_s"] = m->median_seconds;
            d["min_s"] = m->min_seconds;
            d["spread"] = m->spread;
            d["runs"] = m->runs;
            d["converged"] = m->converged;
            return d;
          },
          "Times runs on the formula inputs: {median_s, min_s, spread, runs, converged}.")
      .def(
          "profile",
          [](Compiled& self, std::optional<py::list> inputs, int runs, const py::object& device) {
            const std::vector<Literal> arguments = Arguments(self.module(), inputs);
            const DeviceSpec spec = DeviceFrom(device);
            absl::StatusOr<std::vector<CpuExecutable::StepTime>> steps;
            CostEstimate estimate;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> one_run(self.runs());
              steps = self.Profile(arguments, runs);
              if (steps.ok()) estimate = EstimateCost(self.module(), spec);
            }
            if (!steps.ok()) ThrowStatus(steps.status());
            // The model's kernels of the entry computation, by name; called
            // computations' kernels are inside their caller's step.
            absl::flat_hash_map<std::string, const KernelCost*> modeled;
            for (const KernelCost& k : estimate.per_kernel) {
              if (k.kernel->parent() == self.module().entry()) modeled.emplace(k.kernel->name(), &k);
            }
            py::list out;
            for (const CpuExecutable::StepTime& step : *steps) {
              py::dict d;
              d["instruction"] = step.instruction;
              d["kind"] = step.kind;
              d["seconds"] = step.seconds;
              auto it = modeled.find(step.instruction);
              d["estimate_s"] = it == modeled.end() ? py::object(py::none())
                                                    : py::object(py::float_(it->second->seconds));
              d["bytes"] = it == modeled.end() ? py::object(py::none())
                                               : py::object(py::float_(it->second->bytes));
              d["flops"] = it == modeled.end() ? py::object(py::none())
                                               : py::object(py::float_(it->second->flops));
              out.append(std::move(d));
            }
            return out;
          },
          py::arg("inputs") = py::none(), py::arg("runs") = 5, py::arg("device") = "cpu",
          "CPU target: each step of the entry computation (a kernel, a BLAS call, a host op, a "
          "loop) in execution order, as {instruction, kind, seconds (median of `runs` runs after "
          "a warm-up), estimate_s, bytes, flops (the cost model's figures for that kernel on "
          "`device`, None for steps it does not count)}. For finding slow kernels and checking "
          "the cost model kernel by kernel.")
      .def_property_readonly("stats", &Compiled::Stats, "What the executable is made of.");

  m.def(
      "compile",
      [](const Module& module, const std::string& backend) -> std::unique_ptr<Compiled> {
        if (backend == "cpu") return CompiledOn<CpuRuntime>::Make(module);
        if (backend == "gpu") {
#ifdef HLOGYM_HAVE_CUDA
          return CompiledOn<GpuRuntime>::Make(module);
#else
          throw NotSupported("not supported: this hlogym was built without CUDA; use backend='cpu'");
#endif
        }
        throw py::value_error("unknown backend '" + backend + "': use 'cpu' or 'gpu'");
      },
      py::arg("module"), py::arg("backend") = "cpu",
      "Compiles a module for 'cpu' (LLVM ORC JIT) or 'gpu' (NVPTX + cuBLAS).");
  m.def(
      "emit_ptx",
      [](const Module& module) {
        absl::StatusOr<std::string> ptx;
        {
          SharedRead read(&module);
          py::gil_scoped_release release;
          ptx = EmitModulePtx(module);
        }
        if (!ptx.ok()) ThrowStatus(ptx.status());
        return *ptx;
      },
      py::arg("module"),
      "The module's GPU kernels as one PTX module for sm_90 (needs no GPU).");

  m.def(
      "estimate",
      [](const Module& module, const py::object& device) {
        const DeviceSpec spec = DeviceFrom(device);
        CostEstimate estimate;
        {
          SharedRead read(&module);
          py::gil_scoped_release release;
          estimate = EstimateCost(module, spec);
        }
        py::dict out;
        out["seconds"] = estimate.seconds;
        out["kernels"] = estimate.kernels;
        out["bytes"] = estimate.bytes;
        out["flops"] = estimate.flops;
        out["device"] = spec.name;
        return out;
      },
      py::arg("module"), py::arg("device") = "h100",
      "The cost model's runtime estimate of a module on a device ('h100', 'cpu', or a dict "
      "from device_spec() or calibrate()): {seconds, kernels, bytes, flops, device}.");
  m.def(
      "device_spec", [](const std::string& name) { return DeviceDict(DeviceFrom(py::str(name))); },
      py::arg("name"),
      "The cost model's parameters of device 'cpu' or 'h100' as a dict (bandwidths in bytes/s, "
      "peak flops/s, launch seconds, flops per transcendental element, cache bytes): edit it "
      "and pass it to estimate().");
  m.def(
      "calibrate",
      [](const std::vector<const Module*>& modules, int runs) {
        absl::StatusOr<CalibrationResult> result;
        {
          std::deque<SharedRead> reads;
          for (const Module* module : modules) reads.emplace_back(module);
          py::gil_scoped_release release;
          result = CalibrateCpuDevice(modules, SharedRuntime<CpuRuntime>().compiler(), runs);
        }
        if (!result.ok()) ThrowStatus(result.status());
        py::dict out = DeviceDict(result->device);
        out["samples"] = result->samples;
        return out;
      },
      py::arg("modules"), py::arg("runs") = 5,
      "Fits the CPU device's cost model to this machine: each module's kernels are timed "
      "(fastest of `runs` profiled runs) and fitted; returns the device dict for estimate(), "
      "with 'samples', the kernels fitted.");
}

}  // namespace hlogym

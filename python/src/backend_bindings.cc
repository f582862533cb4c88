// Python bindings of the backend: the analytical cost model.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "backend/cost_model.h"
#include "python/src/bindings.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {

void RegisterBackend(py::module_& m) {
  m.def(
      "estimate",
      [](const Module& module, const std::string& device) {
        absl::StatusOr<DeviceSpec> spec = DeviceByName(device);
        if (!spec.ok()) ThrowStatus(spec.status());
        CostEstimate estimate;
        {
          py::gil_scoped_release release;
          estimate = EstimateCost(module, *spec);
        }
        py::dict out;
        out["seconds"] = estimate.seconds;
        out["kernels"] = estimate.kernels;
        out["bytes"] = estimate.bytes;
        out["flops"] = estimate.flops;
        out["device"] = spec->name;
        return out;
      },
      py::arg("module"), py::arg("device") = "h100",
      "The cost model's runtime estimate of a module on 'h100' or 'cpu': "
      "{seconds, kernels, bytes, flops, device}.");
}

}  // namespace hlogym

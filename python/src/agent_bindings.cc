// Python bindings of the built-in agents.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "agents/random_agent.h"
#include "python/src/bindings.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {

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
}

}  // namespace hlogym

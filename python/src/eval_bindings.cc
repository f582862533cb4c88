// Python bindings of the reference interpreter: evaluate, equivalent,
// formula_inputs. Arrays are copied between numpy and Literals.
#include <cstring>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "python/src/bindings.h"
#include "python/src/numpy_literals.h"
#include "python/src/shared_reads.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {

void RegisterEval(py::module_& m) {
  m.def(
      "evaluate",
      [](const Module& module, std::optional<py::list> inputs) {
        const std::vector<Literal> arguments = Arguments(module, inputs);
        absl::StatusOr<std::vector<Literal>> leaves;
        {
          SharedRead read(&module);
          py::gil_scoped_release release;
          leaves = EvaluateFlat(module, arguments);
        }
        if (!leaves.ok()) ThrowStatus(leaves.status());
        return Outputs(*leaves);
      },
      py::arg("module"), py::arg("inputs") = py::none(),
      "Runs the reference interpreter; returns the flattened outputs as numpy arrays. "
      "inputs=None uses the formula inputs.");
  m.def(
      "formula_inputs",
      [](const Module& module) { return Outputs(FormulaInputs(module)); }, py::arg("module"),
      "The deterministic inputs of data/README.md, one array per entry parameter.");
  m.def(
      "equivalent",
      [](const Module& a, const Module& b) {
        absl::StatusOr<EquivalenceReport> report;
        {
          SharedRead read_a(&a), read_b(&b);
          py::gil_scoped_release release;
          report = Equivalent(a, b);
        }
        if (!report.ok()) ThrowStatus(report.status());
        py::dict d;
        d["equivalent"] = report->equivalent;
        d["output_index"] = report->output_index;
        d["element_index"] = report->element_index;
        d["expected"] = report->expected;
        d["actual"] = report->actual;
        d["message"] = report->message;
        return d;
      },
      py::arg("a"), py::arg("b"),
      "Runs both modules on the formula inputs and compares every output; reports the first "
      "mismatch (output, element, both values).");
}

}  // namespace hlogym

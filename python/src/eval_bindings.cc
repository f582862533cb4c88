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
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {
namespace {

// The numpy dtype of an element type with the same storage as Literal's.
py::dtype NumpyDtype(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return py::dtype("bool");
    case PrimitiveType::kS8: return py::dtype("int8");
    case PrimitiveType::kS16: return py::dtype("int16");
    case PrimitiveType::kS32: return py::dtype("int32");
    case PrimitiveType::kS64: return py::dtype("int64");
    case PrimitiveType::kU8: return py::dtype("uint8");
    case PrimitiveType::kU16: return py::dtype("uint16");
    case PrimitiveType::kU32: return py::dtype("uint32");
    case PrimitiveType::kU64: return py::dtype("uint64");
    case PrimitiveType::kF16: return py::dtype("float16");
    case PrimitiveType::kF32: return py::dtype("float32");
    case PrimitiveType::kF64: return py::dtype("float64");
    case PrimitiveType::kC64: return py::dtype("complex64");
    case PrimitiveType::kC128: return py::dtype("complex128");
    case PrimitiveType::kBF16: {
      try {
        return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
      } catch (py::error_already_set&) {
        throw py::value_error("not supported: bf16 arrays need the ml_dtypes package");
      }
    }
    default:
      throw NotSupported("not supported: numpy arrays of " + std::string(PrimitiveTypeName(t)));
  }
}

py::array ToNumpy(const Literal& literal) {
  std::vector<int64_t> dims(literal.shape().dims().begin(), literal.shape().dims().end());
  py::array array(NumpyDtype(literal.shape().element_type()), dims);
  std::memcpy(array.mutable_data(), literal.raw_data(), literal.raw_size());
  return array;
}

Literal FromNumpy(const py::handle& object, const Shape& shape, int64_t index) {
  py::array array = py::array::ensure(object, py::array::c_style | py::array::forcecast);
  if (!array) throw py::value_error("input " + std::to_string(index) + " is not an array");
  const py::dtype want = NumpyDtype(shape.element_type());
  if (!array.dtype().is(want)) array = array.attr("astype")(want);
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  std::vector<int64_t> got(array.shape(), array.shape() + array.ndim());
  if (got != dims) {
    throw py::value_error("input " + std::to_string(index) + " has shape " +
                          py::str(py::cast(got)).cast<std::string>() + " but the parameter is " +
                          shape.ToString(false));
  }
  Literal literal(shape);
  std::memcpy(literal.raw_data(), array.data(), literal.raw_size());
  return literal;
}

py::list Outputs(const std::vector<Literal>& leaves) {
  py::list out;
  for (const Literal& leaf : leaves) out.append(ToNumpy(leaf));
  return out;
}

}  // namespace

void RegisterEval(py::module_& m) {
  m.def(
      "evaluate",
      [](const Module& module, std::optional<py::list> inputs) {
        std::vector<Literal> arguments;
        if (!inputs) {
          arguments = FormulaInputs(module);
        } else {
          const Computation* entry = module.entry();
          if (static_cast<int64_t>(inputs->size()) != entry->parameter_count()) {
            throw py::value_error("expected " + std::to_string(entry->parameter_count()) +
                                  " inputs, got " + std::to_string(inputs->size()));
          }
          for (int64_t p = 0; p < entry->parameter_count(); ++p) {
            arguments.push_back(FromNumpy((*inputs)[p], entry->parameter(p)->shape(), p));
          }
        }
        absl::StatusOr<std::vector<Literal>> leaves;
        {
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

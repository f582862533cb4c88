#include "python/src/numpy_literals.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/eval/formula_inputs.h"
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

}  // namespace

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
    // As numpy prints a shape: (3, 3), (5,), ().
    const std::string numpy_shape = absl::StrCat(
        "(", absl::StrJoin(got, ", "), got.size() == 1 ? ",)" : ")");
    throw py::value_error("input " + std::to_string(index) + " has shape " + numpy_shape +
                          " but the parameter is " + shape.ToString(false));
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

std::vector<Literal> Arguments(const Module& module, const std::optional<py::list>& inputs) {
  if (!inputs) return FormulaInputs(module);
  const Computation* entry = module.entry();
  if (static_cast<int64_t>(inputs->size()) != entry->parameter_count()) {
    throw py::value_error("expected " + std::to_string(entry->parameter_count()) + " inputs, got " +
                          std::to_string(inputs->size()));
  }
  std::vector<Literal> arguments;
  for (int64_t p = 0; p < entry->parameter_count(); ++p) {
    arguments.push_back(FromNumpy((*inputs)[p], entry->parameter(p)->shape(), p));
  }
  return arguments;
}

}  // namespace hlogym

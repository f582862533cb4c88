#include "python/src/status.h"

#include <string>

namespace hlogym {

void ThrowStatus(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      throw pybind11::value_error(message);
    case absl::StatusCode::kOutOfRange:
      throw pybind11::index_error(message);
    case absl::StatusCode::kNotFound:
      throw FileNotFound(message);
    case absl::StatusCode::kUnimplemented:
      throw NotSupported(message);
    default:
      throw std::runtime_error(message);
  }
}

void RegisterStatusExceptions(pybind11::module_&) {
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FileNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const NotSupported& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
}

}  // namespace hlogym

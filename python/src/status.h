// Turns an absl::Status into the Python exception a user expects. Only C++
// exceptions are thrown, so this is safe with the GIL released.
#pragma once

#include <stdexcept>

#include <pybind11/pybind11.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlogym {

struct FileNotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotSupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// InvalidArgument -> ValueError, OutOfRange -> IndexError, NotFound ->
// FileNotFoundError, Unimplemented -> NotImplementedError, the rest ->
// RuntimeError; the message is the status message.
[[noreturn]] void ThrowStatus(const absl::Status& status);

// The value of `result`, or its error raised as a Python exception.
template <typename T>
T Unwrap(absl::StatusOr<T> result) {
  if (!result.ok()) ThrowStatus(result.status());
  return *std::move(result);
}
inline void Check(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

// Registers the translators of FileNotFound and NotSupported.
void RegisterStatusExceptions(pybind11::module_& m);

}  // namespace hlogym

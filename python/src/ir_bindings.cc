// Python bindings of the IR: hlogym.HloModule, HloParseError, HloVerifyError.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "core/ir/fingerprint.h"
#include "core/ir/module.h"
#include "core/ir/node_order.h"
#include "core/ir/verifier.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "python/src/bindings.h"

namespace py = pybind11;

namespace hlogym {
namespace {

// C++ exceptions that pybind11 translates into the Python classes below.
struct HloParseException : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HloVerifyException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// Parses and verifies; the source name prefixes error messages so users see
// "file.hlo: line 3, column 7: ...".
std::shared_ptr<Module> ParseVerified(const std::string& text, const std::string& source) {
  absl::StatusOr<std::unique_ptr<Module>> module;
  {
    py::gil_scoped_release release;
    module = ParseAndVerifyModule(text);
  }
  if (module.ok()) return std::shared_ptr<Module>(std::move(*module));
  const std::string message = (source.empty() ? "" : source + ": ") + Message(module.status());
  if (IsVerifyError(module.status())) throw HloVerifyException(message);
  throw HloParseException(message);
}

std::string ReadFile(const std::string& path) {
  // An ifstream opens a directory and reads nothing, which would parse as an
  // empty module ("line 1, column 1: expected a computation").
  std::error_code ignored;
  const bool directory = std::filesystem::is_directory(path, ignored);
  errno = 0;
  std::ifstream in;
  if (!directory) in.open(path, std::ios::binary);
  if (!in.is_open()) {
    if (directory) {
      errno = EISDIR;
    } else if (errno == 0) {
      errno = ENOENT;
    }
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
    throw py::error_already_set();
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

void RegisterIr(py::module_& m) {
  py::register_exception<HloParseException>(m, "HloParseError", PyExc_ValueError).doc() =
      "HLO text could not be parsed; the message gives line and column.";
  py::register_exception<HloVerifyException>(m, "HloVerifyError", PyExc_ValueError).doc() =
      "An HLO module is ill-formed; the message names the instruction (and, for text,\n"
      "its line and column).";

  py::class_<Module, std::shared_ptr<Module>>(m, "HloModule", R"doc(
An HLO module: computations of instructions, parsed from HLO text in any style
JAX or XLA prints. Build one with HloModule.from_text or HloModule.from_file.
Copies are whole (clone(), copy.copy, copy.deepcopy); a pickle holds its text.)doc")
      .def_static(
          "from_text",
          [](const std::string& text) { return ParseVerified(text, ""); },
          py::arg("text"),
          "Parses and verifies HLO text. Raises HloParseError or HloVerifyError.")
      .def_static(
          "from_file",
          [](const std::filesystem::path& path) {
            return ParseVerified(ReadFile(path.string()), path.string());
          },
          py::arg("path"),
          "Reads, parses and verifies an HLO text file.")
      .def(
          "to_text",
          [](const Module& module, bool long_style, bool print_metadata) {
            PrintOptions options;
            options.long_style = long_style;
            options.print_metadata = print_metadata;
            return PrintModule(module, options);
          },
          py::arg("long_style") = false, py::arg("print_metadata") = true,
          "Canonical HLO text (short-parsable; long_style gives XLA's dump style).")
      .def("fingerprint", [](const Module& module) { return Fingerprint(module); },
           "A deterministic 64-bit structural hash, independent of names and ids.")
      .def("clone", [](const Module& module) {
             return std::shared_ptr<Module>(module.Clone());
           }, "A deep copy.")
      // copy.copy, copy.deepcopy and pickle (multiprocessing sends modules
      // so): a module is only ever copied whole, and pickled as its text,
      // which parses back to the same fingerprint.
      .def("__copy__",
           [](const Module& module) { return std::shared_ptr<Module>(module.Clone()); })
      .def(
          "__deepcopy__",
          [](const Module& module, const py::dict&) {
            return std::shared_ptr<Module>(module.Clone());
          },
          py::arg("memo"))
      .def(py::pickle(
          [](const Module& module) { return PrintModule(module); },
          [](const std::string& text) { return ParseVerified(text, "pickled HloModule"); }))
      .def("verify",
           [](const Module& module) {
             absl::Status status = Verify(module);
             if (!status.ok()) throw HloVerifyException(Message(status));
           },
           "Raises HloVerifyError if the module is ill-formed.")
      .def_property_readonly("name", [](const Module& m) { return m.name(); })
      .def_property_readonly("instruction_count", &Module::instruction_count)
      .def_property_readonly("computation_count", &Module::computation_count)
      .def(
          "computations",
          [](const Module& module) {
            std::vector<std::string> names;
            for (const auto& c : module.computations()) names.push_back(c->name());
            return names;
          },
          "Computation names, callees before callers (the entry is last).")
      .def(
          "instructions",
          [](const Module& module) {
            py::list rows;
            for (Instruction* inst : NodeOrder(module)) {
              rows.append(py::make_tuple(inst->name(), std::string(OpcodeName(inst->opcode())),
                                         inst->shape().ToString(), inst->parent()->name()));
            }
            return rows;
          },
          "(name, opcode, shape, computation) for every instruction, in node order.")
      .def("__str__", [](const Module& module) { return PrintModule(module); })
      .def("__repr__", [](const Module& module) {
        return "<HloModule " + module.name() + ": " +
               std::to_string(module.instruction_count()) + " instructions>";
      });
}

}  // namespace hlogym

// Python bindings of build and machine facts: the LLVM linked, whether it can
// make GPU code, how many CUDA devices the driver sees, and how the extension
// was built. `hlogym.build_info()` is the first thing to ask in a bug report.
#include <pybind11/pybind11.h>

#include "backend/cuda_info.h"
#include "backend/llvm_target.h"
#include "python/src/bindings.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {

void RegisterInfo(py::module_& m) {
  m.def("llvm_version", &LlvmVersion, "The version of the LLVM hlogym is built with.");
  m.def("nvptx_available", &NvptxTargetAvailable,
        "Whether LLVM's NVPTX target (GPU code generation) is available.");
  m.def(
      "cuda_device_count", [] { return Unwrap(CudaDeviceCount()); },
      "The number of CUDA devices; RuntimeError (saying why) where there is no usable "
      "driver or GPU, or hlogym was built without CUDA.");
  m.def(
      "build_info",
      [] {
        py::dict info;
        info["version"] = HLOGYM_VERSION;
        info["build_type"] = HLOGYM_BUILD_TYPE;
        info["compiler"] = HLOGYM_COMPILER;
        info["llvm"] = LlvmVersion();
        info["cuda"] = BuiltWithCuda();
        info["pybind11"] = py::str("{}.{}.{}").format(
            PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR, PYBIND11_VERSION_PATCH);
        return info;
      },
      "How this extension was built: version, build_type, compiler, llvm, cuda (built with "
      "CUDA support), pybind11.");
}

}  // namespace hlogym

// LLVM facts the backends depend on: the version linked, and whether the
// NVPTX target (GPU code generation) is compiled into it.
#pragma once

#include <string>

namespace hlogym {

std::string LlvmVersion();
// Registers LLVM's NVPTX target and reports whether it can make PTX for sm_90.
bool NvptxTargetAvailable();

}  // namespace hlogym

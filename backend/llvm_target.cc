#include "backend/llvm_target.h"

#include <mutex>

#include "llvm/Config/llvm-config.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"

// The NVPTX initializers are not in llvm/Config/Targets.def's generic macros
// when only some targets are wanted, so declare the ones we need.
extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();

namespace hlogym {

std::string LlvmVersion() { return LLVM_VERSION_STRING; }

bool NvptxTargetAvailable() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", error);
  return target != nullptr;
}

}  // namespace hlogym

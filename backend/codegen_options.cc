#include "backend/codegen_options.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

namespace hlogym {
namespace {

std::shared_mutex& OptionsMutex() {
  static std::shared_mutex* mutex = new std::shared_mutex();  // never destroyed
  return *mutex;
}

// LLVM's -disable-lsr (lib/CodeGen/TargetPassConfig.cpp), or null if this
// LLVM has none: then both targets get LLVM's default.
llvm::cl::opt<bool>* DisableLsrOption() {
  static llvm::cl::opt<bool>* option = [] {
    llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("disable-lsr");
    return it == options.end() ? nullptr : static_cast<llvm::cl::opt<bool>*>(it->second);
  }();
  return option;
}

// Outside NVPTX scopes the option holds the CPU setting.
void SetCpuSettingOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::unique_lock<std::shared_mutex> lock(OptionsMutex());
    if (llvm::cl::opt<bool>* option = DisableLsrOption()) option->setValue(true);
  });
}

}  // namespace

CpuCodegenScope::CpuCodegenScope() {
  SetCpuSettingOnce();
  lock_ = std::shared_lock<std::shared_mutex>(OptionsMutex());
}

NvptxCodegenScope::NvptxCodegenScope() {
  SetCpuSettingOnce();
  lock_ = std::unique_lock<std::shared_mutex>(OptionsMutex());
  if (llvm::cl::opt<bool>* option = DisableLsrOption()) option->setValue(false);
}

NvptxCodegenScope::~NvptxCodegenScope() {
  if (llvm::cl::opt<bool>* option = DisableLsrOption()) option->setValue(true);
}

bool CodegenRunsLoopStrengthReduction() {
  llvm::cl::opt<bool>* option = DisableLsrOption();
  return option == nullptr || !option->getValue();
}

}  // namespace hlogym

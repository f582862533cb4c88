#include "backend/nvptx_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/codegen_options.h"
#include "backend/gpu_lowering.h"
#include "backend/kernel_plan.h"
#include "backend/llvm_target.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace hlogym {
namespace {

constexpr char kTriple[] = "nvptx64-nvidia-cuda";

// One target machine per thread (they are not thread-safe), made once.
absl::StatusOr<llvm::TargetMachine*> Machine() {
  if (!NvptxTargetAvailable()) {
    return absl::UnavailableError("not supported: this LLVM has no NVPTX target");
  }
  static std::once_flag once;
  std::call_once(once, [] { LLVMInitializeNVPTXAsmPrinter(); });
  thread_local std::unique_ptr<llvm::TargetMachine> machine;
  if (machine == nullptr) {
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
    if (target == nullptr) return absl::UnavailableError(absl::StrCat("NVPTX target: ", error));
    llvm::TargetOptions options;
    machine.reset(target->createTargetMachine(kTriple, kGpuArch, "+ptx78", options,
                                              llvm::Reloc::PIC_, std::nullopt,
                                              llvm::CodeGenOpt::Aggressive));
    if (machine == nullptr) return absl::InternalError("cannot make an NVPTX target machine");
  }
  return machine.get();
}

bool CallsLibdevice(const llvm::Module& module) {
  for (const llvm::Function& f : module) {
    if (f.isDeclaration() && f.getName().startswith("__nv_")) return true;
  }
  return false;
}

absl::Status LinkLibdevice(llvm::Module& module) {
  ASSIGN_OR_RETURN(std::string path, LibdevicePath());
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> libdevice =
      llvm::parseIRFile(path, diagnostic, module.getContext());
  if (libdevice == nullptr) {
    return absl::InternalError(absl::StrCat("cannot read libdevice ", path, ": ",
                                            diagnostic.getMessage().str()));
  }
  libdevice->setTargetTriple(module.getTargetTriple());
  libdevice->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(libdevice), llvm::Linker::LinkOnlyNeeded)) {
    return absl::InternalError(absl::StrCat("cannot link libdevice ", path));
  }
  return absl::OkStatus();
}

void Optimize(llvm::Module& module, llvm::TargetMachine* machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

}  // namespace

absl::StatusOr<std::string> LibdevicePath() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("HLOGYM_LIBDEVICE")) candidates.push_back(env);
  const std::string relative = "nvvm/libdevice/libdevice.10.bc";
#ifdef HLOGYM_CUDA_ROOT
  candidates.push_back(absl::StrCat(HLOGYM_CUDA_ROOT, "/", relative));
#endif
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(absl::StrCat(home, "/", relative));
  candidates.push_back("/usr/local/cuda/" + relative);
  for (const std::string& c : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(c, error)) return c;
  }
  std::string looked;
  for (const std::string& c : candidates) absl::StrAppend(&looked, looked.empty() ? "" : ", ", c);
  return absl::NotFoundError(absl::StrCat(
      "libdevice not found (set HLOGYM_LIBDEVICE to libdevice.10.bc); looked at ", looked));
}

absl::StatusOr<std::string> CompileToPtx(llvm::Module& module) {
  ASSIGN_OR_RETURN(llvm::TargetMachine * machine, Machine());
  module.setTargetTriple(kTriple);
  module.setDataLayout(machine->createDataLayout());
  std::set<const llvm::Function*> kernels;
  if (llvm::NamedMDNode* annotations = module.getNamedMetadata("nvvm.annotations")) {
    for (llvm::MDNode* node : annotations->operands()) {
      if (node->getNumOperands() < 1) continue;
      if (auto* value = llvm::mdconst::dyn_extract_or_null<llvm::Function>(node->getOperand(0))) {
        kernels.insert(value);
      }
    }
  }
  if (CallsLibdevice(module)) {
    RETURN_IF_ERROR(LinkLibdevice(module));
    // libdevice asks __nvvm_reflect whether to flush denormals: no, as XLA.
    module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  }
  for (llvm::Function& f : module) {
    if (!f.isDeclaration() && kernels.count(&f) == 0) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  std::string errors;
  llvm::raw_string_ostream error_stream(errors);
  if (llvm::verifyModule(module, &error_stream)) {
    return absl::InternalError(absl::StrCat("invalid GPU kernel IR in ", module.getName().str(),
                                            ": ", error_stream.str()));
  }
  Optimize(module, machine);
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream out(ptx);
  llvm::legacy::PassManager codegen;
  bool cannot_emit = false;
  {
    NvptxCodegenScope scope;
    cannot_emit = machine->addPassesToEmitFile(codegen, out, nullptr, llvm::CGFT_AssemblyFile);
  }
  if (cannot_emit) return absl::InternalError("the NVPTX target cannot emit PTX");
  codegen.run(module);
  return std::string(ptx.str());
}

absl::StatusOr<std::string> CompileToPtx(GpuKernelIr kernel) {
  if (kernel.module == nullptr) return absl::InvalidArgumentError("the kernel has no module of its own");
  return CompileToPtx(*kernel.module);
}

absl::StatusOr<std::string> EmitModulePtx(const Module& module) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  ASSIGN_OR_RETURN(std::unique_ptr<Module> lowered, LowerForGpu(module));
  const std::vector<const Computation*> programs =
      ProgramComputations(*(lowered != nullptr ? *lowered : module).entry());
  llvm::LLVMContext context;
  llvm::Module program(module.name(), context);
  std::string index;
  int64_t count = 0;
  for (const Computation* computation : programs) {
    for (const auto& instruction : computation->instructions()) {
      if (!IsGpuKernel(*instruction)) continue;
      const std::string name = absl::StrCat("hlogym_kernel_", count++);
      RETURN_IF_ERROR(EmitGpuKernelInto(*instruction, name, &program).status());
      absl::StrAppend(&index, "// ", name, ": ", instruction->name(), " in ", computation->name(),
                      "\n");
    }
  }
  ASSIGN_OR_RETURN(std::string ptx, CompileToPtx(program));
  return absl::StrCat("// hlogym kernels of module ", module.name(), "\n", index, ptx);
}

}  // namespace hlogym

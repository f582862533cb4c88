#include "backend/cpu_jit.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace hlogym {
namespace {

bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value == '1';
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string ErrorText(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  return os.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CpuJit>> CpuJit::Create() {
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    return absl::InternalError(
        absl::StrCat("LLVM host detection: ", ErrorText(builder.takeError())));
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  std::unique_ptr<CpuJit> jit(new CpuJit());
  jit->machine_builder_ = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*builder);
  ASSIGN_OR_RETURN(jit->target_machine_, jit->BorrowTargetMachine());
  // ORC's default compiler shares one target machine; this one makes one per
  // compile, so that lookups on several threads compile at once.
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> lljit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*builder))
          .setCompileFunctionCreator([](llvm::orc::JITTargetMachineBuilder machine)
                                         -> llvm::Expected<std::unique_ptr<
                                             llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(machine));
          })
          .create();
  if (!lljit) return absl::InternalError(absl::StrCat("LLJIT: ", ErrorText(lljit.takeError())));
  jit->jit_ = std::move(*lljit);
  // Kernels call libm (sin, fmodf, ...) and libmvec (_ZGVdN4v_sin, ...):
  // resolve from the process.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          jit->jit_->getDataLayout().getGlobalPrefix());
  if (!generator) {
    return absl::InternalError(
        absl::StrCat("LLJIT process symbols: ", ErrorText(generator.takeError())));
  }
  jit->jit_->getMainJITDylib().addGenerator(std::move(*generator));
  // Loads libmvec into the process, whose symbols the generator above finds.
  jit->vector_math_ = VectorMathLibrary::ForHost(*jit->target_machine_);
  return jit;
}

void CpuJit::PrepareModule(llvm::Module& module) const {
  module.setTargetTriple(target_machine_->getTargetTriple().str());
  module.setDataLayout(target_machine_->createDataLayout());
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CpuJit::BorrowTargetMachine() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!idle_machines_.empty()) {
      std::unique_ptr<llvm::TargetMachine> machine = std::move(idle_machines_.back());
      idle_machines_.pop_back();
      return machine;
    }
  }
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      machine_builder_->createTargetMachine();
  if (!machine) {
    return absl::InternalError(
        absl::StrCat("LLVM target machine: ", ErrorText(machine.takeError())));
  }
  return std::move(*machine);
}

void CpuJit::ReturnTargetMachine(std::unique_ptr<llvm::TargetMachine> machine) {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  idle_machines_.push_back(std::move(machine));
}

void CpuJit::Optimize(llvm::Module& module, llvm::TargetMachine& target_machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  // No loop unrolling: it made kernels 5-10x larger (a 41-instruction
  // elementwise kernel became 386) and compiles 2-5x slower (a warm
  // recompile after one decision 50-70 ms instead of 17-19 ms on
  // transformer_block_train), with no runtime gain on the corpus that 2-core
  // measurements could tell apart from noise. The vectorizer still
  // interleaves (turning that off too cost up to 2x on pad_concat_slice).
  options.LoopUnrolling = false;
  llvm::PassBuilder builder(&target_machine, options);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, mam);
}

absl::StatusOr<void*> CpuJit::Add(std::unique_ptr<llvm::Module> module,
                                  std::unique_ptr<llvm::LLVMContext> context,
                                  absl::string_view function) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(absl::StrCat("invalid kernel IR: ", os.str()));
  }
  // For kernel work: HLOGYM_CPU_TIME_KERNELS=1 prints each kernel's optimize
  // and machine-code times.
  const bool time_kernels = EnvFlag("HLOGYM_CPU_TIME_KERNELS");
  size_t emitted_instructions = 0;
  if (time_kernels) {
    for (const llvm::Function& f : *module) emitted_instructions += f.getInstructionCount();
  }
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, BorrowTargetMachine());
  Optimize(*module, *machine);
  const double optimize_ms = MillisecondsSince(start);
  ReturnTargetMachine(std::move(machine));
  // For kernel work: HLOGYM_CPU_DUMP_IR=1 prints each optimized kernel.
  if (EnvFlag("HLOGYM_CPU_DUMP_IR")) module->print(llvm::errs(), nullptr);
  size_t ir_instructions = 0;
  if (time_kernels) {
    for (const llvm::Function& f : *module) ir_instructions += f.getInstructionCount();
  }
  llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(context));
  if (llvm::Error error = jit_->addIRModule(std::move(tsm))) {
    return absl::InternalError(absl::StrCat("LLJIT add: ", ErrorText(std::move(error))));
  }
  llvm::Expected<llvm::orc::ExecutorAddr> address =
      jit_->lookup(llvm::StringRef(function.data(), function.size()));
  if (!address) {
    return absl::InternalError(absl::StrCat("LLJIT lookup: ", ErrorText(address.takeError())));
  }
  if (time_kernels) {
    std::fprintf(stderr, "kernel %.*s: %zu IR instructions (%zu optimized), optimize %.1f ms, codegen %.1f ms\n",
                 static_cast<int>(function.size()), function.data(), emitted_instructions,
                 ir_instructions, optimize_ms,
                 MillisecondsSince(start) - optimize_ms);
  }
  return address->toPtr<void*>();
}

}  // namespace hlogym

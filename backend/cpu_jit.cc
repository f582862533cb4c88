#include "backend/cpu_jit.h"

#include <cstdio>
#include <cstdlib>

#include <string>

#include "absl/strings/str_cat.h"
#include "backend/codegen_options.h"
#include "core/base/status_macros.h"
#include "core/base/thread_cpu_time.h"
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

// Kernel timings use the thread's CPU time: on a shared machine wall time
// mostly measures the neighbours. ORC compiles on the looking-up thread.
double ThreadCpuMilliseconds() { return 1e3 * ThreadCpuSeconds(); }

// The kernels' optimization pipeline. A kernel is one loop nest in one
// function that calls nothing but libm/libmvec, so O3's inliner, IPO and
// repeated cleanup rounds find nothing to do; this keeps what its loops need,
// once each: SROA and early CSE, loop canonicalization (LICM, rotation,
// IndVars), the loop and SLP vectorizers with InstCombine around them. On the
// corpus's small twins the kernels execute the same instruction counts as
// after O3 (batchnorm_train 1.5% more), and optimizing takes about a third
// less time, which is most of a warm recompile after one decision. No loop
// unrolling: it made kernels 5-10x larger and compiles 2-5x slower with no
// runtime gain measurable on the corpus; the vectorizer still interleaves
// (without interleaving pad_concat_slice ran up to 2x slower).
// HLOGYM_CPU_PIPELINE=<LLVM pass pipeline> replaces it, for compiler work.
constexpr char kKernelPipeline[] =
    "function("
    "simplifycfg<keep-loops>,sroa,early-cse<memssa>,instcombine,simplifycfg<keep-loops>,"
    "loop-mssa(licm<no-allowspeculation>,loop-rotate,licm<allowspeculation>),"
    "loop(indvars,loop-deletion),instcombine,"
    "inject-tli-mappings,loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only>,"
    "loop-load-elim,"
    "simplifycfg<forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;"
    "hoist-common-insts;sink-common-insts>,"
    "slp-vectorizer,instcombine,loop-mssa(licm<allowspeculation>),div-rem-pairs,"
    "simplifycfg<keep-loops>)";

const char* KernelPipeline() {
  const char* custom = std::getenv("HLOGYM_CPU_PIPELINE");
  return custom != nullptr && *custom != '\0' ? custom : kKernelPipeline;
}

// ORC's per-compile target machine compiler, building its codegen pipeline
// with the CPU target's settings (codegen_options.h).
class KernelObjectCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  explicit KernelObjectCompiler(llvm::orc::JITTargetMachineBuilder machine)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(machine.getOptions())),
        compiler_(std::move(machine)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& module) override {
    CpuCodegenScope scope;
    return compiler_(module);
  }

 private:
  llvm::orc::ConcurrentIRCompiler compiler_;
};

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
            return std::make_unique<KernelObjectCompiler>(std::move(machine));
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

absl::Status CpuJit::Optimize(llvm::Module& module, llvm::TargetMachine& target_machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&target_machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager pipeline;
  if (llvm::Error error = builder.parsePassPipeline(pipeline, KernelPipeline())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the kernel pipeline (HLOGYM_CPU_PIPELINE?): ", ErrorText(std::move(error))));
  }
  pipeline.run(module, mam);
  return absl::OkStatus();
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
  // For kernel work: HLOGYM_CPU_DUMP_IR=1 prints each optimized kernel, =2
  // each kernel as emitted.
  const char* dump_ir = std::getenv("HLOGYM_CPU_DUMP_IR");
  if (dump_ir != nullptr && *dump_ir == '2') module->print(llvm::errs(), nullptr);
  const double start = time_kernels ? ThreadCpuMilliseconds() : 0.0;
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, BorrowTargetMachine());
  absl::Status optimized = Optimize(*module, *machine);
  const double optimize_ms = time_kernels ? ThreadCpuMilliseconds() - start : 0.0;
  ReturnTargetMachine(std::move(machine));
  RETURN_IF_ERROR(optimized);
  if (dump_ir != nullptr && *dump_ir == '1') module->print(llvm::errs(), nullptr);
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
    std::fprintf(stderr, "kernel %.*s: %zu IR instructions (%zu optimized), optimize %.1f ms, codegen %.1f ms (thread CPU time)\n",
                 static_cast<int>(function.size()), function.data(), emitted_instructions,
                 ir_instructions, optimize_ms,
                 ThreadCpuMilliseconds() - start - optimize_ms);
  }
  return address->toPtr<void*>();
}

}  // namespace hlogym

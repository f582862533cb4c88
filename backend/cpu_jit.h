// The CPU JIT under the kernel compiler: LLVM ORC LLJIT for the host CPU,
// optimizing each module with a kernel pipeline of O3's loop passes and
// vectorizers (for the host) and compiling it at -O3 without loop strength
// reduction (codegen_options.h) before adding it.
// Modules are optimized and compiled in parallel when added from several
// threads: LLVM target machines are not thread-safe (their subtarget
// caches), so each Add borrows one of its own.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/cpu_vector_math.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace hlogym {

class CpuJit {
 public:
  static absl::StatusOr<std::unique_ptr<CpuJit>> Create();

  // Sets the module's triple and data layout to the host's; call before
  // building functions in it.
  void PrepareModule(llvm::Module& module) const;

  // libmvec's vector math functions for this host (none without libmvec);
  // the JIT resolves the ones kernels call.
  const VectorMathLibrary& vector_math() const { return vector_math_; }

  // Verifies and optimizes the module, adds it to the JIT, and returns the
  // address of `function`. Thread-safe.
  absl::StatusOr<void*> Add(std::unique_ptr<llvm::Module> module,
                            std::unique_ptr<llvm::LLVMContext> context,
                            absl::string_view function);

 private:
  CpuJit() = default;
  static absl::Status Optimize(llvm::Module& module, llvm::TargetMachine& target_machine);
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> BorrowTargetMachine();
  void ReturnTargetMachine(std::unique_ptr<llvm::TargetMachine> machine);

  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> machine_builder_;
  // For triples, data layouts and the vector library; read-only after Create.
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle_machines_;  // for Optimize
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  VectorMathLibrary vector_math_;
};

}  // namespace hlogym

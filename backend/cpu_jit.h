// The CPU JIT under the kernel compiler: LLVM ORC LLJIT for the host CPU,
// optimizing each module at -O3 (vectorizing for the host) before adding it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backend/cpu_vector_math.h"
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
  void Optimize(llvm::Module& module);

  std::mutex mutex_;
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  VectorMathLibrary vector_math_;
};

}  // namespace hlogym

// Vector versions of the libm functions the CPU kernels call, from glibc's
// libmvec: a loop calling scalar sin or log1p per element does not
// vectorize, and a fused elementwise kernel made of such calls then runs
// slower than the unfused kernels around it. Each call site is annotated
// with its libmvec variants (the vector function ABI attribute LLVM's loop
// vectorizer reads), for the instruction sets the host runs.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Target/TargetMachine.h"

namespace hlogym {

class VectorMathLibrary {
 public:
  // Loads libmvec.so.1 into the process (so the JIT's process symbol lookup
  // resolves its functions) and keeps the variants it exports for the ISAs
  // `target` has. Without libmvec (another C library, another CPU) there are
  // none, and calls stay scalar.
  static VectorMathLibrary ForHost(const llvm::TargetMachine& target);

  // Adds the vector variants of `call`, a call of the scalar libm function
  // `name` ("sin", "atan2", "sinf", ...), declaring them in its module.
  // Returns how many it added (0 for a function libmvec lacks).
  int Annotate(llvm::CallInst* call, absl::string_view name) const;

  // The variant symbols kept, e.g. "_ZGVdN4v_sin".
  const std::set<std::string>& variants() const { return variants_; }

 private:
  struct Isa {
    char letter;     // the x86 vector ABI's ISA letter: b, c, d, e
    int bits;        // vector register width
  };
  std::vector<Isa> isas_;  // narrowest first; one per register width
  std::set<std::string> variants_;
};

}  // namespace hlogym

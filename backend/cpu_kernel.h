// The contract between the CPU executable and the kernels LLVM compiles for
// it. One kernel computes one kernel-forming instruction: a `fusion`, or an
// unfused elemental instruction. The executable owns the buffers and splits
// the kernel's parallel extent over TBB; the compiler owns the JIT and the
// kernel cache.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"

namespace hlogym {

// void kernel(void* const* buffers, int64_t begin, int64_t end)
//   buffers: the instruction's operands in order, then its outputs (one per
//            leaf of a tuple-shaped result), each dense and row-major (the
//            logical shape's last dimension is minor), as the reference
//            interpreter lays literals out; then the kernel's scratch
//            buffers (CpuKernel::scratch_doubles), which the executable
//            allocates once.
//   [begin, end): a range of the kernel's parallel extent. Calls on disjoint
//            ranges may run concurrently; together they cover
//            [0, parallel_extent).
using CpuKernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end);

// A reduce output computed as partial results (backend/cpu_split_reduce.h):
// the kernel writes `partials` x `outputs` doubles and the init value into
// scratch buffers, and FinishSplitReductions folds them into the output.
struct SplitReduction {
  int64_t output_buffer = 0;
  int64_t partial_buffer = 0;
  int64_t init_buffer = 0;
  int64_t partials = 0;
  int64_t outputs = 0;
  Opcode op = Opcode::kAdd;  // add, maximum or minimum
  bool f64 = false;          // the output's type (else f32)
};

struct CpuKernel {
  CpuKernelFn fn = nullptr;
  int64_t parallel_extent = 1;  // output elements, or reduction rows
  int64_t grain = 1;            // a sensible minimum range per task
  // Doubles per scratch buffer (after the outputs in `buffers`), and the
  // split reductions to finish once every range has run.
  std::vector<int64_t> scratch_doubles;
  std::vector<SplitReduction> split_reductions;
};

// Compiles kernels with LLVM ORC (LLJIT) at -O3 for the host CPU. Compile is
// thread-safe; a kernel is cached by the fingerprint of its (fused)
// computation plus its operand and result shapes, and lives as long as the
// compiler.
class CpuKernelCompiler {
 public:
  static absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> Create();
  virtual ~CpuKernelCompiler() = default;

  // Whether `instruction` can become a compiled kernel. Instructions that
  // cannot (dot, convolution, sort, while, ...) are run by the executable's
  // host ops.
  static bool CanCompile(const Instruction& instruction);

  // The kernel for `instruction`, compiled on first use. An instruction with
  // an opcode or type the emitter does not support is an error naming it.
  virtual absl::StatusOr<CpuKernel> Compile(const Instruction& instruction) = 0;

  // Kernels compiled so far, and cache hits (for the benchmarks and tests).
  virtual int64_t compiled_count() const = 0;
  virtual int64_t cache_hits() const = 0;
};

}  // namespace hlogym

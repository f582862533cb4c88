// The CPU executable: a module compiled into a fixed list of steps (LLVM
// kernels split over TBB, BLAS dots, im2col convolutions, host-driven control
// flow, interpreter-backed host ops) over buffers assigned once at compile
// time, so a run allocates nothing for kernels, dots and convolutions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/buffer_assignment.h"
#include "backend/cpu_kernel.h"
#include "backend/host_ops.h"
#include "core/ir/module.h"

namespace hlogym {

struct CpuExecutableStats {
  // Steps of the entry computation that run code: one per fusion and per
  // unfused instruction that is neither an alias (tuple, bitcast, ...) nor
  // control flow (while, conditional, call).
  int64_t kernel_count = 0;
  int64_t jit_kernel_count = 0;       // of those, LLVM kernels
  int64_t blas_op_count = 0;          // BLAS dots and im2col convolutions
  // Host kernels of their own (topk, scatter, scan, select-and-scatter, sort).
  int64_t native_host_op_count = 0;
  int64_t interpreter_op_count = 0;   // run by the reference interpreter
  int64_t control_flow_count = 0;     // while, conditional, call
  // Instructions the compiler said it could compile but failed on; they run
  // on the host instead. The first failure's message is kept.
  int64_t jit_fallback_count = 0;
  std::string first_jit_failure;
  // The same counts summed over every called computation's executable too.
  int64_t total_kernel_count = 0;
  int64_t total_interpreter_op_count = 0;
  // What runs on the interpreter, as "opcode `name`", here and in every
  // called computation (allocations inside timed runs come from these).
  std::vector<std::string> interpreter_ops;
  // Temporaries: arena bytes after sharing vs. without sharing, and the
  // constants' bytes; summed over the called computations' executables.
  int64_t arena_bytes = 0;
  int64_t unshared_bytes = 0;
  int64_t constant_bytes = 0;
};

class CpuExecutable {
 public:
  // Compiles the module's entry computation. Kernels come from `compiler`
  // (whose cache they live in: it must outlive the executable); host ops
  // refer to the module's called computations, so it must outlive the
  // executable too.
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> Compile(const Module& module,
                                                                CpuKernelCompiler& compiler);
  // Compiles one computation (a while body, a branch, ...).
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> CompileComputation(
      const Computation& computation, CpuKernelCompiler& compiler);

  ~CpuExecutable();
  CpuExecutable(const CpuExecutable&) = delete;
  CpuExecutable& operator=(const CpuExecutable&) = delete;

  // Runs on `arguments` (one per parameter, shapes checked) and returns the
  // root's leaves, flattened as EvaluateFlat does. Not reentrant either: the
  // arena holds one run's temporaries (Python's Executable locks per run).
  absl::StatusOr<std::vector<Literal>> Run(absl::Span<const Literal> arguments);

  // Runs on inputs already in memory: one pointer per parameter leaf
  // (parameters in order, tuples flattened), dense row-major, alive and
  // unchanged for the call. Not reentrant: one Execute at a time per
  // executable. The results stay in the executable (output_leaf) until the
  // next Execute.
  absl::Status Execute(absl::Span<const void* const> parameter_leaves);

  // Execute, timing each step of this computation (called computations'
  // steps are inside their caller's time): for finding slow kernels.
  struct StepTime {
    std::string instruction;
    std::string kind;  // "llvm", "blas-dot", "im2col-conv", "interpreter", "while", ...
    double seconds = 0;
  };
  absl::StatusOr<std::vector<StepTime>> ExecuteProfiled(
      absl::Span<const void* const> parameter_leaves);
  // Each step's median time over `runs` profiled runs on `arguments` (checked
  // as Run checks them), after one warm-up run.
  absl::StatusOr<std::vector<StepTime>> Profile(absl::Span<const Literal> arguments, int runs);

  int64_t output_leaf_count() const { return static_cast<int64_t>(output_shapes_.size()); }
  const void* output_leaf(int64_t i) const;
  const std::vector<Shape>& output_leaf_shapes() const { return output_shapes_; }
  const std::vector<Shape>& parameter_leaf_shapes() const { return parameter_shapes_; }
  // Copies the last Execute's results into Literals.
  std::vector<Literal> ReadOutputs() const;

  const CpuExecutableStats& stats() const { return stats_; }

 private:
  struct Step;
  CpuExecutable();
  // The leaves of `arguments`, after checking them against the parameters.
  absl::StatusOr<std::vector<const void*>> CheckedLeaves(
      absl::Span<const Literal> arguments) const;
  absl::Status Build(const Computation& computation, CpuKernelCompiler& compiler);
  absl::Status BindParameters(absl::Span<const void* const> parameter_leaves);
  absl::Status RunStep(Step& step);
  void AllocateScratch(Step& step);
  absl::StatusOr<std::unique_ptr<Step>> MakeStep(const Instruction& instruction,
                                                 CpuKernelCompiler& compiler);

  std::vector<std::unique_ptr<Step>> steps_;
  BufferAssignment assignment_;
  std::vector<void*> slots_;  // buffer id -> address
  std::vector<int64_t> parameter_buffers_;  // parameter leaf -> buffer id
  std::vector<int64_t> output_buffers_;     // root leaf -> buffer id
  std::vector<Shape> parameter_shapes_, output_shapes_;
  uint8_t* arena_ = nullptr;
  size_t arena_mapped_bytes_ = 0;  // nonzero: arena_ came from mmap
  std::vector<uint8_t*> constants_;  // owned, 64-byte aligned
  CpuExecutableStats stats_;
};

// A step that calls computations (while, conditional, call), driving an
// executable per called computation, compiled once.
class ControlFlowOp : public HostOp {
 public:
  virtual std::vector<const CpuExecutable*> called() const = 0;
};
absl::StatusOr<std::unique_ptr<ControlFlowOp>> MakeControlFlowOp(const Instruction& instruction,
                                                                 CpuKernelCompiler& compiler);

}  // namespace hlogym

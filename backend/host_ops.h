// Host ops: the steps of the CPU executable that are not LLVM kernels. Dots
// go to OpenBLAS, convolutions to im2col + GEMM, and the remaining ops (sort,
// scatter, gather, reduce-window, ...) to the reference interpreter's kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"

namespace hlogym {

class HostOp {
 public:
  virtual ~HostOp() = default;
  // buffers: every leaf of every operand in order, then the leaves of the
  // result, each dense and row-major (the layout of the kernel ABI).
  virtual absl::Status Run(void* const* buffers) = 0;
  // Whether Run allocates memory (the interpreter-backed ops do).
  virtual bool allocates() const = 0;
  // "blas-dot", "im2col-conv", "interpreter", ... (for statistics).
  virtual std::string kind() const = 0;
};

// A dot on OpenBLAS: f32 and f64 with any batch and contracting dimensions.
// Operands are passed to GEMM in place when their dimensions are already in
// (batch, free, contracting) or (batch, contracting, free) order, else they
// are packed into scratch allocated here. Returns nullptr for a dot it does
// not handle (other types), which then runs on the interpreter.
std::unique_ptr<HostOp> MakeBlasDot(const Instruction& dot);

// A convolution as im2col + GEMM: f32 and f64, any dim_labels, strides,
// padding, dilations, window reversal and feature groups. Returns nullptr
// for other types and for batch_group_count > 1.
std::unique_ptr<HostOp> MakeIm2colConvolution(const Instruction& convolution);

// topk on f32, f64, s32 and s64 rows with k up to 128, allocation-free,
// ordered as the interpreter orders them. Returns nullptr otherwise.
std::unique_ptr<HostOp> MakeTopK(const Instruction& topk);

// scatter of one f32/f64 operand with an add or multiply combiner (any
// dimension numbers, s32/s64 indices), allocation-free and identical to the
// interpreter's. Returns nullptr otherwise.
std::unique_ptr<HostOp> MakeScatter(const Instruction& scatter);

// scan of the cumulative sum/product form (one f32/f64 input and carry, a
// body (x, c) -> (x op c, x op c) with op add or multiply), allocation-free
// and identical to the interpreter's. Returns nullptr otherwise.
std::unique_ptr<HostOp> MakeScan(const Instruction& scan);

// select-and-scatter on f32, f64, bf16 and f16 with a select computation
// that is one compare of its parameters and a scatter computation that is
// one binary op of them, allocation-free and identical to the
// interpreter's. Returns nullptr otherwise.
std::unique_ptr<HostOp> MakeSelectAndScatter(const Instruction& select_and_scatter);

// sort of any operands of the types the interpreter loads as scalars
// (floats up to f64, integers, pred) along one dimension, with a comparator
// the interpreter runs as a register program (scalar elementwise ops,
// compare, select): allocation-free, and identical to the interpreter's
// stable sort for a comparator that is a strict weak order. Returns nullptr
// otherwise.
std::unique_ptr<HostOp> MakeSort(const Instruction& sort);

// The one of the five above (topk, scatter, scan, select-and-scatter, sort)
// that takes `instruction`, or nullptr: the host op both targets try before
// the interpreter's.
std::unique_ptr<HostOp> MakeNativeHostOp(const Instruction& instruction);

// Any op the reference interpreter evaluates on its own (elementwise, data
// movement, reduce, reduce-window, select-and-scatter, gather, scatter, sort,
// topk, scan, dot, convolution, rng-bit-generator, a fusion's computation).
// Run copies the operands into Literals and the result back, so it
// allocates. An op the interpreter cannot run is an error naming it.
absl::StatusOr<std::unique_ptr<HostOp>> MakeInterpreterOp(const Instruction& instruction);

// A deliberately broken kernel, for testing fault isolation (isolated runtime
// sources): `custom-call(...), custom_call_target="hlogym.inject_fault",
// backend_config="segfault"` raises SIGSEGV when it runs, "hang" never
// returns, "error" fails with an InternalError, and "illegal_address" is a
// GPU kernel storing through a null pointer (backend/gpu_fault_kernel.h;
// SIGSEGV on the host). nullptr for any other instruction; an error for
// another backend_config.
inline constexpr char kFaultInjectionTarget[] = "hlogym.inject_fault";
absl::StatusOr<std::unique_ptr<HostOp>> MakeFaultInjectionOp(const Instruction& instruction);
// The backend_config of a fault-injection custom-call ("(none)" without one),
// or "" for any other instruction.
std::string_view FaultInjectionKind(const Instruction& instruction);

}  // namespace hlogym

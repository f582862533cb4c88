// The target-independent elemental IR emitter: the LLVM value of one element
// of an HLO instruction at a given index, recursing through a (fused)
// computation. Targets (CPU kernels, later NVPTX) supply parameter loads and
// may map math functions to their own libraries.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace hlogym {

// A multi-index: one i64 value per dimension of the indexed shape.
using IrIndex = std::vector<llvm::Value*>;

// Values in the emitter are in a "value type" per element type: pred is i1,
// sN/uN are iN, f32 float, f64 double, and f16/bf16 are floats already
// rounded to their format (so each op rounds its result, as the interpreter
// does). Buffers hold the "storage type": pred and sub-byte ints one byte,
// f16/bf16 as i16 bits.
class ElementalEmitter {
 public:
  // Reads element `index` of parameter `number`, returning it in its storage
  // type (the emitter converts it to the value type).
  using ParameterReader =
      std::function<absl::StatusOr<llvm::Value*>(int64_t number, const IrIndex& index)>;

  ElementalEmitter(llvm::IRBuilder<>* b, llvm::Module* module);
  virtual ~ElementalEmitter() = default;

  // Whether every instruction `computation`'s root reaches (and every
  // computation they call) can be emitted; else "not supported: ..." naming
  // the instruction.
  static absl::Status CheckSupported(const Computation& computation);
  // The same for one instruction, its called computations included.
  static absl::Status CheckSupported(const Instruction& instruction);
  // Whether an element type has a value type here.
  static bool SupportedType(PrimitiveType type);

  // Parameters of `computation` (a fused computation) are read through
  // `reader`.
  void BindComputation(const Computation* computation, ParameterReader reader);
  // Operand i of the unfused `instruction` is read as parameter i.
  void BindUnfused(const Instruction* instruction, ParameterReader reader);

  // The element of an array-shaped instruction at `index`, in its value type.
  absl::StatusOr<llvm::Value*> EmitElement(const Instruction& instruction, const IrIndex& index);
  // Every leaf of a tuple-shaped instruction (variadic reduce, tuple) at
  // `index`; a one-element vector for arrays.
  absl::StatusOr<std::vector<llvm::Value*>> EmitElements(const Instruction& instruction,
                                                         const IrIndex& index);

  // Element `index` of operand `i` of `user`, which is the bound unfused
  // instruction or an instruction of a bound computation.
  absl::StatusOr<llvm::Value*> OperandElement(const Instruction& user, int64_t i,
                                              const IrIndex& index) {
    return Operand(user, i, index);
  }

  llvm::Type* StorageType(PrimitiveType type) const;
  llvm::Type* ValueType(PrimitiveType type) const;
  llvm::Value* FromStorage(PrimitiveType type, llvm::Value* stored);
  llvm::Value* ToStorage(PrimitiveType type, llvm::Value* value);

  llvm::IRBuilder<>* builder() const { return b_; }

  // A counted loop [0, trip_count) at the insertion point; `body` emits into
  // it with the induction value. Values the body caches are dropped after it.
  absl::Status EmitLoop(llvm::Value* trip_count, absl::string_view name,
                        const std::function<absl::Status(llvm::Value*)>& body);
  // One EmitLoop per dimension d of `dims` (outermost first) over
  // [0, shape.dim(d)), named name_prefix + d, each setting index[d]; `body`
  // emits into the innermost (alone when `dims` is empty).
  absl::Status EmitLoopsOver(const Shape& shape, absl::Span<const int64_t> dims,
                             absl::string_view name_prefix, IrIndex& index,
                             const std::function<absl::Status()>& body);
  // The same, with the innermost loop of `dims` split into one loop per
  // segment between `breakpoints` (sorted positions inside the dimension;
  // see backend/index_breakpoints.h), in order.
  absl::Status EmitLoopsOver(const Shape& shape, absl::Span<const int64_t> dims,
                             absl::string_view name_prefix, IrIndex& index,
                             absl::Span<const int64_t> breakpoints,
                             const std::function<absl::Status()>& body);

  // Float-sum reduces of one operand shape and reduced dimensions, at
  // `index`, in one loop, so producers they share are computed once per
  // element (a fusion's sibling row sums); each result is cached as
  // EmitElements would cache it. The reduces that are not such sums, or
  // differ from the first, are left to EmitElements.
  absl::Status EmitSiblingSums(absl::Span<const Instruction* const> reduces,
                               const IrIndex& index);

  // Declares that the index value `v` lies in [lo, hi] where it is used (a
  // loop's induction value plus a segment's start). Data movement then
  // drops clamps that cannot bind and reads only the concatenate operand or
  // pad side the range lies in. EmitLoop declares its induction value's
  // range when the trip count is a constant.
  void SetIndexRange(llvm::Value* v, int64_t lo, int64_t hi);

 protected:
  // A libm-style math function by its double-precision name ("exp",
  // "tanh", "atan2", ...) on scalars of `type` (float or double). The default
  // declares the C library function (expf / exp) in the module.
  virtual llvm::Value* EmitMathCall(absl::string_view name, absl::Span<llvm::Value* const> args,
                                    llvm::Type* type);
  // Whether f32 exp, tanh and logistic are emitted inline (vectorizable,
  // computed in double; elemental_math.cc) rather than as math calls.
  virtual bool InlineFloatMath() const { return true; }
  // CPU-only code shapes (off by default, so the NVPTX kernels are unchanged):
  // a reduce whose index does not depend on the loops around it is computed
  // once before the outermost such loop instead of once per iteration (a
  // softmax's row max and sum once per row, not once per element).
  virtual bool HoistInvariantReductions() const { return false; }
  // Independent partial accumulators for an associative and commutative
  // reducer (float add/max/min, integer add/mul/max/min/and/or/xor) over the
  // innermost reduced dimension, so the fold is not one serial dependency
  // chain and vectorizes; 1 keeps the row-major in-order fold. XLA:CPU also
  // reassociates float reductions this way.
  virtual int ReductionPartials() const { return 1; }

 private:
  using CacheKey = std::pair<const Instruction*, std::vector<llvm::Value*>>;
  struct CacheScope {
    std::map<CacheKey, std::vector<llvm::Value*>> values;
    bool isolated = false;  // lookups stop here (scalar computations)
    // For the body of an EmitLoop: the block that branches into the loop's
    // header (where hoisted code goes), and the header.
    llvm::BasicBlock* preheader = nullptr;
    llvm::BasicBlock* header = nullptr;
  };

  // The reduce `instruction` at `index`, computed before the outermost
  // enclosing loops its index does not depend on (and cached there), or
  // nullopt when it depends on the innermost loop.
  absl::StatusOr<std::optional<std::vector<llvm::Value*>>> EmitHoistedReduce(
      const Instruction& instruction, const IrIndex& index);
  // EmitReduce with ReductionPartials() independent accumulators.
  absl::StatusOr<std::optional<std::vector<llvm::Value*>>> EmitPartialReduce(
      const Instruction& reduce, const IrIndex& index);

  absl::StatusOr<std::vector<llvm::Value*>> EmitUncached(const Instruction& instruction,
                                                         const IrIndex& index);
  // Element `index` of operand `i` of `user`.
  absl::StatusOr<llvm::Value*> Operand(const Instruction& user, int64_t i, const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitParameter(const Instruction& parameter, const IrIndex& index);
  absl::StatusOr<llvm::Value*> EmitConstant(const Instruction& constant, const IrIndex& index);

  // elemental_arithmetic.cc
  absl::StatusOr<llvm::Value*> EmitUnary(const Instruction& instruction, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitFloatUnary(Opcode opcode, PrimitiveType out, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitIntUnary(Opcode opcode, PrimitiveType type, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitBinary(const Instruction& instruction, llvm::Value* x,
                                          llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitFloatBinary(Opcode opcode, PrimitiveType out, llvm::Value* x,
                                               llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitIntBinary(Opcode opcode, PrimitiveType type, llvm::Value* x,
                                             llvm::Value* y);
  llvm::Value* EmitCompare(const Instruction& instruction, llvm::Value* x, llvm::Value* y);
  llvm::Value* EmitIntPow(PrimitiveType type, llvm::Value* base, llvm::Value* exponent);
 public:
  // Value-semantics convert (float->int saturates, NaN -> 0).
  llvm::Value* EmitConvert(PrimitiveType from, PrimitiveType to, llvm::Value* x);
  // Rounds a float value to a narrow format's precision (identity for f32/f64).
  llvm::Value* RoundToType(PrimitiveType type, llvm::Value* x);

 private:
  llvm::Value* EmitBitcastConvert(PrimitiveType from, PrimitiveType to, llvm::Value* x);
  llvm::Value* DoubleToFloatRoundToOdd(llvm::Value* x);
  llvm::Value* FloatToBF16Bits(llvm::Value* x);
  // elemental_math.cc: exp of a double in [-745, 709], of a float in
  // [-104, 89]; exp/tanh/logistic of a float value (nullptr for other
  // opcodes), exp in single precision when the result is f32.
  llvm::Value* EmitExpF64(llvm::Value* y);
  llvm::Value* EmitExpF32(llvm::Value* y);
  llvm::Value* EmitInlineFloatMath(Opcode opcode, llvm::Value* x, bool f32_result);

  // elemental_data_movement.cc
  absl::StatusOr<std::vector<llvm::Value*>> EmitDataMovement(const Instruction& instruction,
                                                             const IrIndex& index);
  // Linear row-major index of `index` in `dims`, and back.
  llvm::Value* Linearize(absl::Span<const int64_t> dims, const IrIndex& index);
  IrIndex Delinearize(absl::Span<const int64_t> dims, llvm::Value* linear);
  llvm::Value* Clamp(llvm::Value* v, int64_t lo, int64_t hi);
  llvm::Value* IndexConst(int64_t v);
  // The known range of an index value (constants and declared ranges), and
  // index arithmetic that carries ranges on: v + c, v * c (c > 0), c - v.
  std::optional<std::pair<int64_t, int64_t>> IndexRange(llvm::Value* v) const;
  llvm::Value* IndexAdd(llvm::Value* v, int64_t c);
  llvm::Value* IndexMul(llvm::Value* v, int64_t c);
  llvm::Value* IndexSubFrom(int64_t c, llvm::Value* v);
  absl::StatusOr<llvm::Value*> EmitGather(const Instruction& gather, const IrIndex& index);
  // A start index operand (scalar, any int type) as i64.
  absl::StatusOr<llvm::Value*> StartIndex(const Instruction& user, int64_t operand);

  // elemental_reduce.cc
  absl::StatusOr<std::vector<llvm::Value*>> EmitReduce(const Instruction& reduce,
                                                       const IrIndex& index);
  absl::StatusOr<std::vector<llvm::Value*>> EmitReduceWindow(const Instruction& reduce_window,
                                                             const IrIndex& index);
  // elemental_convolution.cc (float types)
  absl::StatusOr<std::vector<llvm::Value*>> EmitConvolution(const Instruction& convolution,
                                                            const IrIndex& index);
 public:
  // Runs a scalar computation (a reducer) on `args` in value types.
  absl::StatusOr<std::vector<llvm::Value*>> EmitScalarComputation(
      const Computation& computation, absl::Span<llvm::Value* const> args);

 private:
  llvm::Value* EntryAlloca(llvm::Type* type, absl::string_view name);

  llvm::IRBuilder<>* b_;
  llvm::Module* module_;
  std::map<const Computation*, ParameterReader> readers_;
  // Parameters of scalar computations being emitted, in value types.
  std::map<const Computation*, std::vector<llvm::Value*>> scalar_args_;
  const Instruction* unfused_ = nullptr;
  ParameterReader unfused_reader_;
  std::vector<CacheScope> cache_;
  std::map<llvm::Value*, std::pair<int64_t, int64_t>> index_ranges_;
};

}  // namespace hlogym

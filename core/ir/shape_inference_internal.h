// Shared pieces of shape inference (core/ir/shape_inference*.cc): error
// helpers, shape comparisons that ignore layout and dynamism, called-
// computation lookups, the reducer signature check, and one entry point per
// opcode family. Not a public header: use InferShape (shape_inference.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/shape.h"

namespace hlogym::shape_inference_internal {

// abseil here has its own string_view, which StrCat cannot take from a
// std::string_view directly.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Shape text without layout, for messages.
inline std::string S(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
inline absl::string_view TypeName(PrimitiveType type) { return AV(PrimitiveTypeName(type)); }
inline absl::string_view Name(const Instruction& inst) { return AV(OpcodeName(inst.opcode())); }

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

// "{1, 2}" for messages.
std::string List(absl::Span<const int64_t> values);

// Same element type and dimensions, recursively through tuples; layouts and
// dynamism ignored, and an unbounded `?` dimension matches any size (XLA's
// ShapeUtil::Compatible).
bool Compatible(const Shape& a, const Shape& b);
// Same rank and dimension sizes (arrays only); element types ignored.
bool SameDims(const Shape& a, const Shape& b);
// Dimension sizes equal, or either unbounded.
inline bool DimsMatch(int64_t a, int64_t b) {
  return a == b || a == kUnboundedSize || b == kUnboundedSize;
}

absl::Status ExpectArray(const Shape& shape, std::string_view what);
// Operand i of `inst` is an array (the message is built only on failure).
absl::Status ExpectArrayOperand(const Instruction& inst, int64_t i);
// The instruction's declared shape, which the opcode needs because its result
// cannot be computed from operands (reshape, iota, custom-call, ...). It is an
// error when the text left it out (the parser then holds an empty tuple).
// Opcodes whose result may be any shape simply use inst.shape(): the parser
// never asks to infer those.
absl::StatusOr<const Shape*> DeclaredArray(const Instruction& inst);

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count);
absl::Status ExpectOperandCountAtLeast(const Instruction& inst, int64_t count);

// Called computation `index` (role names it in messages: "to_apply", "body").
// Checks that it exists and has a root and gap-free parameters, so callers
// may use root() and parameter(i).
absl::StatusOr<const Computation*> Callee(const Instruction& inst, int64_t index,
                                          std::string_view role);
absl::Status ExpectCalleeCount(const Instruction& inst, int64_t count);
// The callee's parameters match `operands` (count and shapes).
absl::Status CheckCalleeParameters(const Computation& callee,
                                   absl::Span<const Instruction* const> operands,
                                   std::string_view role);

// XLA's reducer rule: a computation (T0..Tn-1, T0..Tn-1) -> T0 (n == 1) or
// (T0..Tn-1), every Ti a scalar; its result types match the init values and
// its second half of parameters match the input element types.
absl::Status CheckReducer(const Computation& reducer, absl::Span<const Shape* const> init_shapes,
                          absl::Span<const PrimitiveType> input_types);
// Result element type i of a reducer that passed CheckReducer.
PrimitiveType ReducerResultType(const Computation& reducer, int64_t i);

// Checked arithmetic on dimension sizes (attributes come from untrusted text).
bool MulOverflows(int64_t a, int64_t b, int64_t* out);
// Number of elements, or -1 when it overflows int64.
int64_t CheckedElementCount(const Shape& shape);

// Attributes of a family, or a default-constructed one when the text wrote
// none (dot without dimension numbers, ...).
template <typename T>
const T& AttrsOr(const Instruction& inst) {
  static const T kDefault{};
  return inst.has_attrs<T>() ? inst.attrs<T>() : kDefault;
}

// The dimension-number list `values` are distinct and in [0, bound).
absl::Status CheckDimensionList(absl::Span<const int64_t> values, int64_t bound,
                                std::string_view what);

// One entry point per family; each handles the opcodes listed in its file.
absl::StatusOr<Shape> InferElementwiseShape(const Instruction& inst);
absl::StatusOr<Shape> InferDataMovementShape(const Instruction& inst);
absl::StatusOr<Shape> InferGatherScatterShape(const Instruction& inst);
absl::StatusOr<Shape> InferContractionShape(const Instruction& inst);
absl::StatusOr<Shape> InferReductionShape(const Instruction& inst);
absl::StatusOr<Shape> InferControlShape(const Instruction& inst);
absl::StatusOr<Shape> InferCollectiveShape(const Instruction& inst);
absl::StatusOr<Shape> InferNumericShape(const Instruction& inst);

// Output shape of a window over `base` (reduce-window, select-and-scatter,
// convolution's spatial dimensions).
absl::StatusOr<Shape> WindowOutputShape(const Shape& base, const Window& window,
                                        PrimitiveType type);

}  // namespace hlogym::shape_inference_internal

// InferShape's dispatch to the opcode families, and the helpers they share.
#include "core/ir/shape_inference.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "core/ir/shape_inference_internal.h"

namespace hlogym {
namespace shape_inference_internal {

std::string List(absl::Span<const int64_t> values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

bool SameDims(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!DimsMatch(a.dim(i), b.dim(i))) return false;
  }
  return true;
}

bool Compatible(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple()) {
    if (a.tuple_size() != b.tuple_size()) return false;
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      if (!Compatible(a.tuple_shape(i), b.tuple_shape(i))) return false;
    }
    return true;
  }
  return SameDims(a, b);
}

absl::Status ExpectArray(const Shape& shape, std::string_view what) {
  if (shape.IsArray()) return absl::OkStatus();
  return Invalid(AV(what), " must be an array, got ", S(shape));
}

absl::Status ExpectArrayOperand(const Instruction& inst, int64_t i) {
  const Shape& shape = inst.operand(i)->shape();
  if (shape.IsArray()) return absl::OkStatus();
  return Invalid(Name(inst), "'s operand ", i, " must be an array, got ", S(shape));
}

absl::StatusOr<const Shape*> DeclaredArray(const Instruction& inst) {
  const Shape& shape = inst.shape();
  if (shape.IsArray()) return &shape;
  if (shape.IsTuple() && shape.tuple_size() == 0) {
    return Invalid(Name(inst), "'s result shape cannot be inferred: it must be written");
  }
  return Invalid(Name(inst), " must produce an array, got ", S(shape));
}

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() == count) return absl::OkStatus();
  return Invalid(Name(inst), " takes ", count, " operand", count == 1 ? "" : "s", ", got ",
                 inst.operand_count());
}

absl::Status ExpectOperandCountAtLeast(const Instruction& inst, int64_t count) {
  if (inst.operand_count() >= count) return absl::OkStatus();
  return Invalid(Name(inst), " takes at least ", count, " operand", count == 1 ? "" : "s",
                 ", got ", inst.operand_count());
}

absl::Status ExpectCalleeCount(const Instruction& inst, int64_t count) {
  const int64_t n = static_cast<int64_t>(inst.called_computations().size());
  if (n == count) return absl::OkStatus();
  return Invalid(Name(inst), " calls ", count, " computation", count == 1 ? "" : "s", ", got ", n);
}

absl::StatusOr<const Computation*> Callee(const Instruction& inst, int64_t index,
                                          std::string_view role) {
  const auto called = inst.called_computations();
  if (index >= static_cast<int64_t>(called.size()) || called[index] == nullptr) {
    return Invalid(Name(inst), " is missing its ", AV(role), " computation");
  }
  const Computation* c = called[index];
  if (c->root() == nullptr) {
    return Invalid(AV(role), " computation `", c->name(), "` has no root");
  }
  for (int64_t i = 0; i < c->parameter_count(); ++i) {
    if (c->parameter(i) == nullptr) {
      return Invalid(AV(role), " computation `", c->name(), "` has no parameter ", i);
    }
  }
  return c;
}

absl::Status CheckCalleeParameters(const Computation& callee,
                                   absl::Span<const Instruction* const> operands,
                                   std::string_view role) {
  const int64_t n = static_cast<int64_t>(operands.size());
  if (callee.parameter_count() != n) {
    return Invalid(AV(role), " computation `", callee.name(), "` takes ", callee.parameter_count(),
                   " parameters but is given ", n, " operands");
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& p = callee.parameter(i)->shape();
    const Shape& o = operands[i]->shape();
    if (!Compatible(p, o)) {
      return Invalid("operand ", i, " does not match parameter ", i, " of ", AV(role),
                     " computation `", callee.name(), "` (expected ", S(p), ", got ", S(o), ")");
    }
  }
  return absl::OkStatus();
}

PrimitiveType ReducerResultType(const Computation& reducer, int64_t i) {
  const Shape& root = reducer.root()->shape();
  return root.IsTuple() ? root.tuple_shape(i).element_type() : root.element_type();
}

absl::Status CheckReducer(const Computation& reducer, absl::Span<const Shape* const> init_shapes,
                          absl::Span<const PrimitiveType> input_types) {
  const int64_t n = static_cast<int64_t>(init_shapes.size());
  auto fail = [&](const auto&... what) {
    return Invalid("reducer `", reducer.name(), "` ", what...);
  };
  if (reducer.parameter_count() != 2 * n) {
    return fail("must take ", 2 * n, " parameters, got ", reducer.parameter_count());
  }
  const Shape& root = reducer.root()->shape();
  if (n == 1 && !root.IsArray() && !(root.IsTuple() && root.tuple_size() == 1)) {
    return fail("must return a scalar, got ", S(root));
  }
  if (n > 1 && (!root.IsTuple() || root.tuple_size() != n)) {
    return fail("must return a tuple of ", n, " scalars, got ", S(root));
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& result = root.IsTuple() ? root.tuple_shape(i) : root;
    if (!result.IsScalar()) return fail("must return scalars, got ", S(root));
    const Shape& accumulator = reducer.parameter(i)->shape();
    if (!Compatible(accumulator, result)) {
      return fail("parameter ", i, " must match its result ", i, " (expected ", S(result),
                  ", got ", S(accumulator), ")");
    }
    if (!Compatible(*init_shapes[i], result)) {
      return fail("result ", i, " must match init value ", i, " (expected ", S(*init_shapes[i]),
                  ", got ", S(result), ")");
    }
    const Shape& element = reducer.parameter(n + i)->shape();
    if (!element.IsScalar() || element.element_type() != input_types[i]) {
      return fail("parameter ", n + i, " must be a scalar of input ", i, "'s type (expected ",
                  TypeName(input_types[i]), "[], got ", S(element), ")");
    }
    if (element.element_type() != result.element_type()) {
      return fail("parameter ", n + i, " must match result ", i, " (expected ", S(result),
                  ", got ", S(element), ")");
    }
  }
  return absl::OkStatus();
}

bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

int64_t CheckedElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dims()) {
    if (d < 0 || MulOverflows(n, d, &n)) return -1;
  }
  return n;
}

absl::Status CheckDimensionList(absl::Span<const int64_t> values, int64_t bound,
                                std::string_view what) {
  // Lists are short (at most the rank), so the pairwise duplicate check is
  // cheaper than a set.
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= bound) {
      return Invalid(AV(what), " ", List(values), ": dimension ", values[i],
                     " is out of range [0, ", bound, ")");
    }
    for (size_t j = 0; j < i; ++j) {
      if (values[j] == values[i]) {
        return Invalid(AV(what), " ", List(values), ": dimension ", values[i], " appears twice");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> WindowOutputShape(const Shape& base, const Window& window,
                                        PrimitiveType type) {
  if (static_cast<int64_t>(window.size()) != base.rank()) {
    return Invalid("the window has ", window.size(), " dimensions but the operand ", S(base),
                   " has rank ", base.rank());
  }
  std::vector<int64_t> dims(window.size());
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDimension& w = window[i];
    if (w.size <= 0 || w.stride <= 0 || w.lhs_dilation <= 0 || w.rhs_dilation <= 0) {
      return Invalid("window dimension ", i, " must have positive size, stride and dilations (size=",
                     w.size, " stride=", w.stride, " lhs_dilate=", w.lhs_dilation,
                     " rhs_dilate=", w.rhs_dilation, ")");
    }
    const int64_t b = base.dim(static_cast<int64_t>(i));
    if (b == kUnboundedSize) {
      dims[i] = kUnboundedSize;
      continue;
    }
    // Everything in __int128: sizes and paddings come from the text.
    const __int128 dilated_base = b == 0 ? 0 : (__int128{b} - 1) * w.lhs_dilation + 1;
    const __int128 padded = dilated_base + w.padding_low + w.padding_high;
    const __int128 dilated_window = (__int128{w.size} - 1) * w.rhs_dilation + 1;
    const __int128 out = padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
    if (out > INT64_MAX) return Invalid("window dimension ", i, " gives an output too large");
    dims[i] = static_cast<int64_t>(out);
  }
  Shape result = Shape::Array(type, std::move(dims));
  for (int64_t i = 0; i < base.rank(); ++i) {
    if (base.is_dynamic_dim(i)) result.set_dynamic_dim(i, true);
  }
  return result;
}

}  // namespace shape_inference_internal

using shape_inference_internal::ExpectOperandCount;
using shape_inference_internal::Invalid;

absl::StatusOr<Shape> InferShape(const Instruction& inst) {
  const Opcode op = inst.opcode();
  const int arity = OpcodeArity(op);
  if (arity >= 0 && inst.operand_count() != arity) {
    return ExpectOperandCount(inst, arity);
  }
  // The switch names every opcode, so a new one fails to compile (-Wswitch)
  // until it is given a family.
  switch (op) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAdd:
    case Opcode::kAnd: case Opcode::kAsin: case Opcode::kAsinh: case Opcode::kAtan:
    case Opcode::kAtan2: case Opcode::kAtanh: case Opcode::kBitcastConvert: case Opcode::kCbrt:
    case Opcode::kCeil: case Opcode::kClamp: case Opcode::kClz: case Opcode::kCompare:
    case Opcode::kComplex: case Opcode::kConvert: case Opcode::kCopy: case Opcode::kCos:
    case Opcode::kCosh: case Opcode::kDivide: case Opcode::kErf: case Opcode::kExp:
    case Opcode::kExpm1: case Opcode::kFloor: case Opcode::kImag: case Opcode::kIsFinite:
    case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic: case Opcode::kMap:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMulhi: case Opcode::kMultiply:
    case Opcode::kNegate: case Opcode::kNot: case Opcode::kOr: case Opcode::kPopulationCount:
    case Opcode::kPower: case Opcode::kReal: case Opcode::kReducePrecision:
    case Opcode::kRemainder: case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt: case Opcode::kSelect: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical: case Opcode::kSign:
    case Opcode::kSin: case Opcode::kSinh: case Opcode::kSqrt: case Opcode::kStochasticConvert:
    case Opcode::kSubtract: case Opcode::kTan: case Opcode::kTanh: case Opcode::kXor:
      return shape_inference_internal::InferElementwiseShape(inst);

    case Opcode::kBitcast: case Opcode::kBroadcast: case Opcode::kConcatenate:
    case Opcode::kDynamicReshape: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kGetDimensionSize: case Opcode::kIota: case Opcode::kPad:
    case Opcode::kReshape: case Opcode::kReverse: case Opcode::kSetDimensionSize:
    case Opcode::kSlice: case Opcode::kTranspose:
      return shape_inference_internal::InferDataMovementShape(inst);

    case Opcode::kGather: case Opcode::kScatter:
      return shape_inference_internal::InferGatherScatterShape(inst);

    case Opcode::kConvolution: case Opcode::kDot: case Opcode::kRaggedDot:
      return shape_inference_internal::InferContractionShape(inst);

    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kScan:
    case Opcode::kSelectAndScatter: case Opcode::kSort: case Opcode::kTopK:
      return shape_inference_internal::InferReductionShape(inst);

    case Opcode::kAddDependency: case Opcode::kAfterAll: case Opcode::kAlternatives:
    case Opcode::kAsyncDone: case Opcode::kAsyncStart: case Opcode::kAsyncUpdate:
    case Opcode::kCall: case Opcode::kConditional: case Opcode::kConstant:
    case Opcode::kCustomCall: case Opcode::kDomain: case Opcode::kFusion:
    case Opcode::kGetTupleElement: case Opcode::kOptimizationBarrier: case Opcode::kParameter:
    case Opcode::kTuple: case Opcode::kWhile:
      return shape_inference_internal::InferControlShape(inst);

    case Opcode::kAllGather: case Opcode::kAllGatherDone: case Opcode::kAllGatherStart:
    case Opcode::kAllReduce: case Opcode::kAllReduceDone: case Opcode::kAllReduceStart:
    case Opcode::kAllToAll: case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteDone: case Opcode::kCollectivePermuteStart:
    case Opcode::kCopyDone: case Opcode::kCopyStart: case Opcode::kInfeed:
    case Opcode::kOutfeed: case Opcode::kPartitionId: case Opcode::kRaggedAllToAll:
    case Opcode::kRecv: case Opcode::kRecvDone: case Opcode::kReduceScatter:
    case Opcode::kReplicaId: case Opcode::kSend: case Opcode::kSendDone:
      return shape_inference_internal::InferCollectiveShape(inst);

    case Opcode::kBatchNormGrad: case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining: case Opcode::kCholesky: case Opcode::kFft:
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
    case Opcode::kTriangularSolve:
      return shape_inference_internal::InferNumericShape(inst);
  }
  return Invalid("unknown opcode ", static_cast<int>(op));
}

}  // namespace hlogym

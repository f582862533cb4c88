// Shape inference of collectives, host transfers and async copies. Several
// results depend on the replica groups and device count, which hlogym does
// not model: those keep their declared shape after the checks that the
// operands allow (same element type and rank, divisible sizes, ...).
#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

absl::Status ExpectArrayOperands(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  for (int64_t i = 0; i < inst.operand_count(); ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  return absl::OkStatus();
}

// The operands' shapes: one array, or a tuple of them when variadic.
Shape OperandShapes(const Instruction& inst) {
  if (inst.operand_count() == 1) return inst.operand(0)->shape();
  std::vector<Shape> shapes;
  shapes.reserve(inst.operand_count());
  for (const Instruction* o : inst.operands()) shapes.push_back(o->shape());
  return Shape::Tuple(std::move(shapes));
}

// Element i of a shape that holds one result per operand (itself when there
// is one operand).
absl::StatusOr<const Shape*> ResultFor(const Instruction& inst, const Shape& results, int64_t i) {
  if (inst.operand_count() == 1 && results.IsArray()) return &results;
  if (!results.IsTuple() || results.tuple_size() != inst.operand_count()) {
    return Invalid(Name(inst), " must produce one array per operand, got ", S(results));
  }
  return &results.tuple_shape(i);
}

// all-reduce's reducer, checked when every operand has one element type.
absl::Status CheckCollectiveReducer(const Instruction& inst) {
  ASSIGN_OR_RETURN(const Computation* reducer, Callee(inst, 0, "to_apply"));
  const PrimitiveType t = inst.operand(0)->shape().element_type();
  for (const Instruction* o : inst.operands()) {
    if (o->shape().element_type() != t) return absl::OkStatus();
  }
  const Shape init = Shape::Scalar(t);
  const Shape* init_ptr = &init;
  return CheckReducer(*reducer, absl::MakeConstSpan(&init_ptr, 1), absl::MakeConstSpan(&t, 1));
}

// all-gather (grow) and reduce-scatter (shrink) along their dimension: the
// declared result keeps the type and rank, and the sizes are multiples.
absl::StatusOr<Shape> InferResizingCollective(const Instruction& inst, const Shape& results,
                                              bool grows) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  if (inst.dimensions().size() != 1) {
    return Invalid(Name(inst), " needs exactly one dimension, got ", List(inst.dimensions()));
  }
  const int64_t d = inst.dimension(0);
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& in = inst.operand(i)->shape();
    ASSIGN_OR_RETURN(const Shape* out, ResultFor(inst, results, i));
    if (d < 0 || d >= in.rank()) {
      return Invalid(Name(inst), " dimension ", d, " is out of range for ", S(in));
    }
    bool ok = out->IsArray() && out->element_type() == in.element_type() && out->rank() == in.rank();
    for (int64_t k = 0; ok && k < in.rank(); ++k) {
      const int64_t small = grows ? in.dim(k) : out->dim(k);
      const int64_t large = grows ? out->dim(k) : in.dim(k);
      ok = k == d ? (small > 0 ? large % small == 0 : large == 0) : DimsMatch(small, large);
    }
    if (!ok) {
      return Invalid(Name(inst), " result ", S(*out), " must match operand ", S(in),
                     " except for a ", grows ? "multiple" : "fraction", " of dimension ", d);
    }
  }
  return results;
}

absl::StatusOr<Shape> InferAllToAll(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperands(inst));
  const Shape& declared = inst.shape();
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& in = inst.operand(i)->shape();
    ASSIGN_OR_RETURN(const Shape* out, ResultFor(inst, declared, i));
    if (!out->IsArray() || out->element_type() != in.element_type() || out->rank() != in.rank() ||
        CheckedElementCount(*out) != CheckedElementCount(in)) {
      return Invalid("all-to-all result ", S(*out), " must keep the element type, rank and size ",
                     "of its operand ", S(in));
    }
  }
  return declared;
}

// `*-start` ops whose shape is (operands, results, context...).
absl::StatusOr<Shape> InferStartTuple(const Instruction& inst) {
  const Shape& declared = inst.shape();
  if (!declared.IsTuple() || declared.tuple_size() < 2 ||
      !Compatible(declared.tuple_shape(0), OperandShapes(inst))) {
    return Invalid(Name(inst), "'s shape must be (", S(OperandShapes(inst)),
                   ", results, ...), got ", S(declared));
  }
  return declared;
}

// `*-done` ops: element `index` of their start's tuple.
absl::StatusOr<Shape> InferDone(const Instruction& inst, int64_t index) {
  const Shape& in = inst.operand(0)->shape();
  if (!in.IsTuple() || in.tuple_size() <= index) {
    return Invalid(Name(inst), " needs the tuple its start op produces, got ", S(in));
  }
  return in.tuple_shape(index);
}

absl::Status ExpectToken(const Instruction& inst, int64_t i) {
  if (inst.operand(i)->shape().IsToken()) return absl::OkStatus();
  return Invalid(Name(inst), "'s operand ", i, " must be a token, got ", S(inst.operand(i)->shape()));
}

}  // namespace

absl::StatusOr<Shape> InferCollectiveShape(const Instruction& inst) {
  const Shape u32 = Shape::Scalar(PrimitiveType::kU32);
  switch (inst.opcode()) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart:
      RETURN_IF_ERROR(ExpectArrayOperands(inst));
      RETURN_IF_ERROR(CheckCollectiveReducer(inst));
      return OperandShapes(inst);
    case Opcode::kAllReduceDone:
      return inst.operand(0)->shape();
    case Opcode::kAllGather:
      return InferResizingCollective(inst, inst.shape(), /*grows=*/true);
    case Opcode::kAllGatherStart: {
      ASSIGN_OR_RETURN(Shape declared, InferStartTuple(inst));
      RETURN_IF_ERROR(InferResizingCollective(inst, declared.tuple_shape(1), true).status());
      return declared;
    }
    case Opcode::kReduceScatter:
      RETURN_IF_ERROR(CheckCollectiveReducer(inst));
      return InferResizingCollective(inst, inst.shape(), /*grows=*/false);
    case Opcode::kAllToAll:
      return InferAllToAll(inst);
    case Opcode::kRaggedAllToAll:
      // (input, output, input offsets, send sizes, output offsets, recv
      // sizes): the result is the output buffer.
      RETURN_IF_ERROR(ExpectArrayOperands(inst));
      return inst.operand(1)->shape();
    case Opcode::kCollectiveBroadcast:
      RETURN_IF_ERROR(ExpectArrayOperands(inst));
      return OperandShapes(inst);
    case Opcode::kCollectivePermute:
      RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
      // One operand keeps its shape; the in-place and combined forms
      // (several operands) say theirs.
      return inst.operand_count() == 1 ? inst.operand(0)->shape() : inst.shape();
    case Opcode::kCollectivePermuteStart: {
      RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
      const Shape& declared = inst.shape();
      if (!declared.IsTuple() || declared.tuple_size() < 2 ||
          !Compatible(declared.tuple_shape(0), inst.operand(0)->shape())) {
        return Invalid("collective-permute-start's shape must be (", S(inst.operand(0)->shape()),
                       ", result, ...), got ", S(declared));
      }
      return declared;
    }
    case Opcode::kAllGatherDone: case Opcode::kCollectivePermuteDone:
      return InferDone(inst, 1);
    case Opcode::kCopyStart: {
      const Shape& declared = inst.shape();
      const Shape& in = inst.operand(0)->shape();
      if (!declared.IsTuple() || declared.tuple_size() < 2 ||
          !Compatible(declared.tuple_shape(0), in) || !Compatible(declared.tuple_shape(1), in)) {
        return Invalid("copy-start's shape must be (", S(in), ", ", S(in), ", context), got ",
                       S(declared));
      }
      return declared;
    }
    case Opcode::kCopyDone:
      return InferDone(inst, 0);
    case Opcode::kPartitionId: case Opcode::kReplicaId:
      return u32;
    case Opcode::kSend:
      RETURN_IF_ERROR(ExpectToken(inst, 1));
      return Shape::Tuple({inst.operand(0)->shape(), u32, Shape::Token()});
    case Opcode::kSendDone:
      return Shape::Token();
    case Opcode::kRecv: {
      RETURN_IF_ERROR(ExpectToken(inst, 0));
      const Shape& declared = inst.shape();
      if (!declared.IsTuple() || declared.tuple_size() != 3 ||
          !declared.tuple_shape(2).IsToken()) {
        return Invalid("recv's shape must be (data, u32[], token), got ", S(declared));
      }
      return declared;
    }
    case Opcode::kRecvDone: {
      ASSIGN_OR_RETURN(Shape data, InferDone(inst, 0));
      return Shape::Tuple({std::move(data), Shape::Token()});
    }
    case Opcode::kInfeed: {
      RETURN_IF_ERROR(ExpectToken(inst, 0));
      const Shape& declared = inst.shape();
      if (!declared.IsTuple() || declared.tuple_size() != 2 ||
          !declared.tuple_shape(1).IsToken()) {
        return Invalid("infeed's shape must be (data, token), got ", S(declared));
      }
      return declared;
    }
    case Opcode::kOutfeed:
      RETURN_IF_ERROR(ExpectToken(inst, 1));
      return Shape::Token();
    default:
      return Invalid("not supported: collective shape inference for ", Name(inst));
  }
}

}  // namespace hlogym::shape_inference_internal

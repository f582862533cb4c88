// Shape inference of structure and control flow: tuples, while, conditional,
// call, fusion, async wrappers, custom-call, alternatives, tokens,
// parameters and constants.
#include "core/ir/shape_inference_internal.h"

namespace hlogym::shape_inference_internal {
namespace {

absl::StatusOr<Shape> InferGetTupleElement(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  const int64_t index = inst.tuple_index();
  if (!in.IsTuple()) return Invalid("get-tuple-element needs a tuple operand, got ", S(in));
  if (index < 0 || index >= in.tuple_size()) {
    return Invalid("get-tuple-element index ", index, " is out of range for ", S(in));
  }
  return in.tuple_shape(index);
}

absl::StatusOr<Shape> InferWhile(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectCalleeCount(inst, 2));
  ASSIGN_OR_RETURN(const Computation* condition, Callee(inst, 0, "condition"));
  ASSIGN_OR_RETURN(const Computation* body, Callee(inst, 1, "body"));
  const Shape& state = inst.operand(0)->shape();
  RETURN_IF_ERROR(CheckCalleeParameters(*condition, inst.operands(), "condition"));
  RETURN_IF_ERROR(CheckCalleeParameters(*body, inst.operands(), "body"));
  const Shape& predicate = condition->root()->shape();
  if (!predicate.IsScalar() || predicate.element_type() != PrimitiveType::kPred) {
    return Invalid("condition computation `", condition->name(), "` must return pred[], got ",
                   S(predicate));
  }
  const Shape& next = body->root()->shape();
  if (!Compatible(next, state)) {
    return Invalid("body computation `", body->name(), "` must return the loop state (expected ",
                   S(state), ", got ", S(next), ")");
  }
  return state;
}

absl::StatusOr<Shape> InferConditional(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
  const Shape& index = inst.operand(0)->shape();
  const int64_t branches = static_cast<int64_t>(inst.called_computations().size());
  if (!index.IsScalar() ||
      (index.element_type() != PrimitiveType::kPred && index.element_type() != PrimitiveType::kS32)) {
    return Invalid("conditional's branch index must be pred[] or s32[], got ", S(index));
  }
  if (index.element_type() == PrimitiveType::kPred && branches != 2) {
    return Invalid("conditional with a pred index needs 2 branches, got ", branches);
  }
  if (branches < 1) return Invalid("conditional needs at least one branch");
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1 + branches));
  const Shape* result = nullptr;
  for (int64_t b = 0; b < branches; ++b) {
    const std::string role = absl::StrCat("branch ", b);
    ASSIGN_OR_RETURN(const Computation* branch, Callee(inst, b, role));
    const Instruction* operand = inst.operand(1 + b);
    RETURN_IF_ERROR(CheckCalleeParameters(*branch, absl::MakeConstSpan(&operand, 1), role));
    const Shape& out = branch->root()->shape();
    if (result == nullptr) {
      result = &out;
    } else if (!Compatible(out, *result)) {
      return Invalid("conditional branches must return the same shape (expected ", S(*result),
                     " as branch 0, got ", S(out), " from branch ", b, ")");
    }
  }
  return *result;
}

// call and fusion: the callee's parameters take the operands; its root is
// the result.
absl::StatusOr<Shape> InferCall(const Instruction& inst, std::string_view role) {
  RETURN_IF_ERROR(ExpectCalleeCount(inst, 1));
  ASSIGN_OR_RETURN(const Computation* callee, Callee(inst, 0, role));
  RETURN_IF_ERROR(CheckCalleeParameters(*callee, inst.operands(), role));
  return callee->root()->shape();
}

// async-start's shape is ((operands...), outputs, state...).
absl::StatusOr<Shape> InferAsyncStart(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectCalleeCount(inst, 1));
  ASSIGN_OR_RETURN(const Computation* wrapped, Callee(inst, 0, "async"));
  RETURN_IF_ERROR(CheckCalleeParameters(*wrapped, inst.operands(), "async"));
  const Shape& declared = inst.shape();
  if (!declared.IsTuple() || declared.tuple_size() < 2 || !declared.tuple_shape(0).IsTuple() ||
      declared.tuple_shape(0).tuple_size() != inst.operand_count()) {
    return Invalid("async-start's shape must be ((", inst.operand_count(),
                   " operands), outputs, state...), got ", S(declared));
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!Compatible(declared.tuple_shape(0).tuple_shape(i), inst.operand(i)->shape())) {
      return Invalid("async-start's shape must list operand ", i, " (expected ",
                     S(inst.operand(i)->shape()), ", got ",
                     S(declared.tuple_shape(0).tuple_shape(i)), ")");
    }
  }
  if (!Compatible(declared.tuple_shape(1), wrapped->root()->shape())) {
    return Invalid("async-start's output must be what `", wrapped->name(), "` returns (expected ",
                   S(wrapped->root()->shape()), ", got ", S(declared.tuple_shape(1)), ")");
  }
  return declared;
}

// The operand of async-update/-done: an async-start or -update result.
absl::StatusOr<const Shape*> AsyncOperand(const Instruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  const Opcode producer = inst.operand(0)->opcode();
  if ((producer != Opcode::kAsyncStart && producer != Opcode::kAsyncUpdate) || !in.IsTuple() ||
      in.tuple_size() < 2) {
    return Invalid(Name(inst), " needs an async-start or async-update operand, got ",
                   AV(OpcodeName(producer)), " ", S(in));
  }
  return &in;
}

absl::StatusOr<Shape> InferCustomCall(const Instruction& inst) {
  // The target decides the result; only the called computations can be
  // checked here.
  for (int64_t i = 0; i < static_cast<int64_t>(inst.called_computations().size()); ++i) {
    RETURN_IF_ERROR(Callee(inst, i, "called").status());
  }
  return inst.shape();
}

absl::StatusOr<Shape> InferConstant(const Instruction& inst) {
  if (!inst.has_attrs<ConstantAttrs>()) return Invalid("constant has no literal");
  const Shape& literal = inst.literal().shape();
  if (!Compatible(literal, inst.shape())) {
    return Invalid("constant's literal does not match its shape (expected ", S(inst.shape()),
                   ", got ", S(literal), ")");
  }
  return inst.shape();
}

}  // namespace

absl::StatusOr<Shape> InferControlShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      elements.reserve(inst.operand_count());
      for (const Instruction* o : inst.operands()) elements.push_back(o->shape());
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: return InferGetTupleElement(inst);
    case Opcode::kWhile: return InferWhile(inst);
    case Opcode::kConditional: return InferConditional(inst);
    case Opcode::kCall: return InferCall(inst, "to_apply");
    case Opcode::kFusion: return InferCall(inst, "fused");
    case Opcode::kAsyncStart: return InferAsyncStart(inst);
    case Opcode::kAsyncUpdate: {
      ASSIGN_OR_RETURN(const Shape* in, AsyncOperand(inst));
      return *in;
    }
    case Opcode::kAsyncDone: {
      ASSIGN_OR_RETURN(const Shape* in, AsyncOperand(inst));
      return in->tuple_shape(1);
    }
    case Opcode::kCustomCall: return InferCustomCall(inst);
    case Opcode::kAlternatives: {
      RETURN_IF_ERROR(ExpectOperandCountAtLeast(inst, 1));
      const Shape& original = inst.operand(0)->shape();
      for (int64_t i = 1; i < inst.operand_count(); ++i) {
        if (!Compatible(inst.operand(i)->shape(), original)) {
          return Invalid("alternatives candidate ", i, " `", inst.operand(i)->name(),
                         "` must have the original's shape (expected ", S(original), ", got ",
                         S(inst.operand(i)->shape()), ")");
        }
      }
      return original;
    }
    case Opcode::kOptimizationBarrier: case Opcode::kDomain:
      return inst.operand(0)->shape();
    case Opcode::kAddDependency:
      if (!inst.operand(1)->shape().IsToken()) {
        return Invalid("add-dependency's second operand must be a token, got ",
                       S(inst.operand(1)->shape()));
      }
      return inst.operand(0)->shape();
    case Opcode::kAfterAll:
      for (const Instruction* o : inst.operands()) {
        if (!o->shape().IsToken()) {
          return Invalid("after-all's operands must be tokens, `", o->name(), "` is ",
                         S(o->shape()));
        }
      }
      return Shape::Token();
    case Opcode::kParameter:
      return inst.shape();
    case Opcode::kConstant:
      return InferConstant(inst);
    default:
      return Invalid("not supported: control shape inference for ", Name(inst));
  }
}

}  // namespace hlogym::shape_inference_internal

#include "core/passes/fusion_emittable.h"

#include <algorithm>
#include <array>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

absl::Status NotEmittable(const Computation& fused, const Instruction* inst,
                          const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "fusion computation `", fused.name(), "` is not emittable",
      inst != nullptr ? absl::StrCat(" at `", inst->name(), "`") : "", ": ", why));
}

// The dimensions a reduce hero reads (its first input's) and reduces.
struct HeroSignature {
  const Shape* input = nullptr;
  absl::InlinedVector<int64_t, 6> dims;
  int64_t output_elements = 0;
};

}  // namespace

bool IsEmittableElementType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

bool IsEmittableArray(const Shape& shape) {
  // Every emittable element type is an array's: the type, tested first (the
  // cheapest, asked of every shape of every dry-pass candidate), implies
  // IsArray().
  return IsEmittableElementType(shape.element_type()) && shape.is_static();
}

namespace {

// Whether an op of opcode `op` is elemental, for the opcodes where that does
// not depend on the instruction (all but bitcast-convert and reduce-window).
bool IsElementalOpcode(Opcode op) {
  if (IsElementwise(op)) return true;
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kReverse: case Opcode::kIota: case Opcode::kGather:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsElementalOp(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kBitcastConvert) {
    return inst.operand_count() == 1 &&
           BitWidth(inst.operand(0)->shape().element_type()) ==
               BitWidth(inst.shape().element_type());
  }
  if (op == Opcode::kReduceWindow) {
    // A variadic one is not an op the fusion passes take: CheckEmittableFusion
    // accepts it read by element, as a lowering builds it.
    return inst.shape().IsArray();
  }
  // IsElementalOpcode as a table, made once (read-only after): the
  // emittability check asks about each op of every dry-pass candidate, and
  // the switches behind IsElementwise were half of this function's cost.
  static const std::array<bool, kNumOpcodes> kElemental = [] {
    std::array<bool, kNumOpcodes> table{};
    for (int i = 0; i < kNumOpcodes; ++i) table[i] = IsElementalOpcode(static_cast<Opcode>(i));
    return table;
  }();
  return kElemental[static_cast<size_t>(op)];
}

bool IsEpilogueOp(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kBitcast || op == Opcode::kReshape) return true;
  return IsElementwise(op) && IsElementalOp(inst);
}

bool IsEffectiveScalar(const Shape& shape) {
  if (!shape.IsArray()) return false;
  return std::all_of(shape.dims().begin(), shape.dims().end(),
                     [](int64_t d) { return d == 1; });
}

absl::StatusOr<FusionKind> CheckEmittableFusion(const Computation& fused) {
  if (fused.root() == nullptr) return NotEmittable(fused, nullptr, "it has no root");
  // Reused per thread: this runs for fusions by the hundred an env step (the
  // check itself never comes back here).
  thread_local std::vector<Instruction*> order;
  fused.MakePostOrder(order);
  return CheckEmittableFusion(fused, order);
}

absl::StatusOr<FusionKind> CheckEmittableFusion(const Computation& fused,
                                                absl::Span<Instruction* const> order) {
  const Instruction* root = fused.root();
  if (root == nullptr) return NotEmittable(fused, nullptr, "it has no root");

  // Pass 1: every instruction is something the emitter computes.
  // Inline: this runs once per dry-pass candidate.
  absl::InlinedVector<const Instruction*, 4> heroes;
  for (const Instruction* inst : order) {
    const Opcode op = inst->opcode();
    if (op == Opcode::kTuple) {
      if (inst != root) return NotEmittable(fused, inst, "a tuple that is not the root");
      for (const Instruction* operand : inst->operands()) {
        if (!IsEmittableArray(operand->shape())) {
          return NotEmittable(fused, inst, "a root tuple element is not an emittable array");
        }
      }
      continue;
    }
    if (op == Opcode::kReduce) {
      const int64_t n = inst->operand_count() / 2;
      if (n == 0 || inst->operand_count() != 2 * n || inst->called_computations().empty()) {
        return NotEmittable(fused, inst, "a malformed reduce");
      }
      for (const Instruction* operand : inst->operands()) {
        if (!IsEmittableArray(operand->shape())) {
          return NotEmittable(fused, inst, "a reduce operand is not an emittable array");
        }
      }
      // A variadic reduce (argmax) is the root, or is read through
      // get-tuple-element; either way its results are arrays.
      const Shape& shape = inst->shape();
      bool ok = IsEmittableArray(shape);
      if (shape.IsTuple()) {
        ok = shape.tuple_size() == n &&
             std::all_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(),
                         [](const Shape& s) { return IsEmittableArray(s); });
        for (const Instruction* user : inst->users()) {
          ok &= user->opcode() == Opcode::kGetTupleElement;
        }
      }
      if (!ok) return NotEmittable(fused, inst, "a reduce result that is not an emittable array");
      heroes.push_back(inst);
      continue;
    }
    if (op == Opcode::kReduceWindow && inst->shape().IsTuple()) {
      // A variadic reduce-window (select-and-scatter's lowering picks a
      // value and its position) computes its elements together; users read
      // them through get-tuple-element. Not a hero: each output element
      // folds its own window, as a loop kernel does.
      const int64_t n = inst->operand_count() / 2;
      bool ok = n > 0 && inst->operand_count() == 2 * n && !inst->called_computations().empty() &&
                inst->shape().tuple_size() == n;
      for (const Instruction* operand : inst->operands()) ok &= IsEmittableArray(operand->shape());
      for (const Shape& s : inst->shape().tuple_shapes()) ok &= IsEmittableArray(s);
      for (const Instruction* user : inst->users()) {
        ok &= user->opcode() == Opcode::kGetTupleElement;
      }
      if (!ok) return NotEmittable(fused, inst, "a variadic reduce-window not read by element");
      continue;
    }
    if (op == Opcode::kGetTupleElement) {
      const Opcode of = inst->operand(0)->opcode();
      if ((of != Opcode::kReduce && of != Opcode::kReduceWindow) ||
          !IsEmittableArray(inst->shape())) {
        return NotEmittable(fused, inst,
                            "a get-tuple-element not of a variadic reduce or reduce-window");
      }
      continue;
    }
    if (!IsEmittableArray(inst->shape())) {
      return NotEmittable(fused, inst,
                          absl::StrCat("shape ", inst->shape().ToString(false),
                                       " is not a static array of an emittable type"));
    }
    if (op == Opcode::kParameter) continue;
    if (op == Opcode::kConstant) {
      if (!IsEffectiveScalar(inst->shape())) {
        return NotEmittable(fused, inst, "a constant that is not an effective scalar");
      }
      continue;
    }
    if (!IsElementalOp(*inst)) {
      return NotEmittable(fused, inst,
                          absl::StrCat("`", std::string(OpcodeName(op)), "` is not an elemental op"));
    }
  }

  // Outputs: the root tuple's elements, a variadic reduce's, or the root.
  absl::InlinedVector<const Instruction*, 4> outputs;
  int64_t output_count = 1;
  if (root->opcode() == Opcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
    output_count = root->operand_count();
  } else if (root->shape().IsTuple()) {
    output_count = root->shape().tuple_size();  // a variadic reduce root
  } else {
    outputs.push_back(root);
  }
  if (output_count == 0) return NotEmittable(fused, root, "it has no outputs");
  if (fused.parameter_count() + output_count > kMaxKernelBuffers) {
    return NotEmittable(fused, nullptr,
                        absl::StrCat(fused.parameter_count(), " operands and ", output_count,
                                     " outputs exceed ", kMaxKernelBuffers, " buffers"));
  }

  if (heroes.empty()) {
    const int64_t elements = outputs.front()->shape().element_count();
    for (const Instruction* out : outputs) {
      if (out->shape().element_count() != elements) {
        return NotEmittable(fused, out, "loop fusion outputs of different sizes");
      }
    }
    return FusionKind::kLoop;
  }

  // Pass 2: the heroes agree, and nothing but epilogue ops follows them.
  HeroSignature sig;
  sig.input = &heroes.front()->operand(0)->shape();
  sig.dims.assign(heroes.front()->dimensions().begin(), heroes.front()->dimensions().end());
  std::sort(sig.dims.begin(), sig.dims.end());
  sig.output_elements = sig.input->element_count();
  for (int64_t d : sig.dims) {
    if (d < 0 || d >= sig.input->rank()) return NotEmittable(fused, heroes.front(), "bad dims");
    if (sig.input->dim(d) != 0) sig.output_elements /= sig.input->dim(d);
  }
  absl::flat_hash_set<const Instruction*> after_hero;
  for (const Instruction* inst : order) {
    bool depends = false;
    for (const Instruction* operand : inst->operands()) depends |= after_hero.contains(operand);
    if (inst->opcode() == Opcode::kReduce) {
      if (depends) return NotEmittable(fused, inst, "a reduce reads another reduce's result");
      for (int64_t i = 0; i < inst->operand_count() / 2; ++i) {
        if (!inst->operand(i)->shape().SameDimensions(*sig.input)) {
          return NotEmittable(fused, inst, "reduces over inputs of different dimensions");
        }
      }
      absl::InlinedVector<int64_t, 6> dims(inst->dimensions().begin(), inst->dimensions().end());
      std::sort(dims.begin(), dims.end());
      if (dims != sig.dims) return NotEmittable(fused, inst, "reduces over different dimensions");
      after_hero.insert(inst);
      continue;
    }
    if (!depends) continue;
    after_hero.insert(inst);
    if (inst->opcode() == Opcode::kTuple || inst->opcode() == Opcode::kGetTupleElement) continue;
    if (!IsEpilogueOp(*inst)) {
      return NotEmittable(fused, inst,
                          absl::StrCat("`", std::string(OpcodeName(inst->opcode())),
                                       "` after a reduce is not an epilogue op"));
    }
    if (inst->shape().element_count() != sig.output_elements) {
      return NotEmittable(fused, inst, "an epilogue op with a different element count");
    }
  }
  for (const Instruction* out : outputs) {
    if (!after_hero.contains(out) &&
        out->shape().element_count() != sig.input->element_count()) {
      return NotEmittable(fused, out, "a side output not the size of the reduce input");
    }
  }
  return FusionKind::kInput;
}

}  // namespace hlogym

#include "core/passes/fusion_legality.h"

#include <algorithm>

#include "core/ir/computation.h"

namespace hlogym {
namespace {

bool IsDataMovement(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kConcatenate: case Opcode::kPad: case Opcode::kReverse:
    case Opcode::kIota: case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool ContainsReduce(const Instruction& inst) {
  if (inst.opcode() == Opcode::kReduce) return true;
  if (inst.opcode() != Opcode::kFusion || inst.called_computations().empty()) return false;
  const Computation* fused = inst.fused_computation();
  return std::any_of(fused->instructions().begin(), fused->instructions().end(),
                     [](const auto& i) { return i->opcode() == Opcode::kReduce; });
}

int64_t FusedSize(const Instruction& inst) {
  if (inst.opcode() != Opcode::kFusion || inst.called_computations().empty()) return 1;
  return inst.fused_computation()->instruction_count();
}

}  // namespace

bool IsLoopFusible(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kFusion) {
    return inst.has_attrs<FusionAttrs>() && inst.fusion_kind() == FusionKind::kLoop;
  }
  if (!inst.shape().IsArray()) return false;
  if (op == Opcode::kRngBitGenerator || op == Opcode::kRng) return false;
  return IsElementwise(op) || op == Opcode::kCompare || IsDataMovement(op);
}

bool IsReductionHero(const Instruction& inst) {
  if (inst.opcode() == Opcode::kReduce) return inst.shape().IsArray() || inst.shape().IsTuple();
  return inst.opcode() == Opcode::kFusion && inst.has_attrs<FusionAttrs>() &&
         inst.fusion_kind() == FusionKind::kInput && ContainsReduce(inst);
}

bool IsExpensive(const Instruction& inst) {
  if (inst.opcode() == Opcode::kFusion && !inst.called_computations().empty()) {
    for (const auto& i : inst.fused_computation()->instructions()) {
      if (IsExpensive(*i)) return true;
    }
    return false;
  }
  switch (inst.opcode()) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kErf: case Opcode::kPower:
    case Opcode::kSin: case Opcode::kCos: case Opcode::kTan: case Opcode::kAtan2:
    case Opcode::kDivide: case Opcode::kRemainder: case Opcode::kSqrt: case Opcode::kRsqrt:
    case Opcode::kCbrt:
      return true;
    default:
      return false;
  }
}

bool CanFuse(const Instruction& producer, const Instruction& consumer, FusionMode mode) {
  if (producer.parent() != consumer.parent() || producer.parent()->IsFusionComputation()) {
    return false;
  }
  // The producer must be a loop kernel: reductions stay heroes, never inputs
  // of another kernel's loop (no epilogues after a reduce here).
  if (!IsLoopFusible(producer) || ContainsReduce(producer)) return false;
  // Constants are fused only as scalars (big ones stay buffers, as in XLA).
  if (producer.opcode() == Opcode::kConstant && !producer.shape().IsScalar()) return false;
  if (!IsLoopFusible(consumer) && !IsReductionHero(consumer)) return false;
  if (consumer.opcode() == Opcode::kReduce && consumer.shape().IsTuple() &&
      mode == FusionMode::kXla) {
    return false;  // XLA leaves variadic reductions (argmax) unfused here
  }
  if (mode == FusionMode::kGeneral) return true;

  // XLA's heuristics: do not duplicate expensive producers or large fusions,
  // and stay within the operand budget.
  if (producer.user_count() > 1 && (IsExpensive(producer) || FusedSize(producer) > 8)) {
    return false;
  }
  const int64_t operands = producer.operand_count() + consumer.operand_count() - 1;
  return operands <= kMaxFusionOperands;
}

}  // namespace hlogym

#include "core/passes/fusion_analysis.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/ir/computation.h"
#include "core/passes/fusion_emittable.h"

namespace hlogym {
namespace {

bool IsF32OrF16(const Shape& shape) {
  return shape.element_type() == PrimitiveType::kF32 ||
         shape.element_type() == PrimitiveType::kF16;
}

bool IsEffectiveScalarConstant(const Instruction& inst) {
  const Instruction* c = &inst;
  if (c->opcode() == Opcode::kBroadcast) c = c->operand(0);
  return c->opcode() == Opcode::kConstant && IsEffectiveScalar(c->shape());
}

bool PlainIsExpensive(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kBitcast:
    case Opcode::kBitcastConvert: case Opcode::kBroadcast: case Opcode::kCeil:
    case Opcode::kClamp: case Opcode::kClz: case Opcode::kCompare:
    case Opcode::kComplex: case Opcode::kConcatenate: case Opcode::kConstant:
    case Opcode::kConvert: case Opcode::kCopy: case Opcode::kDynamicReshape:
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kFloor:
    case Opcode::kGetDimensionSize: case Opcode::kGetTupleElement: case Opcode::kImag:
    case Opcode::kIota: case Opcode::kIsFinite: case Opcode::kMaximum:
    case Opcode::kMinimum: case Opcode::kMultiply: case Opcode::kMulhi:
    case Opcode::kNegate: case Opcode::kNot: case Opcode::kOr: case Opcode::kXor:
    case Opcode::kPad: case Opcode::kPopulationCount: case Opcode::kReal:
    case Opcode::kReducePrecision: case Opcode::kReshape: case Opcode::kReverse:
    case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven: case Opcode::kSelect:
    case Opcode::kSetDimensionSize: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
    case Opcode::kSlice: case Opcode::kSubtract: case Opcode::kTranspose:
    case Opcode::kTuple:
      return false;
    case Opcode::kAbs: case Opcode::kCos: case Opcode::kSign: case Opcode::kSin:
      return IsComplex(inst.shape().element_type());
    case Opcode::kDivide: case Opcode::kRemainder:
      if (IsInteger(inst.shape().element_type())) {
        return !IsEffectiveScalarConstant(*inst.operand(1));
      }
      // XLA:GPU: f32/f16 division is cheap.
      return !(inst.opcode() == Opcode::kDivide && IsF32OrF16(inst.shape()));
    case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kExp:
      return !IsF32OrF16(inst.shape());
    default:
      return true;
  }
}

bool PlainIsTransposing(const Instruction& inst) {
  if (inst.opcode() != Opcode::kTranspose || inst.operand_count() != 1) return false;
  const Shape& in = inst.operand(0)->shape();
  int64_t last = -1;
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= in.rank() || in.dim(d) == 1) continue;
    if (d < last) return true;
    last = d;
  }
  return false;
}

// XLA's OperandElementUse: does `user` read some element of operand j twice?
bool ReusesOperand(const Instruction& user, int64_t j) {
  switch (user.opcode()) {
    case Opcode::kBitcast: case Opcode::kConcatenate: case Opcode::kReshape:
    case Opcode::kReverse: case Opcode::kSlice: case Opcode::kTranspose:
    case Opcode::kTuple: case Opcode::kGetTupleElement:
      return false;
    case Opcode::kPad:
      return j > 0;  // the padding value
    case Opcode::kReduce:
      return j >= user.operand_count() / 2;  // the init values
    case Opcode::kDynamicUpdateSlice:
      return j >= 2;
    case Opcode::kDynamicSlice:
      return j >= 1;
    default:
      return !IsElementwise(user.opcode());
  }
}

void AnalyzeOp(const Instruction& inst, FusibleInfo& info) {
  ++info.size;
  const Opcode op = inst.opcode();
  if (op == Opcode::kReduce && inst.operand_count() >= 2) {
    const Shape& in = inst.operand(0)->shape();
    // A row reduction reduces the minor-most dimension.
    const bool row = in.rank() == 0 || std::find(inst.dimensions().begin(), inst.dimensions().end(),
                                                 in.rank() - 1) != inst.dimensions().end();
    for (int64_t i = 0; i < inst.operand_count() / 2; ++i) {
      const int64_t bytes = ByteWidth(inst.operand(i)->shape().element_type());
      ++info.reduction_outputs;
      info.reduction_shared_bytes += row ? 32 * bytes : 2 * 32 * 33 * bytes;
    }
  }
  if (op == Opcode::kReduce && !info.has_reduce) {
    info.has_reduce = true;
    info.hero_input = &inst.operand(0)->shape();
    info.hero_dims.assign(inst.dimensions().begin(), inst.dimensions().end());
    std::sort(info.hero_dims.begin(), info.hero_dims.end());
  }
  info.expensive |= PlainIsExpensive(inst);
  info.has_in_place |= op == Opcode::kDynamicUpdateSlice;
  info.transposing |= PlainIsTransposing(inst);
  info.simple_epilogue &= op == Opcode::kConvert || op == Opcode::kBitcast ||
                          op == Opcode::kReshape || op == Opcode::kCopy;
}

FusibleInfo Analyze(const Instruction& inst) {
  FusibleInfo info;
  if (inst.parent() == nullptr || inst.parent()->IsFusionComputation()) return info;
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return info;
  info.multi_output = inst.shape().IsTuple();
  info.simple_epilogue = true;
  const Opcode op = inst.opcode();
  if (op == Opcode::kFusion) {
    if (!inst.has_attrs<FusionAttrs>() || inst.called_computations().empty()) return info;
    const FusionKind kind = inst.fusion_kind();
    if (kind != FusionKind::kLoop && kind != FusionKind::kInput) return info;
    const Computation* body = inst.fused_computation();
    if (!CheckEmittableFusion(*body).ok()) return info;
    for (const auto& inner : body->instructions()) {
      const Opcode inner_op = inner->opcode();
      if (inner_op == Opcode::kParameter || inner_op == Opcode::kTuple ||
          inner_op == Opcode::kGetTupleElement) {
        continue;
      }
      AnalyzeOp(*inner, info);
    }
    info.is_fusion = true;
  } else {
    if (op == Opcode::kParameter) return info;
    for (const Instruction* operand : inst.operands()) {
      if (!IsEmittableArray(operand->shape())) return info;
    }
    if (op == Opcode::kConstant) {
      if (!IsEffectiveScalar(inst.shape()) || !IsEmittableArray(inst.shape())) return info;
    } else if (op == Opcode::kReduce) {
      if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0 ||
          inst.called_computations().empty()) {
        return info;
      }
      if (inst.shape().IsTuple()) {
        for (const Shape& s : inst.shape().tuple_shapes()) {
          if (!IsEmittableArray(s)) return info;
        }
      } else if (!IsEmittableArray(inst.shape())) {
        return info;
      }
    } else if (!IsElementalOp(inst) || !IsEmittableArray(inst.shape())) {
      return info;
    }
    AnalyzeOp(inst, info);
  }
  if (info.has_reduce) {
    info.iteration_elements = info.hero_input->element_count();
  } else {
    const Shape& out = inst.shape().IsTuple() ? inst.shape().tuple_shape(0) : inst.shape();
    info.iteration_elements = out.element_count();
  }
  info.fusible = true;
  return info;
}

}  // namespace

std::vector<Computation*> FusibleComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> embedded;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
        case Opcode::kFusion: case Opcode::kAsyncStart:
          break;
        default:
          for (const Computation* callee : inst->called_computations()) embedded.insert(callee);
      }
    }
  }
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation() && !embedded.contains(c.get())) computations.push_back(c.get());
  }
  return computations;
}

bool IsExpensive(const Instruction& inst) {
  if (inst.opcode() == Opcode::kFusion) {
    if (inst.called_computations().empty()) return true;
    for (const auto& inner : inst.fused_computation()->instructions()) {
      if (inner->opcode() != Opcode::kParameter && IsExpensive(*inner)) return true;
    }
    return false;
  }
  return PlainIsExpensive(inst);
}

bool IsPhysicallyTransposing(const Instruction& inst) {
  if (inst.opcode() == Opcode::kFusion) {
    if (inst.called_computations().empty()) return false;
    for (const auto& inner : inst.fused_computation()->instructions()) {
      if (PlainIsTransposing(*inner)) return true;
    }
    return false;
  }
  return PlainIsTransposing(inst);
}

bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index) {
  if (operand_index < 0 || operand_index >= consumer.operand_count()) return false;
  if (consumer.opcode() != Opcode::kFusion) return ReusesOperand(consumer, operand_index);
  if (consumer.called_computations().empty()) return true;
  const Computation* body = consumer.fused_computation();
  if (operand_index >= body->parameter_count()) return true;
  // Follow the parameter's value through the body.
  absl::flat_hash_set<const Instruction*> visited;
  std::vector<const Instruction*> stack = {body->parameter(operand_index)};
  while (!stack.empty()) {
    const Instruction* value = stack.back();
    stack.pop_back();
    if (!visited.insert(value).second) continue;
    for (const Instruction* user : value->users()) {
      for (int64_t j = 0; j < user->operand_count(); ++j) {
        if (user->operand(j) == value && ReusesOperand(*user, j)) return true;
      }
      stack.push_back(user);
    }
  }
  return false;
}

FusionAnalysis::FusionAnalysis(Module& module, bool dry)
    // Ids only grow (Module::NextUniqueId), so one id splits old from new.
    : dry_(dry),
      first_new_id_(dry ? module.NextUniqueId() : std::numeric_limits<int64_t>::max()) {}

std::vector<Instruction*> FusionAnalysis::Users(const Instruction& inst) const {
  std::vector<Instruction*> users;
  for (Instruction* user : inst.users()) {
    if (IsOriginal(*user)) users.push_back(user);
  }
  return users;
}

int64_t FusionAnalysis::UserCount(const Instruction& inst) const {
  int64_t n = 0;
  for (const Instruction* user : inst.users()) n += IsOriginal(*user);
  return n;
}

const FusibleInfo& FusionAnalysis::Info(const Instruction* inst) {
  auto it = cache_.find(inst);
  if (it != cache_.end()) return it->second;
  return cache_.emplace(inst, Analyze(*inst)).first->second;
}

}  // namespace hlogym

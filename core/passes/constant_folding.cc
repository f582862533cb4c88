#include "core/passes/constant_folding.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "core/base/status_macros.h"
#include "core/eval/interpreter.h"

namespace hlogym {
namespace {

bool FoldableOpcode(Opcode op) {
  switch (op) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kBroadcast:
    case Opcode::kIota: case Opcode::kTuple: case Opcode::kWhile: case Opcode::kConditional:
    case Opcode::kCall: case Opcode::kFusion: case Opcode::kCustomCall: case Opcode::kMap:
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
    case Opcode::kAlternatives: case Opcode::kAfterAll: case Opcode::kAddDependency:
    case Opcode::kDomain: case Opcode::kOptimizationBarrier: case Opcode::kFft:
    case Opcode::kAllGather: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllToAll: case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
    case Opcode::kRaggedAllToAll: case Opcode::kReduceScatter: case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate: case Opcode::kAsyncDone: case Opcode::kCopyStart:
    case Opcode::kCopyDone: case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kSetDimensionSize: case Opcode::kDynamicReshape: case Opcode::kScan:
      return false;
    default:
      return !HasSideEffect(op);
  }
}

// Values known during one run: constants, and in dry mode what the run
// folded (apply mode replaces those by constants, which are found directly).
class KnownValues {
 public:
  // The value of `inst`, or null.
  const Literal* Of(const Instruction* inst) const {
    if (inst->opcode() == Opcode::kConstant) {
      return inst->literal().is_elided() ? nullptr : &inst->literal();
    }
    auto it = folded_.find(inst);
    return it == folded_.end() ? nullptr : &it->second;
  }
  // The one value every element of `inst` holds, as a scalar literal, when
  // `inst` is a scalar constant or a broadcast of one.
  const Literal* ScalarOf(const Instruction* inst) const {
    if (inst->shape().IsScalar()) return Of(inst);
    if (inst->opcode() == Opcode::kBroadcast && inst->operand(0)->shape().IsScalar()) {
      return Of(inst->operand(0));
    }
    auto it = folded_scalars_.find(inst);
    return it == folded_scalars_.end() ? nullptr : &it->second;
  }
  void Fold(const Instruction* inst, Literal value) { folded_.emplace(inst, std::move(value)); }
  void FoldScalar(const Instruction* inst, Literal value) {
    folded_scalars_.emplace(inst, std::move(value));
  }

 private:
  absl::node_hash_map<const Instruction*, Literal> folded_;
  absl::node_hash_map<const Instruction*, Literal> folded_scalars_;
};

// Evaluates `inst` with result shape `shape` over constant operand values.
absl::StatusOr<Literal> EvaluateAlone(const Instruction& inst, const Shape& shape,
                                      const std::vector<const Literal*>& operand_values) {
  Computation scratch("constant_folding");
  std::vector<Instruction*> operands;
  for (const Literal* value : operand_values) {
    operands.push_back(scratch.AddInstruction(Instruction::CreateConstant(*value)));
  }
  scratch.set_root(scratch.AddInstruction(inst.CloneWithNewOperands(shape, operands)));
  return EvaluateComputation(scratch, {});
}

bool WithinLimits(const Instruction& inst) {
  if (inst.shape().element_count() > kMaxFoldedElements) return false;
  int64_t operand_elements = 0;
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) return false;
    operand_elements += operand->shape().element_count();
  }
  return operand_elements <= kMaxFoldedElements;
}

}  // namespace

absl::StatusOr<bool> ConstantFoldingPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation()) computations.push_back(c.get());
  }
  KnownValues known;
  for (Computation* computation : computations) {
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst) || !FoldableOpcode(inst->opcode()) ||
          inst->operand_count() == 0 || !inst->shape().IsArray() ||
          !inst->control_predecessors().empty() || !inst->control_successors().empty()) {
        continue;
      }
      // Elementwise over splats: fold one element, broadcast it.
      std::vector<const Literal*> scalars;
      if (IsElementwise(inst->opcode()) && inst->opcode() != Opcode::kBitcastConvert &&
          inst->shape().rank() > 0) {
        for (const Instruction* operand : inst->operands()) {
          const Literal* s = known.ScalarOf(operand);
          if (s == nullptr) break;
          scalars.push_back(s);
        }
      }
      if (!scalars.empty() && scalars.size() == static_cast<size_t>(inst->operand_count())) {
        const Shape scalar_shape = Shape::Scalar(inst->shape().element_type());
        absl::StatusOr<Literal> value = EvaluateAlone(*inst, scalar_shape, scalars);
        if (!value.ok()) continue;  // unsupported: leave it unfolded
        if (rewriter.dry()) known.FoldScalar(inst, *value);
        Instruction* constant =
            rewriter.Add(computation, Instruction::CreateConstant(*std::move(value)));
        constant->mutable_shape() = scalar_shape;
        Instruction* splat = rewriter.Add(
            computation, Instruction::Create(Opcode::kBroadcast, inst->shape(), {constant}));
        RETURN_IF_ERROR(rewriter.Replace(inst, splat));
        changed = true;
        continue;
      }
      if (!WithinLimits(*inst)) continue;
      std::vector<const Literal*> values;
      for (const Instruction* operand : inst->operands()) {
        const Literal* v = known.Of(operand);
        if (v == nullptr) break;
        values.push_back(v);
      }
      if (values.size() != static_cast<size_t>(inst->operand_count())) continue;
      absl::StatusOr<Literal> value = EvaluateAlone(*inst, inst->shape(), values);
      if (!value.ok()) continue;  // unsupported: leave it unfolded
      if (rewriter.dry()) known.Fold(inst, *value);
      Instruction* constant =
          rewriter.Add(computation, Instruction::CreateConstant(*std::move(value)));
      constant->mutable_shape() = inst->shape();
      RETURN_IF_ERROR(rewriter.Replace(inst, constant));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym

#include "core/passes/fusion_builder.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ir/module.h"

namespace hlogym {
namespace {

// Builds the new fused computation: its parameters are the fusion's operands.
class FusedBuilder {
 public:
  FusedBuilder(Module* module)
      : computation_(std::make_unique<Computation>(module->UniqueComputationName("fused_computation"))) {}

  // The parameter standing for outer value `operand` (created on first use).
  Instruction* Parameter(Instruction* operand) {
    auto it = params_.find(operand);
    if (it != params_.end()) return it->second;
    const int64_t n = static_cast<int64_t>(operands_.size());
    Instruction* param = computation_->AddInstruction(Instruction::CreateParameter(
        n, operand->shape(), ""));
    operands_.push_back(operand);
    params_[operand] = param;
    return param;
  }

  // Copies `inst` (an outer instruction, or a fusion's body) into the new
  // computation; `value_of` maps each operand to its inner value.
  Instruction* Emit(Instruction* inst, const std::vector<Instruction*>& inner_operands) {
    auto copy = inst->CloneWithNewOperands(inst->shape(), inner_operands);
    copy->set_name("");
    return computation_->AddInstruction(std::move(copy));
  }

  // The value of outer instruction `inst` inside: inlines a fusion's body or
  // copies a plain instruction; `mapped` overrides operands already inside.
  Instruction* Inline(Instruction* inst,
                      const absl::flat_hash_map<const Instruction*, Instruction*>& mapped) {
    auto inner = [&](Instruction* operand) {
      auto it = mapped.find(operand);
      return it != mapped.end() ? it->second : Parameter(operand);
    };
    if (inst->opcode() != Opcode::kFusion) {
      std::vector<Instruction*> operands;
      for (Instruction* operand : inst->operands()) operands.push_back(inner(operand));
      return Emit(inst, operands);
    }
    const Computation* fused = inst->fused_computation();
    absl::flat_hash_map<const Instruction*, Instruction*> local;
    for (int64_t i = 0; i < fused->parameter_count(); ++i) {
      local[fused->parameter(i)] = inner(inst->operand(i));
    }
    for (Instruction* body : fused->MakePostOrder()) {
      if (body->opcode() == Opcode::kParameter) continue;
      std::vector<Instruction*> operands;
      for (Instruction* operand : body->operands()) operands.push_back(local.at(operand));
      local[body] = Emit(body, operands);
    }
    return local.at(fused->root());
  }

  std::unique_ptr<Computation> Finish(Instruction* root) {
    computation_->set_root(root);
    return std::move(computation_);
  }
  const std::vector<Instruction*>& operands() const { return operands_; }

 private:
  std::unique_ptr<Computation> computation_;
  absl::flat_hash_map<const Instruction*, Instruction*> params_;
  std::vector<Instruction*> operands_;
};

}  // namespace

absl::StatusOr<Instruction*> FuseProducerIntoConsumer(Rewriter& rewriter, Instruction* producer,
                                                      Instruction* consumer) {
  if (std::find(consumer->operands().begin(), consumer->operands().end(), producer) ==
      consumer->operands().end()) {
    return absl::InvalidArgumentError(absl::StrCat("`", producer->name(), "` is not an operand of `",
                                                   consumer->name(), "`"));
  }
  Module* module = rewriter.module();
  FusedBuilder builder(module);
  absl::flat_hash_map<const Instruction*, Instruction*> none;
  Instruction* produced = builder.Inline(producer, none);
  absl::flat_hash_map<const Instruction*, Instruction*> mapped = {{producer, produced}};
  Instruction* root = builder.Inline(consumer, mapped);
  const std::vector<Instruction*> operands = builder.operands();
  std::unique_ptr<Computation> body = builder.Finish(root);
  bool has_reduce = false;
  for (const auto& inst : body->instructions()) has_reduce |= inst->opcode() == Opcode::kReduce;

  Computation* outer = consumer->parent();
  Computation* fused = rewriter.AddComputation(std::move(body), outer);
  auto fusion = Instruction::Create(Opcode::kFusion, consumer->shape(), operands);
  fusion->mutable_attrs<FusionAttrs>().kind = has_reduce ? FusionKind::kInput : FusionKind::kLoop;
  fusion->set_called_computations({fused});
  fusion->set_name(module->UniqueInstructionName(has_reduce ? "input_fusion" : "loop_fusion"));
  Instruction* added = rewriter.Add(outer, std::move(fusion));
  fused->set_fusion_instruction(added);
  return added;
}

}  // namespace hlogym

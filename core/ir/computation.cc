#include "core/ir/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ir/module.h"

namespace hlogym {

Computation::~Computation() {
  // Operands never leave their computation, so dropping every link here lets
  // the instructions die in any order without touching freed neighbours.
  for (auto& inst : instructions_) {
    inst->operands_.clear();
    inst->users_.clear();
    inst->control_predecessors_.clear();
    inst->control_successors_.clear();
  }
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* inst = instruction.get();
  inst->set_parent(this);
  if (parent_ != nullptr) {
    if (inst->unique_id() < 0) inst->set_unique_id(parent_->NextUniqueId());
    if (inst->name().empty()) {
      inst->set_name(parent_->UniqueInstructionName(OpcodeName(inst->opcode())));
    } else {
      parent_->NoteInstructionName(inst->name());
    }
  }
  if (inst->opcode() == Opcode::kParameter) {
    const int64_t number = inst->parameter_number();
    if (number >= 0) {
      if (static_cast<int64_t>(parameters_.size()) <= number) {
        parameters_.resize(number + 1, nullptr);
      }
      parameters_[number] = inst;
    }
  }
  instructions_.push_back(std::move(instruction));
  return inst;
}

absl::Status Computation::RemoveInstruction(Instruction* instruction) {
  if (instruction->user_count() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot remove `", instruction->name(), "`: it still has users"));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot remove `", instruction->name(), "`: it is the root"));
  }
  if (instruction->opcode() == Opcode::kParameter) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot remove parameter `", instruction->name(),
        "` this way: use RemoveParameter"));
  }
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  if (it == instructions_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "`", instruction->name(), "` is not in computation `", name_, "`"));
  }
  instruction->DetachOperands();
  instruction->DropAllControlDependencies();
  instructions_.erase(it);
  return absl::OkStatus();
}

void Computation::RemoveInstructionsIf(
    const std::function<bool(const Instruction*)>& dead) {
  std::vector<Instruction*> doomed;
  for (auto& inst : instructions_) {
    if (inst.get() != root_ && dead(inst.get())) doomed.push_back(inst.get());
  }
  if (doomed.empty()) return;
  for (Instruction* inst : doomed) {
    inst->DetachOperands();
    inst->DropAllControlDependencies();
  }
  absl::flat_hash_map<const Instruction*, bool> is_doomed;
  for (Instruction* inst : doomed) is_doomed[inst] = true;
  for (Instruction*& param : parameters_) {
    if (param != nullptr && is_doomed.contains(param)) param = nullptr;
  }
  instructions_.erase(
      std::remove_if(instructions_.begin(), instructions_.end(),
                     [&](const auto& p) { return is_doomed.contains(p.get()); }),
      instructions_.end());
}

absl::Status Computation::RemoveParameter(int64_t i) {
  if (i < 0 || i >= parameter_count()) {
    return absl::OutOfRangeError(absl::StrCat(
        "computation `", name_, "` has no parameter ", i));
  }
  Instruction* param = parameters_[i];
  if (param->user_count() != 0 || param == root_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot remove parameter `", param->name(), "`: it is still used"));
  }
  param->DropAllControlDependencies();
  parameters_.erase(parameters_.begin() + i);
  for (int64_t j = i; j < parameter_count(); ++j) parameters_[j]->set_index(j);
  instructions_.erase(
      std::find_if(instructions_.begin(), instructions_.end(),
                   [&](const auto& p) { return p.get() == param; }));
  return absl::OkStatus();
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  // 0 = unvisited, 1 = on the stack, 2 = emitted. Nodes on the stack met
  // again (a cycle, which the verifier reports) are skipped, so this always
  // terminates.
  absl::flat_hash_map<const Instruction*, uint8_t> state;
  state.reserve(instructions_.size());
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (const auto& start : instructions_) {
    if (state[start.get()] != 0) continue;
    stack.emplace_back(start.get(), 0);
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t num_operands = inst->operands().size();
      const size_t num_deps = num_operands + inst->control_predecessors().size();
      if (next < num_deps) {
        Instruction* dep = next < num_operands
                               ? inst->operand(next)
                               : inst->control_predecessors()[next - num_operands];
        ++next;
        uint8_t& s = state[dep];
        if (s == 0 && dep->parent() == this) {
          s = 1;
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      state[inst] = 2;
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

bool Computation::IsEntry() const {
  return parent_ != nullptr && parent_->entry() == this;
}

}  // namespace hlogym

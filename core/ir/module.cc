#include "core/ir/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// "add.12" -> "add": new names count up from the stem, as XLA's do.
std::string_view NameStem(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size()) return name;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(name[i])) return name;
  }
  return name.substr(0, dot);
}

}  // namespace

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  return AddComputationBefore(std::move(computation), nullptr);
}

Computation* Module::AddComputationBefore(std::unique_ptr<Computation> computation,
                                          const Computation* before) {
  Computation* comp = computation.get();
  comp->set_parent(this);
  if (computation_names_) computation_names_->insert(comp->name());
  for (const auto& inst : comp->instructions()) {
    if (inst->unique_id() < 0) inst->set_unique_id(NextUniqueId());
    if (inst->name().empty()) {
      inst->set_name(UniqueInstructionName(OpcodeName(inst->opcode())));
    } else {
      NoteInstructionName(inst->name());
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& p) { return p.get() == before; });
  computations_.insert(it, std::move(computation));
  return comp;
}

void Module::RemoveUnreachableComputations() {
  if (entry_ == nullptr) return;
  absl::flat_hash_map<const Computation*, bool> reachable;
  std::vector<const Computation*> stack = {entry_};
  reachable[entry_] = true;
  while (!stack.empty()) {
    const Computation* comp = stack.back();
    stack.pop_back();
    for (const auto& inst : comp->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (callee != nullptr && !reachable[callee]) {
          reachable[callee] = true;
          stack.push_back(callee);
        }
      }
    }
  }
  computations_.erase(
      std::remove_if(computations_.begin(), computations_.end(),
                     [&](const auto& p) { return !reachable[p.get()]; }),
      computations_.end());
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& comp : computations_) {
    if (comp->name() == name) return comp.get();
  }
  return nullptr;
}

int64_t Module::instruction_count() const {
  int64_t count = 0;
  for (const auto& comp : computations_) count += comp->instruction_count();
  return count;
}

void Module::NoteInstructionName(std::string_view name) {
  if (instruction_names_) instruction_names_->emplace(name);
}

std::string Module::UniqueInstructionName(std::string_view prefix) {
  if (!instruction_names_) {
    instruction_names_ = std::make_unique<absl::flat_hash_set<std::string>>();
    instruction_names_->reserve(static_cast<size_t>(instruction_count()));
    for (const auto& comp : computations_) {
      for (const auto& inst : comp->instructions()) {
        instruction_names_->insert(inst->name());
      }
    }
  }
  // Looked up before a string is made: most prefixes are names in use.
  if (!prefix.empty() &&
      !instruction_names_->contains(absl::string_view(prefix.data(), prefix.size()))) {
    instruction_names_->emplace(prefix);
    return std::string(prefix);
  }
  const std::string stem(prefix.empty() ? "instruction" : NameStem(prefix));
  int64_t& counter = name_counters_[stem];
  while (true) {
    std::string candidate = absl::StrCat(stem, ".", ++counter);
    if (instruction_names_->insert(candidate).second) return candidate;
  }
}

std::string Module::UniqueComputationName(std::string_view prefix) {
  // Names in use, built on first use; names of removed computations stay
  // reserved, which is harmless and keeps this O(1) per name.
  if (!computation_names_) {
    computation_names_ = std::make_unique<absl::flat_hash_set<std::string>>();
    for (const auto& comp : computations_) computation_names_->insert(comp->name());
  }
  if (computation_names_->insert(std::string(prefix)).second) return std::string(prefix);
  const std::string stem(NameStem(prefix));
  int64_t& counter = computation_counters_[stem];
  while (true) {
    std::string candidate = absl::StrCat(stem, ".", ++counter);
    if (computation_names_->insert(candidate).second) return candidate;
  }
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->entry_layout_ = entry_layout_;
  clone->raw_attrs_ = raw_attrs_;
  clone->stack_frame_index_ = stack_frame_index_;
  clone->next_id_ = next_id_;

  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  absl::flat_hash_map<const Instruction*, Instruction*> inst_map;
  inst_map.reserve(static_cast<size_t>(instruction_count()));
  comp_map.reserve(computations_.size());
  std::vector<Instruction*> operands;
  for (const auto& comp : computations_) {
    auto new_comp = std::make_unique<Computation>(comp->name());
    new_comp->set_execution_thread(comp->execution_thread());
    for (Instruction* inst : comp->MakePostOrder()) {
      operands.clear();
      for (Instruction* operand : inst->operands()) {
        operands.push_back(inst_map.at(operand));
      }
      auto copy = inst->CloneWithNewOperands(inst->shape(), operands);
      copy->set_unique_id(inst->unique_id());
      // The copy starts with the original's callees; map them in place.
      for (int64_t i = 0; i < static_cast<int64_t>(inst->called_computations().size()); ++i) {
        auto it = comp_map.find(inst->called_computations()[i]);
        copy->set_called_computation(i, it == comp_map.end() ? nullptr : it->second);
      }
      inst_map[inst] = new_comp->AddInstruction(std::move(copy));
    }
    for (const auto& inst : comp->instructions()) {
      for (Instruction* pred : inst->control_predecessors()) {
        inst_map.at(pred)->AddControlDependencyTo(inst_map.at(inst.get()));
      }
    }
    if (comp->root() != nullptr) new_comp->set_root(inst_map.at(comp->root()));
    comp_map[comp.get()] = clone->AddComputation(std::move(new_comp));
  }
  for (const auto& comp : computations_) {
    if (comp->fusion_instruction() != nullptr) {
      auto it = inst_map.find(comp->fusion_instruction());
      if (it != inst_map.end()) comp_map.at(comp.get())->set_fusion_instruction(it->second);
    }
  }
  if (entry_ != nullptr) clone->entry_ = comp_map.at(entry_);
  return clone;
}

}  // namespace hlogym

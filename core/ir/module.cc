#include "core/ir/module.h"

#include <algorithm>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace hlogym {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  return AddComputationBefore(std::move(computation), nullptr);
}

Computation* Module::AddComputationBefore(std::unique_ptr<Computation> computation,
                                          const Computation* before,
                                          bool names_reserved) {
  Computation* comp = computation.get();
  comp->set_parent(this);
  if (computation_names_) computation_names_->Insert(comp->name());
  for (const auto& inst : comp->instructions()) {
    if (inst->unique_id() < 0) inst->set_unique_id(NextUniqueId());
    if (inst->name().empty()) {
      inst->set_name(UniqueInstructionName(OpcodeName(inst->opcode())));
    } else if (!names_reserved) {
      NoteInstructionName(inst->name());
    }
  }
  // Searched from the back: passes add callees just before their caller,
  // which is usually the entry, last. (Computations are distinct, so the
  // match is the same one a forward search finds.)
  auto it = computations_.end();
  if (before != nullptr) {
    auto rit = std::find_if(computations_.rbegin(), computations_.rend(),
                            [&](const auto& p) { return p.get() == before; });
    it = rit == computations_.rend() ? computations_.end() : std::prev(rit.base());
  }
  computations_.insert(it, std::move(computation));
  return comp;
}

void Module::RemoveUnreachableComputations() {
  if (entry_ == nullptr) return;
  // Sized once for every computation: grown from empty it rehashed its way
  // up to the hundreds of fused computations an env step's module has, at
  // each of the several calls a step makes.
  absl::flat_hash_set<const Computation*> reachable;
  reachable.reserve(computations_.size());
  std::vector<const Computation*> stack = {entry_};
  reachable.insert(entry_);
  while (!stack.empty()) {
    const Computation* comp = stack.back();
    stack.pop_back();
    for (const auto& inst : comp->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (callee != nullptr && reachable.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  computations_.erase(
      std::remove_if(computations_.begin(), computations_.end(),
                     [&](const auto& p) { return !reachable.contains(p.get()); }),
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
  if (instruction_names_) instruction_names_->Insert(name);
}

std::string Module::UniqueInstructionName(std::string_view prefix) {
  if (!instruction_names_) {
    instruction_names_ = std::make_unique<NameRegistry>();
    for (const auto& comp : computations_) {
      for (const auto& inst : comp->instructions()) instruction_names_->Insert(inst->name());
    }
  }
  if (prefix.empty()) return instruction_names_->NextFree("instruction");
  return instruction_names_->Unique(prefix);
}

std::string Module::UniqueComputationName(std::string_view prefix) {
  // Names in use, built on first use; names of removed computations stay
  // reserved, which is harmless and keeps this O(1) per name.
  if (!computation_names_) {
    computation_names_ = std::make_unique<NameRegistry>();
    for (const auto& comp : computations_) computation_names_->Insert(comp->name());
  }
  // Unique is Insert, then NextFree of the stem when taken, with one parse
  // and one stem lookup (a dry pass names a fused computation per candidate).
  return computation_names_->Unique(prefix);
}

std::unique_ptr<Module> Module::Clone() const { return CloneParts(ClonePart()); }

std::unique_ptr<Module> Module::CloneParts(const ClonePart& part) const {
  auto clone = std::make_unique<Module>(name_);
  clone->entry_layout_ = entry_layout_;
  clone->raw_attrs_ = raw_attrs_;
  clone->stack_frame_index_ = stack_frame_index_;
  clone->next_id_ = next_id_;

  auto keep = [&](const Instruction* inst) {
    return !part.instruction || part.instruction(*inst);
  };
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  absl::flat_hash_map<const Instruction*, Instruction*> inst_map;
  // Sized for the computations kept, not the whole module: after a dry pass
  // most instructions are in candidates' fused computations, which a step's
  // copy leaves out, and a map several times too large is slower to fill.
  size_t most = 0;
  for (const auto& comp : computations_) {
    if (!part.computation || part.computation(*comp)) most += comp->instructions().size();
  }
  inst_map.reserve(most);
  comp_map.reserve(computations_.size());
  std::vector<Instruction*> operands;
  std::vector<Instruction*> order;  // reused: a post-order per computation
  for (const auto& comp : computations_) {
    if (part.computation && !part.computation(*comp)) continue;
    auto new_comp = std::make_unique<Computation>(comp->name());
    new_comp->set_execution_thread(comp->execution_thread());
    new_comp->ReserveInstructions(comp->instructions().size());  // at most all
    comp->MakePostOrder(order);
    for (Instruction* inst : order) {
      if (!keep(inst)) continue;
      operands.clear();
      for (Instruction* operand : part.operands ? part.operands(*inst) : inst->operands()) {
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
      // Most have no control edges: asked first, as `keep` is a lookup.
      if (inst->control_predecessors().empty() || !keep(inst.get())) continue;
      for (Instruction* pred : inst->control_predecessors()) {
        if (keep(pred)) inst_map.at(pred)->AddControlDependencyTo(inst_map.at(inst.get()));
      }
    }
    if (comp->root() != nullptr) new_comp->set_root(inst_map.at(comp->root()));
    comp_map[comp.get()] = clone->AddComputation(std::move(new_comp));
  }
  for (const auto& comp : computations_) {
    if (comp->fusion_instruction() == nullptr) continue;
    auto copy = comp_map.find(comp.get());
    auto it = inst_map.find(comp->fusion_instruction());
    if (copy != comp_map.end() && it != inst_map.end()) {
      copy->second->set_fusion_instruction(it->second);
    }
  }
  if (entry_ != nullptr) clone->entry_ = comp_map.at(entry_);
  return clone;
}

}  // namespace hlogym

#include "core/ir/module.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/base/prefetch.h"
#include "core/ir/unique_id_index.h"

namespace hlogym {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  return AddComputationBefore(std::move(computation), nullptr);
}

Computation* Module::AddComputationBefore(std::unique_ptr<Computation> computation,
                                          const Computation* before,
                                          bool names_reserved) {
  Computation* comp = computation.get();
  comp->set_parent(this);
  if (computation_names_built_) computation_names_.Insert(comp->name());
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
  // What the entry reaches is flagged on the computations themselves, not
  // kept in a hash set: hashing each of the hundreds of fused computations an
  // env step's module has, once to insert and once to ask, was ~100,000
  // instructions a call, at several calls a step. The flags are cleared
  // before returning.
  std::vector<Computation*> reached = {entry_};
  entry_->reached_ = true;
  for (size_t i = 0; i < reached.size(); ++i) {
    const auto& stored = reached[i]->instructions();
    for (size_t k = 0; k < stored.size(); ++k) {
      PrefetchAhead(stored, k, 2 * kCacheLine);  // the callees are in the second line
      for (Computation* callee : stored[k]->called_computations()) {
        if (callee != nullptr && !callee->reached_) {
          callee->reached_ = true;
          reached.push_back(callee);
        }
      }
    }
  }
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [](const auto& p) { return !p->reached_; }),
                      computations_.end());
  for (Computation* computation : reached) computation->reached_ = false;
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
  if (instruction_names_built_) instruction_names_.Insert(name);
}

namespace {

// `names`, emptied and filled by `fill` unless built since StoreAsCloned
// last dropped it.
template <typename Fill>
NameRegistry& BuiltNames(NameRegistry& names, bool& built, Fill fill) {
  if (!built) {
    names.Clear();
    built = true;
    fill(names);
  }
  return names;
}

}  // namespace

std::string Module::UniqueInstructionName(std::string_view prefix) {
  NameRegistry& names =
      BuiltNames(instruction_names_, instruction_names_built_, [&](NameRegistry& in_use) {
        for (const auto& comp : computations_) {
          for (const auto& inst : comp->instructions()) in_use.Insert(inst->name());
        }
      });
  if (prefix.empty()) return names.NextFree("instruction");
  return names.Unique(prefix);
}

std::string Module::UniqueComputationName(std::string_view prefix) {
  // Names in use, built on first use; names of removed computations stay
  // reserved, which is harmless and keeps this O(1) per name.
  NameRegistry& names =
      BuiltNames(computation_names_, computation_names_built_, [&](NameRegistry& in_use) {
        for (const auto& comp : computations_) in_use.Insert(comp->name());
      });
  // Unique is Insert, then NextFree of the stem when taken, with one parse
  // and one stem lookup (a dry pass names a fused computation per candidate).
  return names.Unique(prefix);
}

std::unique_ptr<Module> Module::Clone() const { return CloneParts(ClonePart()); }

void Module::StoreAsCloned() {
  for (const auto& computation : computations_) computation->StoreAsCloned();
  instruction_names_built_ = false;
  computation_names_built_ = false;
}

namespace {

// CloneParts' map from the instructions of the computation being copied to
// their copies: a vector indexed by unique id when the computation's ids
// are distinct and dense (as a module hands them out), else a hash map. A
// module-wide hash map was ~15% of a copy. Operands, control edges and the
// root never leave their computation, so one computation's map is all a
// copy looks up.
class CopyMap {
 public:
  void Reset(const Computation& computation) {
    computation_ = &computation;
    map_.clear();
    const int64_t n = computation.instruction_count();
    if (!IndexByUniqueId(computation.instructions(), 4 * n + 64, static_cast<Instruction*>(nullptr),
                         Marked(), dense_, base_)) {
      map_.reserve(static_cast<size_t>(n));
    }
  }
  void Set(const Instruction* inst, Instruction* copy) {
    if (Instruction** slot = Slot(inst)) {
      *slot = copy;
    } else {
      map_[inst] = copy;
    }
  }
  // The copy of `inst`, which must have been copied.
  Instruction* At(const Instruction* inst) const {
    if (Instruction* const* slot = Slot(inst)) {
      if (*slot != nullptr) return *slot;
    }
    auto it = map_.find(inst);
    if (it == map_.end()) {
      std::fprintf(stderr, "Module::CloneParts: `%s` (computation `%s`) was not copied\n",
                   inst->name().c_str(), computation_->name().c_str());
      std::abort();
    }
    return it->second;
  }

 private:
  static Instruction* Marked() {
    static Instruction* const marked = reinterpret_cast<Instruction*>(alignof(Instruction));
    return marked;
  }
  Instruction** Slot(const Instruction* inst) {
    if (dense_.empty() || inst->parent() != computation_) return nullptr;
    const int64_t slot = inst->unique_id() - base_;
    if (slot < 0 || slot >= static_cast<int64_t>(dense_.size())) return nullptr;
    return &dense_[static_cast<size_t>(slot)];
  }
  Instruction* const* Slot(const Instruction* inst) const {
    return const_cast<CopyMap*>(this)->Slot(inst);
  }

  const Computation* computation_ = nullptr;
  std::vector<Instruction*> dense_;
  int64_t base_ = 0;
  absl::flat_hash_map<const Instruction*, Instruction*> map_;
};

}  // namespace

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
  comp_map.reserve(computations_.size());
  CopyMap copies;
  std::vector<Instruction*> operands;
  std::vector<Instruction*> order;  // reused: a post-order per computation
  for (const auto& comp : computations_) {
    if (part.computation && !part.computation(*comp)) continue;
    auto new_comp = std::make_unique<Computation>(comp->name());
    new_comp->set_execution_thread(comp->execution_thread());
    new_comp->ReserveInstructions(comp->instructions().size());  // at most all
    copies.Reset(*comp);
    absl::Span<Instruction* const> walk = part.order;
    if (comp.get() != part.ordered || walk.size() != comp->instructions().size()) {
      comp->MakePostOrder(order);
      walk = order;
    }
    for (size_t w = 0; w < walk.size(); ++w) {
      // The originals are cold (made a step ago): each is prefetched a few
      // ahead of its copy.
      PrefetchAhead(walk, w, sizeof(Instruction), 3);
      Instruction* inst = walk[w];
      if (!keep(inst)) continue;
      operands.clear();
      for (Instruction* operand : part.operands ? part.operands(*inst) : inst->operands()) {
        operands.push_back(copies.At(operand));
      }
      auto copy = inst->CloneWithNewOperands(inst->shape(), operands);
      copy->set_unique_id(inst->unique_id());
      Instruction* added = new_comp->AddInstruction(std::move(copy));
      copies.Set(inst, added);
      // The copy starts with the original's callees; map them in place. A
      // fused computation is copied before its fusion (callees come first),
      // and points back to the fusion's copy as the original does.
      for (int64_t i = 0; i < static_cast<int64_t>(inst->called_computations().size()); ++i) {
        const Computation* callee = inst->called_computations()[i];
        auto it = comp_map.find(callee);
        Computation* callee_copy = it == comp_map.end() ? nullptr : it->second;
        added->set_called_computation(i, callee_copy);
        if (callee_copy != nullptr && callee->fusion_instruction() == inst) {
          callee_copy->set_fusion_instruction(added);
        }
      }
    }
    for (const auto& inst : comp->instructions()) {
      // Most have no control edges: asked first, as `keep` is a lookup.
      if (inst->control_predecessors().empty() || !keep(inst.get())) continue;
      for (Instruction* pred : inst->control_predecessors()) {
        if (keep(pred)) copies.At(pred)->AddControlDependencyTo(copies.At(inst.get()));
      }
    }
    if (comp->root() != nullptr) new_comp->set_root(copies.At(comp->root()));
    comp_map[comp.get()] = clone->AddComputation(std::move(new_comp));
  }
  if (entry_ != nullptr) clone->entry_ = comp_map.at(entry_);
  return clone;
}

}  // namespace hlogym

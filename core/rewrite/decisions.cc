#include "core/rewrite/decisions.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/base/prefetch.h"
#include "core/base/status_macros.h"
#include "core/ir/node_order.h"
#include "core/rewrite/prune.h"

namespace hlogym {
namespace {

absl::Status CheckChoice(const AlternativeNode& alt, int64_t choice) {
  if (choice < 0 || choice >= alt.num_choices()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "choice ", choice, " for alternatives node ", alt.node_index, " (`",
        alt.node->name(), "`) is out of range: it has ", alt.num_choices(),
        " choices (0..", alt.num_choices() - 1, ")"));
  }
  return absl::OkStatus();
}

// Replaces each node by its chosen operand, then prunes. Inputs are valid.
void Select(Module& module, absl::Span<const AlternativeNode> alts,
            absl::Span<const int64_t> choices) {
  for (size_t i = 0; i < alts.size(); ++i) {
    Instruction* node = alts[i].node;
    node->ReplaceAllUsesWith(node->operand(choices[i]));
  }
  Prune(module);
}

// Whether CloneWithChoices can select while copying: every alternatives
// node reads plain instructions and has no control edges. A chosen operand
// that is itself an alternatives node would make the result depend on the
// order of selection, which only the in-place path reproduces.
bool SelectableWhileCopying(absl::Span<const AlternativeNode> alts) {
  for (const AlternativeNode& alt : alts) {
    const Instruction* node = alt.node;
    if (!node->control_predecessors().empty() || !node->control_successors().empty()) {
      return false;
    }
    for (const Instruction* operand : node->operands()) {
      if (operand->opcode() == Opcode::kAlternatives) return false;
    }
  }
  return true;
}

// The instructions a step's copy keeps (CloneWithChoices' marking), in a
// per-thread table indexed by unique id whose slot holds the instruction it
// marks, so that asking whether one is marked hashes nothing (a hash set of
// them was ~3% of an env step). One whose slot another holds (a shared id,
// which a module does not make) or whose id is past the table's limit goes
// into a hash set instead. The slots set are cleared when the set goes:
// the next copy finds the table empty without a sweep of the id range.
class LiveSet {
 public:
  LiveSet() : slots_(Slots()) {}
  ~LiveSet() {
    for (const Instruction* inst : marked_) {
      const int64_t id = inst->unique_id();
      if (id >= 0 && id < static_cast<int64_t>(slots_.size()) && slots_[id] == inst) {
        slots_[id] = nullptr;
      }
    }
  }
  LiveSet(const LiveSet&) = delete;
  LiveSet& operator=(const LiveSet&) = delete;

  // Marks `inst`; false if it was marked already.
  bool Insert(const Instruction* inst) {
    const int64_t id = inst->unique_id();
    if (id >= 0 && id < kMaxId) {
      if (id >= static_cast<int64_t>(slots_.size())) {
        const size_t grown = std::min<size_t>(2 * slots_.size(), static_cast<size_t>(kMaxId));
        slots_.resize(std::max<size_t>(grown, static_cast<size_t>(id) + 1), nullptr);
      }
      const Instruction*& slot = slots_[static_cast<size_t>(id)];
      if (slot == inst) return false;
      if (slot == nullptr) {
        slot = inst;
        marked_.push_back(inst);
        return true;
      }
    }
    return others_.insert(inst).second;
  }
  bool Contains(const Instruction* inst) const {
    const int64_t id = inst->unique_id();
    if (id >= 0 && id < static_cast<int64_t>(slots_.size()) && slots_[id] == inst) return true;
    return !others_.empty() && others_.contains(inst);
  }

 private:
  static constexpr int64_t kMaxId = int64_t{1} << 22;  // 32 MiB of slots at most
  static std::vector<const Instruction*>& Slots() {
    thread_local std::vector<const Instruction*> slots;
    return slots;
  }
  std::vector<const Instruction*>& slots_;
  std::vector<const Instruction*> marked_;
  absl::flat_hash_set<const Instruction*> others_;
};

}  // namespace

absl::Status CheckChoices(absl::Span<const AlternativeNode> alts,
                          absl::Span<const int64_t> choices) {
  if (choices.size() != alts.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected one choice per alternatives node (", alts.size(), "), got ",
        choices.size()));
  }
  for (size_t i = 0; i < alts.size(); ++i) {
    if (absl::Status s = CheckChoice(alts[i], choices[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<AlternativeNode> FindAlternatives(const Module& module) {
  std::vector<AlternativeNode> alts;
  for (const auto& [inst, index] : FindInNodeOrder(module, Opcode::kAlternatives)) {
    alts.push_back({inst, index});
  }
  return alts;
}

absl::Status ApplyDecisions(Module& module, absl::Span<const int64_t> decisions,
                            int64_t rows, int64_t cols) {
  std::vector<AlternativeNode> alts = FindAlternatives(module);
  if (cols != 2 || rows < 0 || static_cast<int64_t>(decisions.size()) != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decisions must have shape [num_alternatives, 2] = [", alts.size(),
        ", 2]; got [", rows, ", ", cols, "]"));
  }
  if (rows != static_cast<int64_t>(alts.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decisions must have one row per alternatives node: expected ",
        alts.size(), " rows, got ", rows));
  }
  absl::flat_hash_map<int64_t, size_t> slot_of_index;
  for (size_t i = 0; i < alts.size(); ++i) slot_of_index[alts[i].node_index] = i;
  std::vector<int64_t> choices(alts.size(), -1);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t index = decisions[2 * r];
    const int64_t choice = decisions[2 * r + 1];
    auto it = slot_of_index.find(index);
    if (it == slot_of_index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decision row ", r, ": node ", index, " is not an alternatives node"));
    }
    if (choices[it->second] != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decision row ", r, ": node ", index, " is decided twice"));
    }
    if (absl::Status s = CheckChoice(alts[it->second], choice); !s.ok()) return s;
    choices[it->second] = choice;
  }
  Select(module, alts, choices);
  return absl::OkStatus();
}

absl::Status ApplyChoices(Module& module, absl::Span<const int64_t> choices) {
  std::vector<AlternativeNode> alts = FindAlternatives(module);
  RETURN_IF_ERROR(CheckChoices(alts, choices));
  Select(module, alts, choices);
  return absl::OkStatus();
}

absl::Status ApplyChoices(Module& module, absl::Span<const AlternativeNode> alts,
                          absl::Span<const int64_t> choices,
                          absl::Span<Instruction* const> entry_order) {
  RETURN_IF_ERROR(CheckChoices(alts, choices));
  // The post-order now of each computation not stored in it (the entry,
  // where the dry pass appended candidates and their nodes). One stored in
  // its post-order stays so: pruning keeps the storage order.
  thread_local std::vector<Instruction*> orders;
  thread_local std::vector<Instruction*> order;
  std::vector<std::pair<const Computation*, size_t>> ends;  // one past each
  orders.clear();
  for (const auto& computation : module.computations()) {
    if (computation->stored_in_post_order()) continue;
    const auto& stored = computation->instructions();
    if (computation.get() == module.entry() && entry_order.size() == stored.size()) {
      order.assign(entry_order.begin(), entry_order.end());
    } else {
      computation->MakePostOrder(order);
    }
    bool as_stored = true;
    for (size_t i = 0; i < order.size() && as_stored; ++i) as_stored = order[i] == stored[i].get();
    if (as_stored) continue;
    orders.insert(orders.end(), order.begin(), order.end());
    ends.emplace_back(computation.get(), orders.size());
  }
  Select(module, alts, choices);
  // Each such computation still there is stored in that order, less what
  // was pruned. What was pruned is freed: its pointers (and those of the
  // computations pruned away) are only compared, never read, and selecting
  // and pruning make nothing new, so no freed address is in use again.
  absl::flat_hash_set<const Instruction*> left;
  size_t begin = 0;
  for (const auto& [recorded, end] : ends) {
    const size_t first = std::exchange(begin, end);
    Computation* computation = nullptr;
    for (const auto& c : module.computations()) {
      if (c.get() == recorded) computation = c.get();
    }
    if (computation == nullptr) continue;
    left.clear();
    for (const auto& inst : computation->instructions()) left.insert(inst.get());
    order.clear();
    for (size_t k = first; k < end; ++k) {
      if (left.contains(orders[k])) order.push_back(orders[k]);
    }
    if (absl::Status s = computation->StoreInOrder(order); !s.ok()) {
      return absl::InternalError(absl::StrCat("applying choices in place: ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> CloneWithChoices(const Module& module,
                                                         absl::Span<const int64_t> choices) {
  return CloneWithChoices(module, FindAlternatives(module), choices);
}

absl::StatusOr<std::unique_ptr<Module>> CloneWithChoices(
    const Module& module, absl::Span<const AlternativeNode> alts,
    absl::Span<const int64_t> choices, absl::Span<Instruction* const> entry_order) {
  RETURN_IF_ERROR(CheckChoices(alts, choices));
  if (!SelectableWhileCopying(alts) || module.entry() == nullptr) {
    std::unique_ptr<Module> copy = module.Clone();
    Select(*copy, FindAlternatives(*copy), choices);
    return copy;
  }
  // Each node stands for its choice: what survives Select and Prune is what
  // the roots and the instructions pruning never removes reach through
  // operands, with nodes read through, in the computations the survivors
  // call. A node some survivor reads is copied too, reading its choice
  // alone, so that Select below moves its users exactly as on a full copy.
  absl::flat_hash_map<const Instruction*, Instruction*> chosen;
  chosen.reserve(alts.size());
  // Only an alternatives node is looked up in `chosen` when they all are
  // (they are, found by opcode): most instructions then skip the lookup.
  bool all_alternatives = true;
  for (size_t i = 0; i < alts.size(); ++i) {
    chosen[alts[i].node] = alts[i].node->operand(choices[i]);
    all_alternatives &= alts[i].node->opcode() == Opcode::kAlternatives;
  }
  auto choice_of = [&](const Instruction* inst) -> Instruction* const* {
    if (all_alternatives && inst->opcode() != Opcode::kAlternatives) return nullptr;
    auto it = chosen.find(inst);
    return it == chosen.end() ? nullptr : &it->second;
  };
  LiveSet live;
  absl::flat_hash_set<const Computation*> reached = {module.entry()};
  std::vector<const Computation*> computations = {module.entry()};
  std::vector<const Instruction*> stack;
  auto mark = [&](const Instruction* inst) {
    if (live.Insert(inst)) stack.push_back(inst);
  };
  while (!computations.empty()) {
    const Computation* computation = computations.back();
    computations.pop_back();
    // The root compared here, not through each instruction's parent.
    const Instruction* root = computation->root();
    const auto& stored = computation->instructions();
    for (size_t i = 0; i < stored.size(); ++i) {
      // Cold (made a step ago): prefetched a few ahead.
      PrefetchAhead(stored, i, kCacheLine);
      const Instruction* inst = stored[i].get();
      if (inst == root || !IsRemovableWhenDead(*inst)) mark(inst);
    }
    while (!stack.empty()) {
      const Instruction* inst = stack.back();
      stack.pop_back();
      if (Instruction* const* choice = choice_of(inst)) {
        mark(*choice);
        continue;
      }
      for (const Instruction* operand : inst->operands()) mark(operand);
      for (const Computation* callee : inst->called_computations()) {
        if (callee != nullptr && reached.insert(callee).second) computations.push_back(callee);
      }
    }
  }
  // A kept fused computation whose fusion is pruned (one shared by several
  // fusions) would keep a dangling back-pointer on a full copy: not
  // reproduced here.
  for (const Computation* computation : reached) {
    const Instruction* fusion = computation->fusion_instruction();
    if (fusion != nullptr && !live.Contains(fusion)) {
      std::unique_ptr<Module> copy = module.Clone();
      Select(*copy, FindAlternatives(*copy), choices);
      return copy;
    }
  }
  Module::ClonePart part;
  part.computation = [&](const Computation& c) { return reached.contains(&c); };
  part.instruction = [&](const Instruction& inst) { return live.Contains(&inst); };
  part.operands = [&](const Instruction& inst) -> absl::Span<Instruction* const> {
    Instruction* const* choice = choice_of(&inst);
    if (choice == nullptr) return inst.operands();
    return absl::Span<Instruction* const>(choice, 1);
  };
  if (!entry_order.empty()) {
    part.ordered = module.entry();
    part.order = entry_order;
  }
  std::unique_ptr<Module> copy = module.CloneParts(part);
  // The copied nodes are the live ones, each now reading only its choice. A
  // copy is stored in post-order, so storage order is their node order.
  std::vector<AlternativeNode> kept;
  for (const auto& computation : copy->computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kAlternatives) kept.push_back({inst.get(), -1});
    }
  }
  std::vector<int64_t> first(kept.size(), 0);
  Select(*copy, kept, first);
  return copy;
}

}  // namespace hlogym

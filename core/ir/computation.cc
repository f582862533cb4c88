#include "core/ir/computation.h"

#include <algorithm>
#include <limits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/prefetch.h"
#include "core/ir/block_pool.h"
#include "core/ir/instruction_table.h"
#include "core/ir/module.h"

namespace hlogym {
namespace {

constexpr size_t kFirstCapacity = 8;
// Up to this many instructions, MakePostOrder checks the storage order by
// searching it rather than through a table of visit states.
constexpr size_t kSmallComputation = 24;

}  // namespace

Computation::~Computation() {
  // Operands never leave their computation, so dropping every link here lets
  // the instructions die in any order without touching freed neighbours.
  // Each dies as soon as its own links are dropped (clearing them reads no
  // neighbour): one pass over the instructions, not two (destroying the
  // last module, candidates included, was ~11% of an env step).
  // The instructions are cold (made a step ago): each is prefetched two
  // ahead of its destruction.
  const size_t n = instructions_.size();
  for (size_t i = 0; i < n; ++i) {
    PrefetchAhead(instructions_, i, sizeof(Instruction), 2);
    std::unique_ptr<Instruction>& inst = instructions_[i];
    inst->operands_.clear();
    inst->users_.clear();
    inst->extras_.reset();
    inst.reset();
  }
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* inst = instruction.get();
  if (stored_in_order_) {
    // Stored last: in order if what it depends on is stored already (has
    // this parent) and nothing depends on it yet (a new instruction; one
    // with users, re-added, is taken to break the order).
    stored_in_order_ = inst->users_.empty() && inst->control_successors().empty();
    for (const Instruction* operand : inst->operands_) {
      stored_in_order_ &= operand->parent_ == this;
    }
    for (const Instruction* dep : inst->control_predecessors()) {
      stored_in_order_ &= dep->parent_ == this;
    }
  }
  inst->set_parent(this);
  linked_as_cloned_ = false;
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
        if (parameters_.capacity() < kFirstCapacity) parameters_.reserve(kFirstCapacity);
        parameters_.resize(number + 1, nullptr);
      }
      parameters_[number] = inst;
    }
  }
  // Room for a small computation at once rather than growing 1, 2, 4, 8: a
  // dry fusion pass builds thousands of small fused computations a step.
  if (instructions_.capacity() < kFirstCapacity) instructions_.reserve(kFirstCapacity);
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
  linked_as_cloned_ = false;
  return absl::OkStatus();
}

void Computation::RemoveInstructionsIf(
    const std::function<bool(const Instruction*)>& dead) {
  // The doomed in storage order, so that one sweep below compacts the
  // storage by comparing pointers with the next doomed one, not by asking a
  // hash set of them once per instruction (pruning an env step's copy
  // removes hundreds of alternatives nodes from a thousand-instruction
  // entry).
  std::vector<Instruction*> doomed;
  for (auto& inst : instructions_) {
    if (inst.get() != root_ && dead(inst.get())) doomed.push_back(inst.get());
  }
  if (doomed.empty()) return;
  linked_as_cloned_ = false;
  for (Instruction* inst : doomed) {
    inst->DetachOperands();
    inst->DropAllControlDependencies();
    // Only a parameter instruction is registered as a parameter.
    if (inst->opcode() == Opcode::kParameter) {
      for (Instruction*& param : parameters_) {
        if (param == inst) param = nullptr;
      }
    }
  }
  size_t kept = 0;
  size_t next = 0;  // the next doomed one to meet
  for (size_t i = 0; i < instructions_.size(); ++i) {
    if (next < doomed.size() && instructions_[i].get() == doomed[next]) {
      ++next;
      continue;
    }
    if (kept != i) instructions_[kept] = std::move(instructions_[i]);
    ++kept;
  }
  instructions_.resize(kept);
}

absl::Status Computation::StoreInOrder(absl::Span<Instruction* const> order) {
  // Checked as far as it is cheap (the count and the parents): the caller
  // lists each once, as a post-order of this computation less what was
  // removed from it does.
  bool permutation = order.size() == instructions_.size();
  for (size_t i = 0; i < order.size() && permutation; ++i) {
    permutation = order[i]->parent_ == this;
  }
  if (!permutation) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an order of computation `", name_, "` must list each of its ",
        instructions_.size(), " instructions once"));
  }
  // Released all, then owned again in order.
  for (std::unique_ptr<Instruction>& stored : instructions_) stored.release();
  for (size_t i = 0; i < order.size(); ++i) instructions_[i].reset(order[i]);
  stored_in_order_ = false;  // not known: MakePostOrder checks
  linked_as_cloned_ = false;
  return absl::OkStatus();
}

void Computation::StoreAsCloned() {
  if (linked_as_cloned_ && stored_in_order_) return;
  thread_local std::vector<Instruction*> order;
  MakePostOrder(order);
  // A post-order lists every instruction once, so this cannot fail.
  (void)StoreInOrder(order);
  for (Instruction* inst : order) {
    inst->users_.clear();
    if (inst->extras_ != nullptr) inst->extras_->control_successors.clear();
  }
  // As InitOperands links a copy: each user once per operand it reads.
  for (Instruction* inst : order) {
    const auto& operands = inst->operands_;
    for (size_t i = 0; i < operands.size(); ++i) {
      const auto seen = operands.begin() + static_cast<ptrdiff_t>(i);
      if (std::find(operands.begin(), seen, operands[i]) == seen) {
        operands[i]->users_.push_back(inst);
      }
    }
    if (inst->extras_ != nullptr) {
      for (Instruction* pred : inst->extras_->control_predecessors) {
        pred->extras().control_successors.push_back(inst);
      }
    }
  }
  stored_in_order_ = true;
  linked_as_cloned_ = true;
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
  linked_as_cloned_ = false;
  return absl::OkStatus();
}

absl::Status Computation::RenumberParameters(absl::Span<const int64_t> order) {
  const int64_t n = parameter_count();
  // Inline: a dry fusion pass renumbers the parameters of most of its
  // candidates, each with a handful.
  absl::InlinedVector<char, 16> taken(static_cast<size_t>(n), 0);
  bool permutation = static_cast<int64_t>(order.size()) == n;
  for (int64_t k = 0; k < n && permutation; ++k) {
    const int64_t old = order[k];
    permutation = old >= 0 && old < n && !taken[old] && parameters_[old] != nullptr;
    if (permutation) taken[old] = 1;
  }
  if (!permutation) {
    return absl::InvalidArgumentError(absl::StrCat(
        "renumbering the parameters of `", name_, "` needs a permutation of 0..", n - 1,
        ", got [", absl::StrJoin(order, ", "), "]"));
  }
  const absl::InlinedVector<Instruction*, 16> before(parameters_.begin(), parameters_.end());
  for (int64_t k = 0; k < n; ++k) {
    parameters_[k] = before[order[k]];
    parameters_[k]->set_index(k);
  }
  return absl::OkStatus();
}

void* Computation::operator new(size_t size) {
  return TakeBlock(BlockKind::kComputation, size, sizeof(Computation));
}

void Computation::operator delete(void* block, size_t size) {
  GiveBackBlock(BlockKind::kComputation, block, size, sizeof(Computation));
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  MakePostOrder(order);
  return order;
}

void Computation::MakePostOrder(std::vector<Instruction*>& order) const {
  order.clear();
  order.reserve(instructions_.size());
  if (stored_in_order_) {
    for (const auto& stored : instructions_) order.push_back(stored.get());
    return;
  }
  {
    // Cheapest first: ids rising along the storage and every dependency's id
    // below its user's put every dependency before its user in storage (a
    // dependency in this computation is stored in it). Fused computations
    // are stored so: their ids are handed out in storage order.
    bool ids_in_order = true;
    int64_t previous = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < instructions_.size(); ++i) {
      PrefetchAhead(instructions_, i, 2 * kCacheLine);  // cold after a copy
      const Instruction* inst = instructions_[i].get();
      const int64_t id = inst->unique_id();
      ids_in_order = id > previous;
      for (const Instruction* dep : inst->operands()) {
        ids_in_order &= dep->parent() != this || dep->unique_id() < id;
      }
      for (const Instruction* dep : inst->control_predecessors()) {
        ids_in_order &= dep->parent() != this || dep->unique_id() < id;
      }
      if (!ids_in_order) break;
      previous = id;
    }
    if (ids_in_order) {
      for (const auto& stored : instructions_) order.push_back(stored.get());
      return;
    }
  }
  if (instructions_.size() <= kSmallComputation) {
    // The stored-in-order check below, for a small computation (most fused
    // computations: ~9 instructions, ids not rising where the fusion
    // builder made parameters after their users), by finding each
    // dependency among the instructions stored before its user: a few
    // compares instead of indexing the ids (~1,800 instructions a call, for
    // the ~2,000 small post-orders of an env step).
    bool stored_in_order = true;
    for (size_t i = 0; i < instructions_.size() && stored_in_order; ++i) {
      const Instruction* inst = instructions_[i].get();
      auto stored_before = [&](const Instruction* dep) {
        if (dep->parent() != this) return true;
        for (size_t j = i; j-- > 0;) {
          if (instructions_[j].get() == dep) return true;
        }
        return false;
      };
      for (const Instruction* dep : inst->operands()) stored_in_order &= stored_before(dep);
      for (const Instruction* dep : inst->control_predecessors()) {
        stored_in_order &= stored_before(dep);
      }
    }
    if (stored_in_order) {
      for (const auto& stored : instructions_) order.push_back(stored.get());
      return;
    }
  }
  // Clones and the fusion builder store every instruction after what it
  // depends on; then the walk below, started from each instruction in
  // storage order, finds its dependencies already emitted and emits the
  // storage order. Checking that is one pass without the walk's stack
  // (MakePostOrder was ~8% of a gpt2 env step). When the check fails
  // part-way (an env step's entry, its alternatives nodes stored after
  // their users), the prefix it emitted is what the walk emits first, each
  // left emitted: the walk goes on after it with the same states and order
  // rather than indexing the ids again and re-walking the prefix.
  // Visit states: 0 = unvisited, 1 = on the stack, 2 = emitted.
  InstructionTable<uint8_t> states(this);
  auto state_of = [&](const Instruction* inst) -> uint8_t {
    const uint8_t* state = states.Find(inst);
    return state == nullptr ? 0 : *state;
  };
  size_t first = 0;
  for (; first < instructions_.size(); ++first) {
    Instruction* inst = instructions_[first].get();
    bool ready = true;
    for (const Instruction* dep : inst->operands()) {
      if (dep->parent() == this && state_of(dep) != 2) ready = false;
    }
    for (const Instruction* dep : inst->control_predecessors()) {
      if (dep->parent() == this && state_of(dep) != 2) ready = false;
    }
    if (!ready) break;
    states.Set(inst, 2);
    order.push_back(inst);
  }
  if (first == instructions_.size()) return;
  // Nodes on the stack met again (a cycle, which the verifier reports) are
  // skipped, so this always terminates. A node whose dependencies are all
  // emitted is emitted at once, without the stack: the walk would push it,
  // find nothing to visit and pop it (most of an entry's nodes, where the
  // stack was ~40% of the walk).
  auto ready = [&](const Instruction* inst) {
    for (const Instruction* dep : inst->operands()) {
      if (dep->parent() == this && state_of(dep) != 2) return false;
    }
    for (const Instruction* dep : inst->control_predecessors()) {
      if (dep->parent() == this && state_of(dep) != 2) return false;
    }
    return true;
  };
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (size_t i = first; i < instructions_.size(); ++i) {
    Instruction* const start_inst = instructions_[i].get();
    if (state_of(start_inst) != 0) continue;
    if (ready(start_inst)) {
      states.Set(start_inst, 2);
      order.push_back(start_inst);
      continue;
    }
    stack.emplace_back(start_inst, 0);
    states.Set(start_inst, 1);
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t num_operands = inst->operands().size();
      const size_t num_deps = num_operands + inst->control_predecessors().size();
      if (next < num_deps) {
        Instruction* dep = next < num_operands
                               ? inst->operand(next)
                               : inst->control_predecessors()[next - num_operands];
        ++next;
        if (dep->parent() != this) continue;
        if (state_of(dep) == 0) {
          if (ready(dep)) {
            states.Set(dep, 2);
            order.push_back(dep);
          } else {
            states.Set(dep, 1);
            stack.emplace_back(dep, 0);
          }
        }
        continue;
      }
      states.Set(inst, 2);
      order.push_back(inst);
      stack.pop_back();
    }
  }
}

bool Computation::IsEntry() const {
  return parent_ != nullptr && parent_->entry() == this;
}

}  // namespace hlogym

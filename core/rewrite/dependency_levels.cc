#include "core/rewrite/dependency_levels.h"

#include <algorithm>
#include <optional>

namespace hlogym {
namespace {

// Calls `f` on each instruction `inst` depends on directly.
template <typename F>
void ForEachDependency(const Instruction* inst, F&& f) {
  for (const Instruction* operand : inst->operands()) f(operand);
  for (const Instruction* pred : inst->control_predecessors()) f(pred);
}

// Levels of a computation's instructions when first computed climb by this
// much per edge, leaving room below each user: the nodes the Rewriter adds
// between an operand and its user (an alternatives node, one level above the
// original it offers choices for, whose candidates sit below the original's
// users) then fit under the user, and AddedEdge has nothing to raise. With
// a step of 1 every such edge raised the user and everything after it.
constexpr int64_t kGap = 16;

}  // namespace

bool DependencyLevels::DependsOnByFullWalk(const Instruction* from,
                                           const Instruction* target) {
  absl::flat_hash_set<const Instruction*> visited;
  std::vector<const Instruction*> stack = {from};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst == target) return true;
    if (!visited.insert(inst).second) continue;
    ForEachDependency(inst, [&](const Instruction* dep) { stack.push_back(dep); });
  }
  return false;
}

const int64_t* DependencyLevels::Level(const Instruction* instruction) const {
  auto it = level_.find(instruction);
  return it == level_.end() ? nullptr : &it->second;
}

std::optional<int64_t> DependencyLevels::LevelAbove(const Instruction* instruction,
                                                    int64_t step) const {
  int64_t level = 0;
  bool known = true;
  ForEachDependency(instruction, [&](const Instruction* dep) {
    const int64_t* dep_level = Level(dep);
    if (dep_level == nullptr) {
      known = false;
    } else {
      level = std::max(level, *dep_level + step);
    }
  });
  if (!known) return std::nullopt;
  return level;
}

bool DependencyLevels::Ensure(const Computation* computation) {
  auto [it, inserted] = ordered_.try_emplace(computation, true);
  if (!inserted) return it->second;
  // A post-order emits dependencies first, so a dependency without a level
  // when its user is reached is outside the computation or on a cycle.
  const std::vector<Instruction*> order = computation->MakePostOrder();
  level_.reserve(level_.size() + order.size());
  bool ordered = order.size() == static_cast<size_t>(computation->instruction_count());
  for (const Instruction* inst : order) {
    if (!ordered) break;
    const std::optional<int64_t> level = LevelAbove(inst, kGap);
    ordered = level.has_value();
    if (ordered) level_[inst] = *level;
  }
  if (!ordered) {
    for (const Instruction* inst : order) level_.erase(inst);
  }
  ordered_[computation] = ordered;
  return ordered;
}

void DependencyLevels::Added(const Instruction* instruction) {
  auto it = ordered_.find(instruction->parent());
  // Not computed yet: the first query will see the instruction.
  if (it == ordered_.end() || !it->second) return;
  const std::optional<int64_t> level = LevelAbove(instruction, 1);
  if (!level) {
    it->second = false;
    return;
  }
  level_[instruction] = *level;
}

void DependencyLevels::AddedEdge(const Instruction* operand, const Instruction* user) {
  auto it = ordered_.find(user->parent());
  if (it == ordered_.end() || !it->second) return;
  const int64_t* operand_level = Level(operand);
  if (operand_level == nullptr || Level(user) == nullptr) {
    it->second = false;
    return;
  }
  // Raise levels forward from `user` until every edge climbs again. The
  // graph stays acyclic (the caller checked), so this ends.
  std::vector<std::pair<const Instruction*, int64_t>> worklist = {{user, *operand_level + 1}};
  while (!worklist.empty()) {
    auto [inst, at_least] = worklist.back();
    worklist.pop_back();
    auto level_it = level_.find(inst);
    // Users outside the levelled computation cannot lead back into it.
    if (level_it == level_.end() || level_it->second >= at_least) continue;
    level_it->second = at_least;
    for (const Instruction* next : inst->users()) worklist.emplace_back(next, at_least + 1);
    for (const Instruction* next : inst->control_successors()) {
      worklist.emplace_back(next, at_least + 1);
    }
  }
}

bool DependencyLevels::DependsOn(const Instruction* from, const Instruction* target) {
  if (from == target) return true;
  const Computation* computation = target->parent();
  if (computation == nullptr || from->parent() != computation || !Ensure(computation)) {
    return DependsOnByFullWalk(from, target);
  }
  const int64_t* target_level = Level(target);
  if (target_level == nullptr) return DependsOnByFullWalk(from, target);
  const int64_t bound = *target_level;
  visited_.clear();
  stack_.clear();
  stack_.push_back(from);
  while (!stack_.empty()) {
    const Instruction* inst = stack_.back();
    stack_.pop_back();
    if (inst == target) return true;
    // Everything `inst` depends on has a lower level than `inst`.
    const int64_t* level = Level(inst);
    if (level != nullptr && *level <= bound) continue;
    if (!visited_.insert(inst).second) continue;
    ForEachDependency(inst, [&](const Instruction* dep) { stack_.push_back(dep); });
  }
  return false;
}

}  // namespace hlogym

// DependencyLevels: answers "does `from` depend on `target`?" (through
// operands or control edges) for the Rewriter's cycle check, with walks
// bounded by a level per instruction instead of a full backward walk.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"

namespace hlogym {

// Every instruction of a computation gets a level greater than the levels of
// its operands and control predecessors, so a backward walk looking for
// `target` can stop at any instruction whose level is not above target's:
// nothing it depends on can be `target`. The answers are those of a full
// walk; edges added later must be reported through AddedEdge to keep the
// levels valid. A computation whose dependencies leave it or form a cycle
// is walked in full (no levels).
class DependencyLevels {
 public:
  // Whether `from` depends on `target`, `from` == `target` included.
  bool DependsOn(const Instruction* from, const Instruction* target);

  // Gives `instruction` (new, not yet used) a level above its operands'
  // and control predecessors'.
  void Added(const Instruction* instruction);
  // `user` now uses (or follows) `operand`: raises the levels of `user` and
  // what depends on it where needed.
  void AddedEdge(const Instruction* operand, const Instruction* user);

  // The same question answered by a full backward walk: the reference the
  // bounded walk must agree with.
  static bool DependsOnByFullWalk(const Instruction* from, const Instruction* target);

 private:
  // Levels of `computation`'s instructions, computed on first use; false if
  // it is walked in full.
  bool Ensure(const Computation* computation);
  const int64_t* Level(const Instruction* instruction) const;
  // `step` more than the highest level among `instruction`'s dependencies,
  // or nullopt when one of them has none (outside the computation, or
  // unlevelled).
  std::optional<int64_t> LevelAbove(const Instruction* instruction, int64_t step) const;

  absl::flat_hash_map<const Computation*, bool> ordered_;
  absl::flat_hash_map<const Instruction*, int64_t> level_;
  // Scratch of DependsOn, kept to avoid an allocation per query.
  absl::flat_hash_set<const Instruction*> visited_;
  std::vector<const Instruction*> stack_;
};

}  // namespace hlogym

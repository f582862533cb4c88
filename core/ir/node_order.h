// The canonical order of a module's instructions: computations in module
// order (callees first), each in post-order. Observations number nodes in this
// order, and decisions name alternatives by these indices, so a cloned or
// re-parsed module replays identically.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/ir/module.h"

namespace hlogym {

// Which computations' instructions are nodes.
enum class NodeScope {
  kAll,
  // Only the computations the entry reaches without going through a
  // candidate (an operand k>0 of an alternatives node): a fusion
  // candidate's fused computation repeats its members' bodies, which are
  // nodes already, and is most of an alternative graph. What is left is the
  // module that declining every alternative would leave, plus the candidate
  // instructions.
  kWithoutCandidateBodies,
};

std::vector<Instruction*> NodeOrder(const Module& module);
// The same into `order` (cleared first, its capacity reused), and, if given,
// each node's computation (its index in module order, counting only the
// computations in `scope`) into `computations`.
void FillNodeOrder(const Module& module, std::vector<Instruction*>& order,
                   std::vector<int32_t>* computations = nullptr,
                   NodeScope scope = NodeScope::kAll);

// The computations of a module whose instructions are nodes in a scope.
class ComputationScope {
 public:
  ComputationScope(const Module& module, NodeScope scope);
  bool Contains(const Computation& computation) const {
    return all_ || reached_.contains(&computation);
  }

 private:
  bool all_ = true;
  absl::flat_hash_set<const Computation*> reached_;  // unless all_
};

// Whether `instruction` is an operand k>0 of an alternatives node.
bool IsCandidate(const Instruction& instruction);

// The instructions `wanted` accepts, each with its index in NodeOrder, in that
// order. Only computations holding one are ordered (the others are skipped by
// their size), which matters when most computations are fused ones.
std::vector<std::pair<Instruction*, int64_t>> FindInNodeOrder(
    const Module& module, const std::function<bool(const Instruction&)>& wanted);
// The same for the instructions of one opcode (no call per instruction: an
// env step looks for its alternatives nodes among ~20K instructions twice).
std::vector<std::pair<Instruction*, int64_t>> FindInNodeOrder(const Module& module,
                                                              Opcode opcode);

}  // namespace hlogym

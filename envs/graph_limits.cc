#include "envs/graph_limits.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/prefetch.h"

namespace hlogym {

GraphSize MeasureGraph(const Module& module, NodeScope scope) {
  return MeasureGraph(module, nullptr, nullptr, scope);
}

GraphSize MeasureGraph(const Module& module, std::vector<AlternativeNode>* alternatives,
                       std::vector<Instruction*>* entry_order, NodeScope scope) {
  // Mirrors BuildGraph in core/features/graph_features.cc: every instruction
  // of a computation in scope is a node; edges are operands, the roots of
  // called computations in scope, and control predecessors.
  GraphSize size;
  if (alternatives != nullptr) alternatives->clear();
  if (entry_order != nullptr) entry_order->clear();
  const ComputationScope in_scope(module, scope);
  for (const auto& computation : module.computations()) {
    if (!in_scope.Contains(*computation)) continue;
    // NodeOrder numbers the computations' post-orders one after another.
    const int64_t offset = size.nodes;
    const int64_t alternatives_before = size.alternatives;
    size.nodes += computation->instruction_count();
    // Most of the graph is the dry pass's candidates, out of cache by now:
    // each is prefetched a few ahead (the fields read are in two lines).
    const auto& stored = computation->instructions();
    for (size_t i = 0; i < stored.size(); ++i) {
      PrefetchAhead(stored, i, 2 * kCacheLine);
      const Instruction* inst = stored[i].get();
      size.edges += inst->operand_count();
      size.edges += static_cast<int64_t>(inst->control_predecessors().size());
      for (const Computation* callee : inst->called_computations()) {
        if (callee != nullptr && callee->root() != nullptr && in_scope.Contains(*callee)) {
          ++size.edges;
        }
      }
      if (inst->opcode() == Opcode::kAlternatives) {
        ++size.alternatives;
        size.max_choices = std::max(size.max_choices, inst->operand_count());
      }
    }
    if (alternatives == nullptr || size.alternatives == alternatives_before) continue;
    std::vector<Instruction*> order = computation->MakePostOrder();
    for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
      if (order[i]->opcode() == Opcode::kAlternatives) alternatives->push_back({order[i], offset + i});
    }
    if (entry_order != nullptr && computation.get() == module.entry()) {
      *entry_order = std::move(order);
    }
  }
  return size;
}

absl::Status CheckGraphFits(const GraphSize& size, const FeatureLimits& limits,
                            const std::string& env_id, const std::string& benchmark,
                            const std::string& module_name) {
  std::vector<std::string> exceeded;
  std::vector<std::string> keys;
  auto check = [&](int64_t count, const char* what, const char* key, int64_t limit) {
    if (count <= limit) return;
    exceeded.push_back(absl::StrCat(count, " ", what, " but ", key, " is ", limit));
    keys.push_back(key);
  };
  check(size.nodes, "nodes", "max_nodes", limits.max_nodes);
  check(size.edges, "edges", "max_edges", limits.max_edges);
  check(size.alternatives, "alternatives", "max_alternatives", limits.max_alternatives);
  check(size.max_choices, "choices at one alternatives node", "max_choices",
        limits.max_choices);
  if (exceeded.empty()) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "benchmark `", benchmark, "` (module `", module_name, "`) does not fit env `", env_id,
      "`: ", absl::StrJoin(exceeded, ", "), "; raise ", absl::StrJoin(keys, ", "),
      " in the env config or leave this module out of the dataset"));
}

}  // namespace hlogym

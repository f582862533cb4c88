#include "agents/xla_agent.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "agents/choice_groups.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "core/rewrite/decisions.h"

namespace hlogym {

absl::StatusOr<std::vector<int64_t>> XlaAgent::Act(const HloRewriteEnv& env) {
  RETURN_IF_ERROR(CheckActable(env));
  const int64_t num_alternatives = static_cast<int64_t>(FindAlternatives(env.module()).size());
  const std::vector<ChoiceGroup> groups = GroupAlternatives(env.module());
  // Apply mode takes the first rewrite a pass finds, candidate 1.
  std::vector<int64_t> group_choices(groups.size(), 1);
  if (IsProducerConsumerFusion(env.info().dry_pass)) {
    // Post-order positions, per computation, computed when first needed.
    absl::flat_hash_map<const Computation*, absl::flat_hash_map<const Instruction*, int64_t>>
        positions;
    auto position = [&](const Instruction* inst) -> int64_t {
      auto [it, inserted] = positions.try_emplace(inst->parent());
      if (inserted) {
        const std::vector<Instruction*> order = inst->parent()->MakePostOrder();
        for (size_t i = 0; i < order.size(); ++i) it->second[order[i]] = static_cast<int64_t>(i);
      }
      auto found = it->second.find(inst);
      return found == it->second.end() ? -1 : found->second;
    };
    // The producer each candidate fuses in, and every producer some
    // consumer could absorb now.
    std::vector<std::vector<const Instruction*>> producers(groups.size());
    absl::flat_hash_set<const Instruction*> absorbable;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (const Instruction* candidate : groups[g].candidates) {
        producers[g].push_back(FusedProducer(*groups[g].original, *candidate));
        if (producers[g].back() != nullptr) absorbable.insert(producers[g].back());
      }
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      // XLA visits consumers from the root up, so a consumer that one of its
      // users could still absorb waits: it is either absorbed whole, or
      // fuses its own producers once no user can take it any more.
      if (absorbable.contains(groups[g].original)) {
        group_choices[g] = 0;
        continue;
      }
      int64_t latest = -2;
      for (size_t c = 0; c < producers[g].size(); ++c) {
        const int64_t pos = producers[g][c] == nullptr ? -1 : position(producers[g][c]);
        if (pos > latest) {
          latest = pos;
          group_choices[g] = static_cast<int64_t>(c) + 1;
        }
      }
    }
  }
  return ExpandGroupChoices(groups, group_choices, num_alternatives);
}

}  // namespace hlogym

#include "core/passes/algsimp.h"

#include "absl/container/flat_hash_map.h"
#include "core/base/status_macros.h"
#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

// Rules by opcode, built once from the family tables.
const absl::flat_hash_map<Opcode, std::vector<const AlgsimpRule*>>& RulesByOpcode() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<Opcode, std::vector<const AlgsimpRule*>>();
    for (const auto* family : {&ArithmeticRules(), &ShapeRules()}) {
      for (const AlgsimpRule& rule : *family) (*t)[rule.opcode].push_back(&rule);
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::vector<std::string_view> AlgsimpRuleNames() {
  std::vector<std::string_view> names;
  for (const auto* family : {&ArithmeticRules(), &ShapeRules()}) {
    for (const AlgsimpRule& rule : *family) names.push_back(rule.name);
  }
  return names;
}

absl::StatusOr<bool> AlgsimpPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  const auto& rules = RulesByOpcode();
  for (Computation* computation : computations) {
    RuleContext context{rewriter, computation};
    for (Instruction* inst : computation->MakePostOrder()) {
      if (rewriter.IsRemoved(inst)) continue;
      auto it = rules.find(inst->opcode());
      if (it == rules.end()) continue;
      for (const AlgsimpRule* rule : it->second) {
        Instruction* replacement = rule->apply(inst, context);
        if (replacement == nullptr || replacement == inst) continue;
        RETURN_IF_ERROR(rewriter.Replace(inst, replacement));
        changed = true;
        if (!rewriter.dry()) break;  // inst is gone; its replacement is final
      }
    }
  }
  return changed;
}

}  // namespace hlogym

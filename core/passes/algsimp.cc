#include "core/passes/algsimp.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

using RuleTable = std::array<std::vector<const AlgsimpRule*>, kNumOpcodes>;

// Rules by opcode, in family order, built once.
const RuleTable& RulesByOpcode() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable();
    for (const auto* family : AlgsimpRuleFamilies()) {
      for (const AlgsimpRule& rule : *family) {
        (*t)[static_cast<size_t>(rule.opcode)].push_back(&rule);
      }
    }
    return t;
  }();
  return *table;
}

bool HasControlDependencies(const Instruction& inst) {
  return !inst.control_predecessors().empty() || !inst.control_successors().empty();
}

}  // namespace

std::vector<std::string_view> AlgsimpRuleNames() {
  std::vector<std::string_view> names;
  for (const auto* family : AlgsimpRuleFamilies()) {
    for (const AlgsimpRule& rule : *family) names.push_back(rule.name);
  }
  return names;
}

absl::StatusOr<bool> AlgsimpPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation()) computations.push_back(c.get());
  }
  const RuleTable& rules = RulesByOpcode();
  for (Computation* computation : computations) {
    RuleContext context{rewriter, computation};
    for (Instruction* inst : computation->MakePostOrder()) {
      const auto& candidates = rules[static_cast<size_t>(inst->opcode())];
      if (candidates.empty() || rewriter.IsRemoved(inst) || HasControlDependencies(*inst)) {
        continue;
      }
      for (const AlgsimpRule* rule : candidates) {
        Instruction* replacement = rule->apply(inst, context);
        if (replacement == nullptr || replacement == inst) continue;
        if (!replacement->shape().Compatible(inst->shape())) {
          return absl::InternalError(absl::StrCat(
              "algsimp rule `", std::string(rule->name), "` replaced `", inst->name(),
              "` by an instruction of shape ", replacement->shape().ToString()));
        }
        RETURN_IF_ERROR(rewriter.Replace(inst, replacement));
        changed = true;
        if (!rewriter.dry()) break;  // inst is gone; its replacement is final
      }
    }
  }
  return changed;
}

}  // namespace hlogym

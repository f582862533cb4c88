// The algebraic simplifier ("algsimp"): runs the rule tables of
// algsimp_rules.h over every instruction. Apply mode takes the first rule
// that matches (run it to a fixed point); dry mode offers every matching
// rule's replacement as a candidate.
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

class AlgsimpPass : public Pass {
 public:
  std::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

// Names of every rule, for docs and tests.
std::vector<std::string_view> AlgsimpRuleNames();

}  // namespace hlogym

// The algebraic simplifier ("algsimp"): runs the rule tables of
// algsimp_rules.h over every instruction of every computation except fused
// ones (as XLA's). Apply mode takes the first rule that matches each
// instruction; the pipeline runs the pass to a fixed point. Dry mode offers
// every matching rule's replacement as a candidate. Instructions with control
// dependencies are left alone.
#pragma once

#include <string_view>
#include <vector>

#include "core/rewrite/pass.h"

namespace hlogym {

class AlgsimpPass : public Pass {
 public:
  std::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

// Names of every rule, in the order the pass tries them (for docs and tests).
std::vector<std::string_view> AlgsimpRuleNames();

}  // namespace hlogym

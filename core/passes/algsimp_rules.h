// The algebraic simplifier's rules. A rule looks at one instruction and
// returns an exact replacement (building any new instructions through the
// context), or nullptr when it does not apply. Adding a simplification means
// adding one rule to a table.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/rewrite/rewriter.h"

namespace hlogym {

struct RuleContext {
  Rewriter& rewriter;
  Computation* computation;
  // Adds a new instruction next to the one being simplified.
  Instruction* Add(std::unique_ptr<Instruction> instruction) {
    return rewriter.Add(computation, std::move(instruction));
  }
};

struct AlgsimpRule {
  std::string_view name;
  Opcode opcode;
  Instruction* (*apply)(Instruction* instruction, RuleContext& context);
};

// Rule tables by family, each in its own file.
const std::vector<AlgsimpRule>& ArithmeticRules();  // algsimp_arithmetic_rules.cc
const std::vector<AlgsimpRule>& ShapeRules();       // algsimp_shape_rules.cc

// Helpers shared by the rule files.
// Whether every element of `inst` is `value`: a constant, or a broadcast of one.
bool IsConstantValue(const Instruction* inst, double value);
// A scalar constant's value when `inst` is one or a broadcast of one.
std::optional<double> ScalarConstantValue(const Instruction* inst);

}  // namespace hlogym

// The algebraic simplifier's rules, in the spirit of MLIR rewrite patterns: a
// rule looks at one instruction of a given opcode and returns an exact
// replacement (building any new instructions through the RuleContext), or
// nullptr when it does not apply. Adding a simplification means adding one
// rule to one family's table.
//
// Every rule must be exact: its replacement computes the same bits as the
// original in the reference interpreter, up to the sign of a zero (x + 0 for
// x = -0, as XLA's simplifier) and to the last-bit rounding of pow (pow(x, 2)
// and pow(x, -1), which XLA rewrites too). Rules that would be wrong for NaN or
// infinity (x - x, x * 0 on floats) are restricted to integers.
//
// A rule decides whether it applies before it adds anything: a rule that adds
// instructions and then returns nullptr leaves dead code behind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ir/computation.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

// What a rule may use to build its replacement: new instructions go into the
// matched instruction's computation through the rewriter.
struct RuleContext {
  Rewriter& rewriter;
  Computation* computation;

  Instruction* Add(std::unique_ptr<Instruction> instruction) {
    return rewriter.Add(computation, std::move(instruction));
  }
  // A new `opcode` instruction of `shape` over `operands`.
  Instruction* Add(Opcode opcode, const Shape& shape,
                   absl::Span<Instruction* const> operands) {
    return Add(Instruction::Create(opcode, shape, operands));
  }
  // `value` in every element of `shape` (an array shape): a scalar constant,
  // broadcast when `shape` is not a scalar. Integers wrap to the type.
  Instruction* SplatInt(const Shape& shape, int64_t value);
  Instruction* SplatFloat(const Shape& shape, double value);
  // broadcast(scalar) to `shape`, or the scalar itself when `shape` is one.
  Instruction* BroadcastScalar(Instruction* scalar, const Shape& shape);
};

struct AlgsimpRule {
  std::string_view name;  // kebab-case, unique: "add-zero"
  Opcode opcode;          // the opcode of the instructions it looks at
  Instruction* (*apply)(Instruction* instruction, RuleContext& context);
};

// Rule tables by family, each in its own file.
const std::vector<AlgsimpRule>& ArithmeticRules();     // algsimp_arithmetic_rules.cc
const std::vector<AlgsimpRule>& CompareSelectRules();  // algsimp_compare_select_rules.cc
const std::vector<AlgsimpRule>& ConvertRules();        // algsimp_convert_rules.cc
const std::vector<AlgsimpRule>& ShapeRules();          // algsimp_shape_rules.cc
const std::vector<AlgsimpRule>& SliceRules();          // algsimp_slice_rules.cc
const std::vector<AlgsimpRule>& ReduceRules();         // algsimp_reduce_rules.cc

// Every family, in the order the pass tries them (algsimp_rules.cc).
const std::vector<const std::vector<AlgsimpRule>*>& AlgsimpRuleFamilies();

// ---- Helpers shared by the rule files (algsimp_rules.cc) ----

// The value of every element of `inst` when it is a constant, or a broadcast
// of a constant, whose elements are all equal (and not complex, not elided).
std::optional<double> ScalarConstantValue(const Instruction* inst);
// The same for integer and pred constants, read as int64 (exact for 64 bits).
std::optional<int64_t> ScalarConstantInt(const Instruction* inst);
// Whether every element of `inst` is `value` (see ScalarConstantValue).
bool IsConstantValue(const Instruction* inst, double value);

bool IsIntegral(const Instruction* inst);     // sN, uN
bool IsFloating(const Instruction* inst);     // f16, bf16, f32, f64, f8...
bool IsPredicate(const Instruction* inst);    // pred
// Whether `dims` is 0, 1, ..., n-1.
bool IsIdentityPermutation(absl::Span<const int64_t> dims);
// Whether an instruction has exactly this shape, layout included.
inline bool SameShape(const Instruction* a, const Instruction* b) {
  return a->shape() == b->shape();
}

}  // namespace hlogym

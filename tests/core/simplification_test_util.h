// Helpers shared by the simplification pass tests: parsing, running a pass
// in apply mode to a fixed point or in dry mode with chosen decisions,
// rendering an instruction tree compactly, and checking a rewritten module
// against the original with the verifier and the reference interpreter.
#pragma once

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/eval/equivalence.h"
#include "core/ir/module.h"
#include "core/ir/verifier.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym::simplification_test {

// Parses `text` or returns null (after failing the test).
inline std::unique_ptr<Module> Parse(std::string_view text) {
  auto module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? *std::move(module) : nullptr;
}

// An entry computation `main` holding `body` (instruction lines).
inline std::string EntryModule(std::string_view body, std::string_view extra = "") {
  return absl::StrCat("HloModule m\n\n", std::string(extra), "\nENTRY main {\n", std::string(body),
                      "\n}\n");
}

// A compact rendering of the expression rooted at `inst`: parameters are
// p<N>, constants their value, others opcode{dimensions}(operands...), with
// slices as slice[start:limit:stride,...] and compares as compare.DIR.
inline std::string Expr(const Instruction* inst) {
  switch (inst->opcode()) {
    case Opcode::kParameter:
      return absl::StrCat("p", inst->parameter_number());
    case Opcode::kConstant:
      return inst->literal().ToString();
    default:
      break;
  }
  std::string out(OpcodeName(inst->opcode()));
  if (inst->opcode() == Opcode::kCompare) {
    absl::StrAppend(&out, ".", std::string(ComparisonDirectionName(inst->comparison_direction())));
  }
  if (inst->opcode() == Opcode::kSlice) {
    const SliceAttrs& a = inst->attrs<SliceAttrs>();
    std::vector<std::string> parts;
    for (size_t d = 0; d < a.starts.size(); ++d) {
      parts.push_back(absl::StrCat(a.starts[d], ":", a.limits[d], ":",
                                   d < a.strides.size() ? a.strides[d] : 1));
    }
    absl::StrAppend(&out, "[", absl::StrJoin(parts, ","), "]");
  }
  if (inst->opcode() == Opcode::kGetTupleElement) absl::StrAppend(&out, ".", inst->tuple_index());
  if (!inst->dimensions().empty()) {
    absl::StrAppend(&out, "{", absl::StrJoin(inst->dimensions(), ","), "}");
  }
  std::vector<std::string> operands;
  for (const Instruction* operand : inst->operands()) operands.push_back(Expr(operand));
  absl::StrAppend(&out, "(", absl::StrJoin(operands, ","), ")");
  return out;
}

inline std::string RootExpr(const Module& module) { return Expr(module.entry()->root()); }

// Runs `spec` in apply mode until it changes nothing (at most 25 times).
inline void RunToFixedPoint(std::string_view spec, Module& module) {
  for (int i = 0; i < 25; ++i) {
    auto pass = CreatePass(spec);
    ASSERT_TRUE(pass.ok()) << pass.status();
    absl::StatusOr<bool> changed = RunPass(**pass, module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    if (!*changed) return;
  }
  FAIL() << spec << " did not reach a fixed point";
}

// Runs `spec` in dry mode once; returns the number of alternatives nodes.
inline int64_t RunDry(std::string_view spec, Module& module) {
  auto pass = CreatePass(spec);
  EXPECT_TRUE(pass.ok()) << pass.status();
  if (!pass.ok()) return -1;
  absl::StatusOr<int64_t> offered = RunDryPass(**pass, module);
  EXPECT_TRUE(offered.ok()) << offered.status();
  return offered.ok() ? *offered : -1;
}

// Dry rounds choosing `choice` (clamped to each node's range), or uniformly
// at random when `rng` is given, until the pass offers nothing (25 rounds).
inline absl::Status DryEpisode(std::string_view spec, Module& module, int64_t choice,
                               std::mt19937_64* rng = nullptr) {
  for (int round = 0; round < 25; ++round) {
    auto pass = CreatePass(spec);
    if (!pass.ok()) return pass.status();
    absl::StatusOr<int64_t> offered = RunDryPass(**pass, module);
    if (!offered.ok()) return offered.status();
    if (*offered == 0) return absl::OkStatus();
    std::vector<int64_t> choices;
    for (const AlternativeNode& alt : FindAlternatives(module)) {
      const int64_t n = alt.num_choices();
      choices.push_back(rng != nullptr ? std::uniform_int_distribution<int64_t>(0, n - 1)(*rng)
                                       : std::min(choice, n - 1));
    }
    if (absl::Status s = ApplyChoices(module, choices); !s.ok()) return s;
    if (rng == nullptr && choice == 0) return absl::OkStatus();  // would repeat forever
  }
  return absl::OkStatus();
}

// "" when `rewritten` verifies and computes what `original` computes.
inline std::string CheckEquivalent(const Module& original, const Module& rewritten) {
  if (absl::Status s = Verify(rewritten); !s.ok()) {
    return absl::StrCat("verify: ", s.message());
  }
  absl::StatusOr<EquivalenceReport> report = Equivalent(original, rewritten);
  if (!report.ok()) return absl::StrCat("evaluate: ", report.status().message());
  return report->equivalent ? "" : report->message;
}

// The text of a file under the source tree ("/data/corpus/hlo/x.hlo").
inline std::string ReadSource(std::string_view path) {
  std::ifstream in(std::string(HLOGYM_SOURCE_DIR) + std::string(path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline int64_t CountOpcode(const Module& module, Opcode opcode) {
  int64_t n = 0;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) n += inst->opcode() == opcode;
  }
  return n;
}

}  // namespace hlogym::simplification_test

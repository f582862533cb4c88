// Helpers shared by the fusion tests: parsing, running passes in apply and
// dry mode, random decision episodes, and checks that every fusion in a
// module is emittable, verifies and computes what the original computes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/ir/module.h"
#include "core/ir/verifier.h"
#include "core/passes/fusion_emittable.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym::fusion_test {

// A reducer computation `add_f32`, to paste in front of test modules.
inline constexpr std::string_view kAddF32 = R"(
add_f32 {
  add_lhs = f32[] parameter(0)
  add_rhs = f32[] parameter(1)
  ROOT add_sum = f32[] add(add_lhs, add_rhs)
}
max_f32 {
  max_lhs = f32[] parameter(0)
  max_rhs = f32[] parameter(1)
  ROOT max_max = f32[] maximum(max_lhs, max_rhs)
}
)";

inline std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// "HloModule m" + the reducers + `body` (computations, ENTRY last).
inline std::unique_ptr<Module> ParseWithReducers(std::string_view body) {
  return Parse("HloModule m\n" + std::string(kAddF32) + std::string(body));
}

inline std::unique_ptr<Module> LoadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

// The corpus files under data/corpus/<sub>, sorted.
inline std::vector<std::filesystem::path> CorpusFiles(std::string_view sub) {
  const std::filesystem::path dir =
      std::filesystem::path(HLOGYM_SOURCE_DIR) / "data" / "corpus" / std::string(sub);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `spec` in apply mode; returns whether it changed the module.
inline bool Apply(std::string_view spec, Module& module) {
  absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(spec);
  EXPECT_TRUE(pass.ok()) << pass.status();
  if (!pass.ok()) return false;
  absl::StatusOr<bool> changed = RunPass(**pass, module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return changed.ok() && *changed;
}

// Runs `spec` in apply mode until it changes nothing (at most 25 times).
inline void ApplyToFixedPoint(std::string_view spec, Module& module) {
  for (int i = 0; i < 25 && Apply(spec, module); ++i) {
  }
}

// Runs `spec` in dry mode; returns the number of alternatives nodes.
inline int64_t Dry(std::string_view spec, Module& module) {
  absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(spec);
  EXPECT_TRUE(pass.ok()) << pass.status();
  if (!pass.ok()) return -1;
  absl::StatusOr<int64_t> offered = RunDryPass(**pass, module);
  EXPECT_TRUE(offered.ok()) << offered.status();
  return offered.ok() ? *offered : -1;
}

// Dry `spec` with seeded random choices, round after round until it offers
// nothing (at most `rounds`). Returns the number of rounds that offered
// something.
inline absl::StatusOr<int> RandomEpisode(std::string_view spec, Module& module, uint64_t seed,
                                         int rounds = 25) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(spec);
    if (!pass.ok()) return pass.status();
    absl::StatusOr<int64_t> offered = RunDryPass(**pass, module);
    if (!offered.ok()) return offered.status();
    if (*offered == 0) return round;
    std::vector<int64_t> choices;
    for (const AlternativeNode& alt : FindAlternatives(module)) {
      choices.push_back(std::uniform_int_distribution<int64_t>(0, alt.num_choices() - 1)(rng));
    }
    if (absl::Status s = ApplyChoices(module, choices); !s.ok()) return s;
  }
  return rounds;
}

// The fusion instructions of non-fusion computations.
inline std::vector<const Instruction*> Fusions(const Module& module) {
  std::vector<const Instruction*> fusions;
  for (const auto& c : module.computations()) {
    if (c->IsFusionComputation()) continue;
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == Opcode::kFusion) fusions.push_back(inst.get());
    }
  }
  return fusions;
}

inline int64_t CountOpcode(const Computation& computation, Opcode opcode) {
  int64_t n = 0;
  for (const auto& inst : computation.instructions()) n += inst->opcode() == opcode;
  return n;
}

inline int64_t CountFusedOpcode(const Instruction& fusion, Opcode opcode) {
  return CountOpcode(*fusion.fused_computation(), opcode);
}

// "" when every fusion is emittable with the kind it declares and its
// computation points back at it.
inline std::string CheckFusions(const Module& module) {
  for (const Instruction* fusion : Fusions(module)) {
    absl::StatusOr<FusionKind> kind = CheckEmittableFusion(*fusion->fused_computation());
    if (!kind.ok()) return std::string(kind.status().message());
    if (*kind != fusion->fusion_kind()) return fusion->name() + ": wrong kind";
    if (fusion->fused_computation()->fusion_instruction() != fusion) {
      return fusion->name() + ": fused computation does not point back";
    }
  }
  return "";
}

// "" when `rewritten` verifies, has emittable fusions and computes what
// `original` computes on the formula inputs.
inline std::string CheckAgainst(const Module& original, const Module& rewritten) {
  if (absl::Status s = Verify(rewritten); !s.ok()) return "verify: " + std::string(s.message());
  if (std::string why = CheckFusions(rewritten); !why.empty()) return "fusions: " + why;
  absl::StatusOr<EquivalenceReport> report = Equivalent(original, rewritten);
  if (!report.ok()) return "evaluate: " + std::string(report.status().message());
  return report->equivalent ? "" : report->message;
}

// A module with its formula inputs and outputs, evaluated once, to check
// many rewrites of it against.
struct Reference {
  std::unique_ptr<Module> module;
  std::vector<Literal> inputs;
  std::vector<Literal> outputs;
};

inline std::unique_ptr<Reference> MakeReference(std::unique_ptr<Module> module) {
  if (module == nullptr) return nullptr;
  auto ref = std::make_unique<Reference>();
  ref->inputs = FormulaInputs(*module);
  absl::StatusOr<std::vector<Literal>> outputs = EvaluateFlat(*module, ref->inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  if (!outputs.ok()) return nullptr;
  ref->outputs = *std::move(outputs);
  ref->module = std::move(module);
  return ref;
}

// The reference of a corpus file, evaluated once per test binary run.
inline const Reference* CachedReference(const std::filesystem::path& path) {
  static auto* cache = new std::map<std::string, std::unique_ptr<Reference>>();
  std::unique_ptr<Reference>& ref = (*cache)[path.string()];
  if (ref == nullptr) ref = MakeReference(LoadFile(path));
  return ref.get();
}

// CheckAgainst with the reference's outputs evaluated once.
inline std::string CheckAgainstReference(const Reference& ref, const Module& rewritten) {
  if (absl::Status s = Verify(rewritten); !s.ok()) return "verify: " + std::string(s.message());
  if (std::string why = CheckFusions(rewritten); !why.empty()) return "fusions: " + why;
  absl::StatusOr<std::vector<Literal>> outputs = EvaluateFlat(rewritten, ref.inputs);
  if (!outputs.ok()) return "evaluate: " + std::string(outputs.status().message());
  EquivalenceReport report = CompareLiterals(ref.outputs, *outputs);
  return report.equivalent ? "" : report.message;
}

}  // namespace hlogym::fusion_test

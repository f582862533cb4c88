// Helpers shared by the tests of the backend lowerings (conv-to-gemm,
// scan-blocking, select-and-scatter-to-scatter, topk-to-reductions): run one
// on a copy and check the copy against the original with the verifier and
// the reference interpreter.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/eval/equivalence.h"
#include "core/ir/verifier.h"
#include "core/rewrite/pass.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym::lowering_test {

// data/corpus/small/hlo/`file`, parsed (null after failing the test).
inline std::unique_ptr<Module> LoadSmallTwin(const std::string& file) {
  std::stringstream text;
  text << std::ifstream(std::filesystem::path(HLOGYM_SOURCE_DIR) / "data/corpus/small/hlo" / file)
              .rdbuf();
  auto module = ParseModule(text.str());
  EXPECT_TRUE(module.ok()) << file << ": " << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// Runs `pass` in apply mode on a copy of `original` (kept in `*lowered`
// when given): "" when the copy verifies and computes what `original`
// computes on the formula inputs, else what went wrong.
inline std::string LowerAndCompare(Pass& pass, const Module& original,
                                   std::unique_ptr<Module>* lowered = nullptr,
                                   const EquivalenceOptions& options = {}) {
  std::unique_ptr<Module> module = original.Clone();
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  if (!changed.ok()) return "run: " + std::string(changed.status().message());
  std::string why;
  if (absl::Status s = Verify(*module); !s.ok()) {
    why = "verify: " + std::string(s.message());
  } else if (absl::StatusOr<EquivalenceReport> report = Equivalent(original, *module, options);
             !report.ok()) {
    why = "evaluate: " + std::string(report.status().message());
  } else if (!report->equivalent) {
    why = report->message;
  }
  if (lowered != nullptr) *lowered = std::move(module);
  return why;
}

// A forward, a backward-input (base-dilated, reversed) and a backward-filter
// convolution (window larger than the output; it reads the forward one's
// input and result), with feature groups in the first: conv-to-gemm's test
// checks the lowering against the interpreter, the GPU executable's test
// runs it on a GPU.
inline constexpr char kThreeConvolutions[] = R"(HloModule m
ENTRY e {
  x = f32[4,12,12,6] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  g = f32[4,6,6,8] parameter(2)
  w = f32[3,3,8,6] parameter(3)
  fwd = f32[4,12,12,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  bin = f32[4,12,12,6] convolution(g, w), window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f
  bfl = f32[3,3,6,8] convolution(x, fwd), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT t = (f32[4,12,12,8], f32[4,12,12,6], f32[3,3,6,8]) tuple(fwd, bin, bfl)
})";

// A module's text with a name, for parametrized cases.
struct NamedModule {
  const char* name;
  std::string text;
};

inline std::string CaseName(const ::testing::TestParamInfo<NamedModule>& info) {
  return info.param.name;
}

}  // namespace hlogym::lowering_test

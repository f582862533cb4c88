// Every rewrite is checked, never assumed: for each small-shape corpus twin
// and each dry pass, 20 seeded random decision sets are applied round after
// round until the pass offers nothing; the result must verify and compute
// what the original computes (reference interpreter). The same for apply
// mode and the default pipeline. HLOGYM_LONG_TESTS=1 adds the full-size
// corpus.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/eval/equivalence.h"
#include "core/ir/verifier.h"
#include "core/passes/default_pipeline.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Modules(bool full_size) {
  const fs::path dir = fs::path(HLOGYM_SOURCE_DIR) / "data" / "corpus" /
                       (full_size ? fs::path("hlo") : fs::path("small") / "hlo");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::unique_ptr<Module> Load(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  auto module = ParseModule(text.str());
  EXPECT_TRUE(module.ok()) << path << ": " << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// "" when `rewritten` verifies and matches `original` on the formula inputs.
std::string Check(const Module& original, const Module& rewritten) {
  if (absl::Status s = Verify(rewritten); !s.ok()) return "verify: " + std::string(s.message());
  absl::StatusOr<EquivalenceReport> report = Equivalent(original, rewritten);
  if (!report.ok()) return "evaluate: " + std::string(report.status().message());
  return report->equivalent ? "" : report->message;
}

// Runs `spec` in dry mode with random choices until it offers nothing, for
// at most 25 rounds, or until the module has grown 4x (random choices keep a
// producer for some uses and fuse a copy into others; on gpt2, random
// multi-output fusion grows the module 10x in 25 rounds and takes seconds per
// round, as an env's max_growth limit would stop it).
absl::Status RandomEpisode(const std::string& spec, Module& module, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t start_size = module.instruction_count();
  for (int round = 0; round < 25 && module.instruction_count() <= 4 * start_size; ++round) {
    auto pass = CreatePass(spec);
    if (!pass.ok()) return pass.status();
    absl::StatusOr<int64_t> offered = RunDryPass(**pass, module);
    if (!offered.ok()) return offered.status();
    if (*offered == 0) return absl::OkStatus();
    std::vector<int64_t> choices;
    for (const AlternativeNode& alt : FindAlternatives(module)) {
      choices.push_back(std::uniform_int_distribution<int64_t>(0, alt.num_choices() - 1)(rng));
    }
    if (absl::Status s = ApplyChoices(module, choices); !s.ok()) return s;
  }
  return absl::OkStatus();
}

class RewriteEquivalenceTest : public ::testing::TestWithParam<std::string> {};

void RunDrySpec(const std::string& spec, bool full_size, int decision_sets) {
  for (const fs::path& path : Modules(full_size)) {
    std::unique_ptr<Module> original = Load(path);
    if (!original) continue;
    for (int seed = 0; seed < decision_sets; ++seed) {
      std::unique_ptr<Module> module = original->Clone();
      absl::Status s = RandomEpisode(spec, *module, seed);
      ASSERT_TRUE(s.ok()) << path.stem() << " seed " << seed << ": " << s;
      const std::string why = Check(*original, *module);
      ASSERT_EQ(why, "") << spec << " on " << path.stem() << ", seed " << seed;
    }
  }
}

// 20 decision sets per module, as the issue asks (fusion's take about a
// minute and a half on two loaded cores: episodes of up to 25 rounds of
// growing fusions, each checked by the interpreter).
TEST_P(RewriteEquivalenceTest, RandomDecisionsPreserveSemantics) {
  RunDrySpec(GetParam(), /*full_size=*/false, 20);
}

TEST_P(RewriteEquivalenceTest, FullSizeCorpus) {
  if (std::getenv("HLOGYM_LONG_TESTS") == nullptr) GTEST_SKIP() << "set HLOGYM_LONG_TESTS=1";
  RunDrySpec(GetParam(), /*full_size=*/true, 3);
}

INSTANTIATE_TEST_SUITE_P(DryPasses, RewriteEquivalenceTest,
                         ::testing::Values("algsimp", "cse", "constant-folding", "dce",
                                           "fusion", "fusion(mode=general)",
                                           "multi-output-fusion",
                                           "multi-output-fusion(mode=general)",
                                           "horizontal-fusion", "horizontal-fusion(mode=general)",
                                           "tuple-simplifier", "call-inliner"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(DefaultPipelineTest, PreservesSemanticsAndFuses) {
  int64_t fused_modules = 0;
  for (const fs::path& path : Modules(false)) {
    std::unique_ptr<Module> original = Load(path);
    if (!original) continue;
    std::unique_ptr<Module> module = original->Clone();
    Pipeline pipeline = DefaultPipeline();
    ASSERT_FALSE(pipeline.Run(*module).value()) << "apply-mode pipelines never pause";
    ASSERT_EQ(Check(*original, *module), "") << path.stem();
    for (const auto& c : module->computations()) fused_modules += c->IsFusionComputation();
  }
  EXPECT_GT(fused_modules, 24);  // every module gets fusions
}

TEST(DefaultPipelineTest, ChoosingZeroEverywhereRestoresTheModule) {
  for (const fs::path& path : Modules(false)) {
    std::unique_ptr<Module> module = Load(path);
    if (!module) continue;
    Prune(*module);  // the parsed text may hold dead code that pruning drops
    const int64_t before = module->instruction_count();
    const std::string text_before = PrintModule(*module);
    auto pass = CreatePass("fusion(mode=general)").value();
    const int64_t offered = RunDryPass(*pass, *module).value();
    std::vector<int64_t> zeros(FindAlternatives(*module).size(), 0);
    ASSERT_EQ(static_cast<int64_t>(zeros.size()), offered);
    ASSERT_TRUE(ApplyChoices(*module, zeros).ok());
    EXPECT_EQ(module->instruction_count(), before) << path.stem();
    EXPECT_EQ(PrintModule(*module), text_before) << path.stem();
  }
}

}  // namespace
}  // namespace hlogym

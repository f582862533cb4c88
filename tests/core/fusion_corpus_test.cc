// The fusion passes on the corpus: for every small-shape twin, each fusion
// pass in apply mode, and in dry mode with seeded random decisions round
// after round until it offers nothing (at most 25 rounds), gives a module
// that verifies, whose fusions are emittable, and that computes what the
// original computes (reference interpreter). Multi-output and horizontal
// fusion start from the module fused the way the default pipeline fuses it.
// The default run uses 2 decision sets per module and pass;
// HLOGYM_LONG_TESTS=1 runs the 20 of issue 5. (tests/core/
// rewrite_equivalence_test.cc covers "fusion" and "fusion(mode=general)".)
#include <cstdlib>

#include "core/passes/default_pipeline.h"
#include "tests/core/fusion_test_util.h"

namespace hlogym {
namespace {

using fusion_test::ApplyToFixedPoint;
using fusion_test::CachedReference;
using fusion_test::CheckAgainstReference;
using fusion_test::CorpusFiles;
using fusion_test::Fusions;
using fusion_test::LoadFile;
using fusion_test::RandomEpisode;
using fusion_test::Reference;

bool LongTests() { return std::getenv("HLOGYM_LONG_TESTS") != nullptr; }

struct DrySpec {
  std::string spec;
  std::string pre;  // applied to a fixed point first ("" for none)
};

// The module each dry pass starts from: the twin, fused as `pre` says.
std::unique_ptr<Module> Start(const Reference& ref, const DrySpec& p) {
  std::unique_ptr<Module> start = ref.module->Clone();
  if (!p.pre.empty()) ApplyToFixedPoint(p.pre, *start);
  return start;
}

class FusionCorpusTest : public ::testing::TestWithParam<DrySpec> {};

TEST_P(FusionCorpusTest, RandomDecisionsPreserveSemantics) {
  const DrySpec& p = GetParam();
  // 20 decision sets with HLOGYM_LONG_TESTS; by default one per module,
  // seeded differently per pass so that runs cover different decisions.
  const int seeds = LongTests() ? 20 : 1;
  const uint64_t first_seed = LongTests() ? 0 : std::hash<std::string>()(p.spec) % 1000;
  for (const auto& path : CorpusFiles("small/hlo")) {
    const Reference* ref = CachedReference(path);
    ASSERT_NE(ref, nullptr) << path;
    std::unique_ptr<Module> start = Start(*ref, p);
    for (uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
      std::unique_ptr<Module> module = start->Clone();
      absl::StatusOr<int> rounds = RandomEpisode(p.spec, *module, seed);
      ASSERT_TRUE(rounds.ok()) << path.stem() << " seed " << seed << ": " << rounds.status();
      if (*rounds == 0 && p.pre.empty()) continue;  // nothing changed
      ASSERT_EQ(CheckAgainstReference(*ref, *module), "")
          << p.spec << " on " << path.stem() << ", seed " << seed;
    }
  }
}

TEST_P(FusionCorpusTest, ApplyModePreservesSemantics) {
  const DrySpec& p = GetParam();
  for (const auto& path : CorpusFiles("small/hlo")) {
    const Reference* ref = CachedReference(path);
    ASSERT_NE(ref, nullptr) << path;
    std::unique_ptr<Module> module = Start(*ref, p);
    const int64_t before = module->instruction_count();
    ApplyToFixedPoint(p.spec, *module);
    if (p.pre.empty() && module->instruction_count() == before &&
        Fusions(*module).empty()) {
      continue;  // nothing changed
    }
    ASSERT_EQ(CheckAgainstReference(*ref, *module), "") << p.spec << " on " << path.stem();
  }
}

INSTANTIATE_TEST_SUITE_P(
    FusionPasses, FusionCorpusTest,
    ::testing::Values(DrySpec{"fusion(may_duplicate=false)", ""},
                      DrySpec{"fusion(mode=general, may_duplicate=false)", ""},
                      DrySpec{"multi-output-fusion", "fusion"},
                      DrySpec{"multi-output-fusion(mode=general)", "fusion"},
                      DrySpec{"horizontal-fusion", "fusion"},
                      DrySpec{"horizontal-fusion(mode=general)", "fusion"}),
    [](const auto& info) {
      std::string name = info.param.spec;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(FusionCorpusTest, DryFusionThenMultiOutputThenHorizontal) {
  // A whole fusion episode: random producer-consumer decisions, then random
  // multi-output and horizontal ones on the result.
  const int seeds = LongTests() ? 20 : 1;
  for (const auto& path : CorpusFiles("small/hlo")) {
    const Reference* ref = CachedReference(path);
    ASSERT_NE(ref, nullptr) << path;
    if (!LongTests() && ref->module->instruction_count() > 1000) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      std::unique_ptr<Module> module = ref->module->Clone();
      for (const char* spec : {"fusion(mode=general)", "multi-output-fusion(mode=general)",
                               "horizontal-fusion(mode=general)"}) {
        absl::StatusOr<int> rounds = RandomEpisode(spec, *module, seed, /*rounds=*/8);
        ASSERT_TRUE(rounds.ok()) << path.stem() << " " << spec << ": " << rounds.status();
      }
      ASSERT_EQ(CheckAgainstReference(*ref, *module), "") << path.stem() << ", seed " << seed;
    }
  }
}

// ---- The default pipeline ---------------------------------------------------

TEST(DefaultPipelineStagesTest, OnePlaceListsEveryStage) {
  const std::vector<PipelineStage> stages = DefaultPipelineStages();
  ASSERT_EQ(stages.size(), 5u);
  EXPECT_EQ(stages[1].loop_count, -1);  // simplification to a fixed point
  EXPECT_EQ(stages[2].loop_count, -1);
  const std::vector<std::string> specs = DefaultPipelineSpecs();
  const std::vector<std::string> expected = {
      "call-inliner", "tuple-simplifier", "algsimp", "constant-folding", "cse", "dce",
      "fusion(mode=xla)", "multi-output-fusion(mode=xla)", "horizontal-fusion(mode=xla)",
      "fusion(mode=xla)", "cse", "dce"};
  EXPECT_EQ(specs, expected);
  for (const std::string& spec : specs) EXPECT_TRUE(CreatePass(spec).ok()) << spec;
  EXPECT_FALSE(BuildPipeline("bad", {{"s", {"no-such-pass"}, 1}}).ok());
}

// Kernels of the default pipeline's output per small twin: fusions plus the
// instructions left unfused that still need a kernel (library calls, free
// data movement and tuples aside).
int64_t FusionCount(const Module& module) { return static_cast<int64_t>(Fusions(module).size()); }

TEST(DefaultPipelineCountsTest, FusesLikeXla) {
  // Fusion counts on the small twins (the same programs as the full-size
  // corpus, whose table is in the fusion passes' report). XLA's counts
  // (data/corpus/xla_anchors.json) include Triton GEMM/softmax fusions and
  // split reductions; ours are plain loop and input fusions.
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"adam_update_10M_small", 7},          // XLA 8: one 3-output fusion per parameter
      {"elementwise_chain_2x16M_small", 1},  // XLA 1
      {"gelu_4096x4096_small", 1},           // XLA 1
      {"softmax_4096x1024_small", 2},        // XLA 1 (Triton softmax); max stays a reduce
      {"layernorm_8192x1024_small", 2},      // XLA 1 (Triton)
      {"pad_concat_slice_1024x1024", 1},     // XLA 1 (full-size only)
  };
  for (const auto& [name, count] : expected) {
    std::filesystem::path path =
        std::filesystem::path(HLOGYM_SOURCE_DIR) / "data" / "corpus" /
        (name.find("_small") == std::string::npos ? "hlo" : "small/hlo") / (name + ".hlo");
    std::unique_ptr<Module> module = LoadFile(path);
    ASSERT_NE(module, nullptr) << name;
    Pipeline pipeline = DefaultPipeline();
    ASSERT_TRUE(pipeline.Run(*module).ok());
    EXPECT_EQ(FusionCount(*module), count) << name;
    EXPECT_EQ(fusion_test::CheckFusions(*module), "") << name;
  }
}

TEST(DefaultPipelineCountsTest, EveryCorpusModuleEmitsAndMatches) {
  for (const auto& path : CorpusFiles("small/hlo")) {
    const Reference* ref = CachedReference(path);
    ASSERT_NE(ref, nullptr) << path;
    std::unique_ptr<Module> module = ref->module->Clone();
    Pipeline pipeline = DefaultPipeline();
    ASSERT_TRUE(pipeline.Run(*module).ok()) << path.stem();
    ASSERT_EQ(CheckAgainstReference(*ref, *module), "") << path.stem();
    // Nothing is left to fuse the same way: the pipeline reached its fixed point.
    std::unique_ptr<Module> again = module->Clone();
    EXPECT_FALSE(fusion_test::Apply("fusion(mode=xla)", *again)) << path.stem();
  }
}

}  // namespace
}  // namespace hlogym

// MeasureEpisodes: episodes planned on one runtime source, their end states
// timed on another. Two cost models stand in for planning and measuring, so
// every figure is exact and checkable.
#include "agents/episode_measurement.h"

#include <memory>
#include <string>
#include <vector>

#include "agents/episode_runner.h"
#include "backend/cost_model.h"
#include "core/ir/fingerprint.h"
#include "core/passes/default_pipeline.h"
#include "core/rewrite/decisions.h"
#include "gtest/gtest.h"
#include "tests/agents/agent_test_util.h"

namespace hlogym {
namespace {

using testing::MakeTestEnv;

TEST(EpisodeMeasurementTest, TimesTheOriginalDefaultAndFinalModulesOnTheOtherSource) {
  std::unique_ptr<HloRewriteEnv> env =
      MakeTestEnv("fusion-v0", {"softmax_4096x1024", "layernorm_8192x1024"}, 100);
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::vector<EpisodeResult>> results =
      RunEpisodes(*env, "xla", {{0, 0}, {1, 0}, {1, 1}}, 1, {});
  ASSERT_TRUE(results.ok()) << results.status();
  const std::vector<EpisodeResult> planned = *results;
  absl::StatusOr<std::shared_ptr<RuntimeSource>> cpu_model = MakeRuntimeSource("cost:cpu");
  ASSERT_TRUE(cpu_model.ok());
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), **cpu_model, *results).ok());
  for (size_t i = 0; i < results->size(); ++i) {
    const EpisodeResult& r = (*results)[i];
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.measured_on, "cost:cpu");
    EXPECT_EQ(r.planned.original_runtime, planned[i].original_runtime);
    EXPECT_EQ(r.planned.default_runtime, planned[i].default_runtime);
    EXPECT_EQ(r.planned.final_runtime, planned[i].final_runtime);
    EXPECT_EQ(r.final_runtime, EstimateCost(*r.final_module, CpuDevice()).seconds);
    const Module& original = *env->benchmarks().Prepared(r.benchmark).value()->module;
    EXPECT_EQ(r.original_runtime, EstimateCost(original, CpuDevice()).seconds);
    std::unique_ptr<Module> baseline = env->benchmarks().source(r.benchmark).Clone();
    Pipeline pipeline = DefaultPipeline();
    ASSERT_TRUE(pipeline.Run(*baseline).ok());
    EXPECT_EQ(r.default_runtime, EstimateCost(*baseline, CpuDevice()).seconds);
    // The CPU model is not the H100 one: the figures really were replaced.
    EXPECT_NE(r.final_runtime, r.planned.final_runtime);
  }
}

TEST(EpisodeMeasurementTest, EpisodesCutShortAreTimedWithoutTheirPendingAlternatives) {
  // Two steps: the episodes end truncated with the next dry pass offered.
  std::unique_ptr<HloRewriteEnv> env =
      MakeTestEnv("fusion-v0", {"softmax_4096x1024", "layernorm_8192x1024"}, 2);
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::vector<EpisodeResult>> results =
      RunEpisodes(*env, "random", {{0, 0}, {1, 0}}, 1, {});
  ASSERT_TRUE(results.ok()) << results.status();
  const std::vector<EpisodeResult> planned = *results;
  // Timed on the source they planned on, the figures must not move.
  absl::StatusOr<std::shared_ptr<RuntimeSource>> same = MakeRuntimeSource("cost");
  ASSERT_TRUE(same.ok());
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), **same, *results).ok());
  for (size_t i = 0; i < results->size(); ++i) {
    const EpisodeResult& r = (*results)[i];
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_TRUE(r.truncated);
    EXPECT_TRUE(FindAlternatives(*r.final_module).empty());
    EXPECT_EQ(Fingerprint(*r.final_module), r.fingerprint);
    EXPECT_EQ(r.final_runtime, planned[i].final_runtime);
  }
}

TEST(EpisodeMeasurementTest, FailedEpisodesAreLeftAloneAndMissingModulesAreAnError) {
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv("fusion-v0", {"softmax_4096x1024"}, 4);
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::shared_ptr<RuntimeSource>> cpu_model = MakeRuntimeSource("cost:cpu");
  ASSERT_TRUE(cpu_model.ok());
  std::vector<EpisodeResult> results(1);
  results[0].benchmark = 0;
  results[0].error = "failed earlier";
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), **cpu_model, results).ok());
  EXPECT_EQ(results[0].error, "failed earlier");
  EXPECT_TRUE(results[0].measured_on.empty());

  results[0].error.clear();
  results[0].benchmark_name = "softmax";
  absl::Status missing = MeasureEpisodes(env->benchmarks(), **cpu_model, results);
  EXPECT_TRUE(absl::IsInvalidArgument(missing)) << missing;
  EXPECT_NE(missing.message().find("kept no final module"), std::string::npos) << missing;
  results[0].benchmark = 7;
  EXPECT_TRUE(absl::IsOutOfRange(MeasureEpisodes(env->benchmarks(), **cpu_model, results)));
}

}  // namespace
}  // namespace hlogym

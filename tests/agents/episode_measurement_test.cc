// MeasureEpisodes: episodes planned on one runtime source, their end states
// timed on another. Two cost models stand in for planning and measuring, so
// every figure is exact and checkable.
#include "agents/episode_measurement.h"

#include <map>
#include <memory>
#include <set>
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

double CpuModel(const Module& module) { return EstimateCost(module, CpuDevice()).seconds; }

// A measured source that records how it is asked: each MeasureInterleaved
// call is one "moment", and its times are the CPU model's scaled by the
// moment's load (1 + the call's index), as a shared machine's would be. So
// modules timed at different moments get inconsistent figures, and the
// figures say at which moment a module was timed.
class RecordingSource : public RuntimeSource {
 public:
  std::string name() const override { return "recording"; }
  bool deterministic() const override { return false; }
  absl::StatusOr<double> Runtime(const Module& module) override {
    ++runtime_calls;
    return CpuModel(module) * (1 + static_cast<double>(calls.size()));
  }
  absl::Status Prepare(const Module& module) override {
    if (Fingerprint(module) == does_not_compile) {
      return absl::UnimplementedError("not supported: this kernel");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double /*seconds_per_module*/) override {
    std::vector<uint64_t> fingerprints;
    for (const Module* m : modules) fingerprints.push_back(Fingerprint(*m));
    calls.push_back(fingerprints);
    if (!fail_interleaved.empty()) return absl::InternalError(fail_interleaved);
    const double load = static_cast<double>(calls.size());
    std::vector<Measurement> out;
    for (const Module* m : modules) {
      Measurement measurement;
      measurement.median_seconds = measurement.min_seconds = CpuModel(*m) * load;
      measurement.runs = 7;
      out.push_back(measurement);
    }
    return out;
  }

  std::vector<std::vector<uint64_t>> calls;  // fingerprints per MeasureInterleaved
  int runtime_calls = 0;
  uint64_t does_not_compile = 0;
  std::string fail_interleaved;
};

uint64_t DefaultPipelineFingerprint(const HloRewriteEnv& env, int64_t benchmark) {
  std::unique_ptr<Module> fused = env.benchmarks().source(benchmark).Clone();
  Pipeline pipeline = DefaultPipeline();
  EXPECT_TRUE(pipeline.Run(*fused).ok());
  return Fingerprint(*fused);
}

TEST(EpisodeMeasurementTest, ARowsModulesAcrossAgentsAreTimedTogetherOnce) {
  std::unique_ptr<HloRewriteEnv> env =
      MakeTestEnv("fusion-v0", {"softmax_4096x1024", "layernorm_8192x1024"}, 100);
  ASSERT_NE(env, nullptr);
  // Three agents, as compare runs them: one after the other, two episodes
  // of random on each benchmark.
  std::map<std::string, std::vector<EpisodeResult>> agents;
  for (const char* spec : {"random", "greedy", "xla"}) {
    absl::StatusOr<std::vector<EpisodeResult>> results =
        RunEpisodes(*env, spec, {{0, 0}, {1, 0}, {0, 1}, {1, 1}}, 1, {});
    ASSERT_TRUE(results.ok()) << results.status();
    agents[spec] = *std::move(results);
  }
  std::vector<EpisodeResult*> all;
  for (auto& [spec, results] : agents) {
    for (EpisodeResult& r : results) all.push_back(&r);
  }
  RecordingSource source;
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), source, all).ok());

  // One interleaved timing per benchmark, nothing timed alone.
  EXPECT_EQ(source.runtime_calls, 0);
  ASSERT_EQ(source.calls.size(), 2u);
  for (int64_t b = 0; b < 2; ++b) {
    std::set<uint64_t> want = {
        Fingerprint(*env->benchmarks().Prepared(b).value()->module),
        DefaultPipelineFingerprint(*env, b)};
    for (const EpisodeResult* r : all) {
      if (r->benchmark == b) want.insert(Fingerprint(*r->final_module));
    }
    const std::vector<uint64_t>& timed = source.calls[b];
    EXPECT_EQ(std::set<uint64_t>(timed.begin(), timed.end()), want);
    EXPECT_EQ(timed.size(), want.size()) << "a module timed twice in one row";
  }
  // Every figure of a row comes from its one moment, so equal modules get
  // the identical runtime across agents and episodes.
  std::map<uint64_t, double> by_fingerprint;
  for (const EpisodeResult* r : all) {
    ASSERT_TRUE(r->error.empty()) << r->error;
    const double load = 1 + static_cast<double>(r->benchmark);
    EXPECT_DOUBLE_EQ(r->final_runtime, CpuModel(*r->final_module) * load);
    EXPECT_DOUBLE_EQ(r->original_runtime,
                     CpuModel(*env->benchmarks().Prepared(r->benchmark).value()->module) * load);
    EXPECT_EQ(r->measured_on, "recording");
    EXPECT_EQ(r->measured_runs, 7);
    EXPECT_EQ(r->measured_modules, static_cast<int>(source.calls[r->benchmark].size()));
    auto [it, added] = by_fingerprint.emplace(Fingerprint(*r->final_module), r->final_runtime);
    EXPECT_EQ(it->second, r->final_runtime);
  }
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_EQ(agents["random"][b].default_runtime, agents["xla"][b].default_runtime);
    EXPECT_EQ(agents["greedy"][b].original_runtime, agents["xla"][b].original_runtime);
  }
}

TEST(EpisodeMeasurementTest, OneAgentsRowIsItsOriginalDefaultAndFinalModulesTimedTogether) {
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv("fusion-v0", {"softmax_4096x1024"}, 100);
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::vector<EpisodeResult>> results = RunEpisodes(*env, "random", {{0, 0}}, 1, {});
  ASSERT_TRUE(results.ok()) << results.status();
  RecordingSource source;
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), source, *results).ok());
  EXPECT_EQ(source.runtime_calls, 0);
  ASSERT_EQ(source.calls.size(), 1u);
  const EpisodeResult& r = (*results)[0];
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::set<uint64_t> want = {Fingerprint(*env->benchmarks().Prepared(0).value()->module),
                                   DefaultPipelineFingerprint(*env, 0),
                                   Fingerprint(*r.final_module)};
  EXPECT_EQ(std::set<uint64_t>(source.calls[0].begin(), source.calls[0].end()), want);
  EXPECT_EQ(source.calls[0].size(), want.size());
}

TEST(EpisodeMeasurementTest, AModuleThatDoesNotCompileFailsOnlyItsEpisodes) {
  // Cut short after two steps, random's episodes end on modules of their own.
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv("fusion-v0", {"softmax_4096x1024"}, 2);
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::vector<EpisodeResult>> xla = RunEpisodes(*env, "xla", {{0, 0}}, 1, {});
  ASSERT_TRUE(xla.ok());
  // A random episode that ends on a module of its own.
  const std::set<uint64_t> others = {Fingerprint(*(*xla)[0].final_module),
                                     Fingerprint(*env->benchmarks().Prepared(0).value()->module),
                                     DefaultPipelineFingerprint(*env, 0)};
  std::vector<EpisodeResult> random;
  for (uint64_t seed = 0; seed < 8 && random.empty(); ++seed) {
    absl::StatusOr<std::vector<EpisodeResult>> r = RunEpisodes(*env, "random", {{0, seed}}, 1, {});
    ASSERT_TRUE(r.ok()) << r.status();
    if (!others.contains(Fingerprint(*(*r)[0].final_module))) random = *std::move(r);
  }
  ASSERT_EQ(random.size(), 1u);
  const uint64_t bad = Fingerprint(*random[0].final_module);
  RecordingSource source;
  source.does_not_compile = bad;
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), source, {&random[0], &(*xla)[0]}).ok());
  EXPECT_NE(random[0].error.find("timing on recording: the final module: not supported"),
            std::string::npos)
      << random[0].error;
  EXPECT_TRUE((*xla)[0].error.empty()) << (*xla)[0].error;
  ASSERT_EQ(source.calls.size(), 1u);
  EXPECT_EQ(std::set<uint64_t>(source.calls[0].begin(), source.calls[0].end()).count(bad), 0u);

  // A failure of the row's timing itself fails each of its episodes.
  absl::StatusOr<std::vector<EpisodeResult>> again = RunEpisodes(*env, "xla", {{0, 0}}, 1, {});
  ASSERT_TRUE(again.ok());
  RecordingSource failing;
  failing.fail_interleaved = "the device fell over";
  ASSERT_TRUE(MeasureEpisodes(env->benchmarks(), failing, *again).ok());
  EXPECT_NE((*again)[0].error.find("the device fell over"), std::string::npos) << (*again)[0].error;
  EXPECT_TRUE((*again)[0].measured_on.empty());
}

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

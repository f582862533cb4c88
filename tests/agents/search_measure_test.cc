// search(measure=k): episodes planned on the cost model whose target is
// chosen by timing candidate end states on a measured source. A stand-in
// source that "measures" with the CPU cost model makes every choice exact
// and checkable; the CPU backend itself checks the real path, on one env and
// on episodes run in parallel.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "agents/episode_runner.h"
#include "agents/search_agent.h"
#include "backend/cost_model.h"
#include "core/ir/fingerprint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agents/agent_test_util.h"

namespace hlogym {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::MakeTestEnv;
using testing::DatasetModule;

// Two small twins, on the main job's env.
std::unique_ptr<HloRewriteEnv> TwoTwins() {
  return MakeTestEnv("xla-v0", {"softmax_4096x1024", "layernorm_8192x1024"}, 100);
}

constexpr char kSpec[] = "search(budget=8, beam=2, measure=4)";

// Claims to measure; its times are `time(module)`, exact (spread 0), from
// `runs` timed runs.
class StandInSource : public RuntimeSource {
 public:
  StandInSource(std::function<double(const Module&)> time, bool interleaves, int runs = 5)
      : time_(std::move(time)), interleaves_(interleaves), runs_(runs) {}
  std::string name() const override { return "stand-in"; }
  absl::StatusOr<double> Runtime(const Module& module) override { return time_(module); }
  bool deterministic() const override { return false; }
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0) override {
    if (!interleaves_) return RuntimeSource::MeasureInterleaved(modules, seconds_per_module);
    ++calls_;
    seconds_per_module_ = seconds_per_module;
    all_seconds_per_module_.push_back(seconds_per_module);
    std::vector<Measurement> out;
    for (const Module* m : modules) {
      Measurement measurement;
      measurement.median_seconds = measurement.min_seconds = time_(*m);
      // Given more time a module, it manages more runs.
      measurement.runs =
          seconds_per_module > 0
              ? std::max(runs_, static_cast<int>(seconds_per_module / time_(*m) + 1e-9))
              : runs_;
      out.push_back(measurement);
    }
    return out;
  }
  int calls() const { return calls_; }
  double seconds_per_module() const { return seconds_per_module_; }
  const std::vector<double>& all_seconds_per_module() const { return all_seconds_per_module_; }

 private:
  std::function<double(const Module&)> time_;
  bool interleaves_;
  int runs_;
  int calls_ = 0;
  double seconds_per_module_ = -1;
  std::vector<double> all_seconds_per_module_;
};

double CpuModel(const Module& module) { return EstimateCost(module, CpuDevice()).seconds; }

EpisodeResult RunAgent(const std::string& spec, HloRewriteEnv& env, int64_t benchmark,
                  const AgentContext& context = {}, SearchMeasurement* measurement = nullptr) {
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(spec, 0, context);
  EXPECT_TRUE(agent.ok()) << agent.status();
  if (!agent.ok()) return {};
  absl::StatusOr<EpisodeResult> result = RunEpisode(**agent, env, benchmark, 0);
  EXPECT_TRUE(result.ok()) << result.status();
  if (measurement != nullptr) {
    *measurement = dynamic_cast<const SearchAgent&>(**agent).last_measurement();
  }
  return result.ok() ? *std::move(result) : EpisodeResult{};
}

TEST(SearchMeasureTest, EndsOnTheFastestMeasuredCandidateNeverSlowerThanXla) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  auto source = std::make_shared<StandInSource>(CpuModel, true);
  int64_t rechecks = 0;
  for (int64_t b = 0; b < env->benchmarks().size(); ++b) {
    const EpisodeResult xla = RunAgent("xla", *env, b);
    SearchMeasurement m;
    const EpisodeResult search = RunAgent(kSpec, *env, b, AgentContext{source}, &m);
    ASSERT_TRUE(m.error.empty()) << m.error;
    EXPECT_EQ(m.source, "stand-in");
    ASSERT_GE(m.fingerprints.size(), 2u) << search.benchmark_name;
    ASSERT_EQ(m.median_seconds.size(), m.fingerprints.size());
    // The xla seed's end is the xla agent's end, and the reference.
    EXPECT_EQ(m.fingerprints[0], xla.fingerprint);
    size_t fastest = 0;
    for (size_t i = 0; i < m.median_seconds.size(); ++i) {
      if (m.median_seconds[i] < m.median_seconds[fastest]) fastest = i;
    }
    const size_t expected =
        m.median_seconds[fastest] < 0.98 * m.median_seconds[0] ? fastest : 0;
    ASSERT_EQ(m.chosen, static_cast<int64_t>(expected)) << search.benchmark_name;
    EXPECT_EQ(search.fingerprint, m.fingerprints[m.chosen]);
    EXPECT_EQ(Fingerprint(*search.final_module), m.fingerprints[m.chosen]);
    EXPECT_EQ(CpuModel(*search.final_module), m.median_seconds[m.chosen]);
    EXPECT_LE(CpuModel(*search.final_module), CpuModel(*xla.final_module));
    // Another than xla's end is timed again against it, and wins again.
    EXPECT_EQ(m.recheck_median_seconds.size(), m.chosen > 0 ? 2u : 0u);
    rechecks += m.chosen > 0;
  }
  // xla's end alone, then all of them, then the winner against xla's.
  EXPECT_EQ(source->calls(), 2 * env->benchmarks().size() + rechecks);
}

TEST(SearchMeasureTest, LeavesXlaOnlyForAGainAboveTheNoise) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 1);
  // Every other candidate `factor` times xla's time.
  for (double factor : {0.99, 0.9}) {
    auto source = std::make_shared<StandInSource>(
        [&](const Module& m) { return Fingerprint(m) == xla.fingerprint ? 1.0 : factor; }, true);
    SearchMeasurement m;
    const EpisodeResult search = RunAgent(kSpec, *env, 1, AgentContext{source}, &m);
    ASSERT_GE(m.fingerprints.size(), 2u);
    if (factor > 0.98) {
      EXPECT_EQ(m.chosen, 0);
      EXPECT_EQ(search.fingerprint, xla.fingerprint);
    } else {
      // Ties between the others go to the first: xla after greedy, or greedy.
      EXPECT_EQ(m.chosen, 1);
      EXPECT_NE(search.fingerprint, xla.fingerprint);
      EXPECT_EQ(search.fingerprint, m.fingerprints[1]);
    }
  }
}

TEST(SearchMeasureTest, ACandidateThatLosesItsSecondTimingLeavesXlasEnd) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 1);
  // The other ends take half xla's time in the first timings (the probe,
  // all of them), twice it when timed again (the third call).
  const StandInSource* timing = nullptr;
  auto source = std::make_shared<StandInSource>(
      [&](const Module& m) {
        if (Fingerprint(m) == xla.fingerprint) return 1.0;
        return timing->calls() >= 3 ? 2.0 : 0.5;
      },
      true);
  timing = source.get();
  SearchMeasurement m;
  const EpisodeResult search = RunAgent(kSpec, *env, 1, AgentContext{source}, &m);
  ASSERT_TRUE(m.error.empty()) << m.error;
  EXPECT_EQ(source->calls(), 3);
  ASSERT_EQ(m.recheck_median_seconds, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(m.chosen, 0);
  EXPECT_EQ(search.fingerprint, xla.fingerprint);
}

TEST(SearchMeasureTest, SlowModulesGetThreeRunsEachForTheCandidatesThatFit) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 1);
  // xla's end takes `run` seconds, the others half that; the source
  // manages `runs` timed runs within its own time per module.
  struct Case {
    double run;
    int runs;
  };
  for (const Case c : {Case{1.0, 2}, Case{0.1, 2}, Case{1.0, 3}}) {
    SCOPED_TRACE(::testing::Message() << c.run << " s a run, " << c.runs << " runs");
    auto time = [&](const Module& m) {
      return Fingerprint(m) == xla.fingerprint ? c.run : c.run / 2;
    };
    auto source = std::make_shared<StandInSource>(time, true, c.runs);
    SearchMeasurement m;
    const EpisodeResult search = RunAgent(kSpec, *env, 1, AgentContext{source}, &m);
    if (c.run == 1.0 && c.runs == 2) {
      // 3 runs of 1 s each (and a warm-up) for two would take 8 s: only
      // xla's end was timed.
      EXPECT_EQ(source->calls(), 1);
      EXPECT_EQ(m.fingerprints, std::vector<uint64_t>{xla.fingerprint});
      EXPECT_EQ(m.chosen, 0);
      EXPECT_EQ(search.fingerprint, xla.fingerprint);
    } else {
      EXPECT_EQ(source->calls(), 3);  // the probe, all of them, the recheck
      EXPECT_GT(m.chosen, 0);
      EXPECT_NE(search.fingerprint, xla.fingerprint);
      if (c.runs == 2) {
        // 0.3 s of runs each, and a warm-up: seven fit 3 s.
        EXPECT_DOUBLE_EQ(source->seconds_per_module(), 0.3);
        EXPECT_LE(m.fingerprints.size(), 7u);
      } else {
        EXPECT_EQ(source->seconds_per_module(), 0);
      }
    }
  }
}

TEST(SearchMeasureTest, MeasureMsProbesOneRunThenGivesEachCandidateThatTime) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 1);
  constexpr char kTimed[] = "search(budget=8, beam=2, measure=4, measure_ms=50)";
  // xla's end takes `run` seconds, the others half that.
  for (double run : {0.01, 0.1, 1.0}) {
    SCOPED_TRACE(::testing::Message() << run << " s a run");
    auto time = [&](const Module& m) {
      return Fingerprint(m) == xla.fingerprint ? run : run / 2;
    };
    auto source = std::make_shared<StandInSource>(time, true);
    SearchMeasurement m;
    const EpisodeResult search = RunAgent(kTimed, *env, 1, AgentContext{source}, &m);
    ASSERT_TRUE(m.error.empty()) << m.error;
    const std::vector<double>& asked = source->all_seconds_per_module();
    ASSERT_FALSE(asked.empty());
    // The probe: far less than a run, so one warm-up and one timed run.
    EXPECT_GT(asked[0], 0);
    EXPECT_LT(asked[0], 1e-6);
    if (run == 0.01) {
      // Three runs fit 50 ms: every candidate gets 50 ms, the recheck too.
      ASSERT_EQ(asked.size(), 3u);
      EXPECT_DOUBLE_EQ(asked[1], 0.05);
      EXPECT_DOUBLE_EQ(asked[2], 0.05);
      EXPECT_GE(m.fingerprints.size(), 2u);
      EXPECT_GT(m.chosen, 0);
    } else if (run == 0.1) {
      // Too slow for 50 ms: three runs each (0.3 s and a warm-up), seven fit 3 s.
      ASSERT_EQ(asked.size(), 3u);
      EXPECT_DOUBLE_EQ(asked[1], 0.3);
      EXPECT_DOUBLE_EQ(asked[2], 0.3);
      EXPECT_LE(m.fingerprints.size(), 7u);
      EXPECT_GT(m.chosen, 0);
    } else {
      // Not even two fit: xla's end, untimed against anything.
      EXPECT_EQ(asked.size(), 1u);
      EXPECT_EQ(m.chosen, 0);
      EXPECT_EQ(search.fingerprint, xla.fingerprint);
    }
    EXPECT_EQ(search.fingerprint, m.fingerprints[m.chosen]);
  }
}

TEST(SearchMeasureTest, APlanOutOfTimeTimesTheSeedsEndsAgainstXla) {
  // A jax.random key split (566 instructions): greedy's seed alone takes
  // well over the plan's second (the transformer step's took under one once
  // greedy's lookahead stopped copying the module).
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv(
      "xla-v0", {DatasetModule("random_split_fold")}, 1024, 0, 1 << 17, 1 << 19, 1 << 14);
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 0);
  // Every other end state half as fast as xla's: only xla's end is good.
  auto slower = std::make_shared<StandInSource>(
      [&](const Module& m) { return Fingerprint(m) == xla.fingerprint ? 1e-3 : 2e-3; }, true);
  SearchMeasurement m;
  const EpisodeResult search = RunAgent("search(budget=8, beam=2, seconds=1, measure=4)", *env, 0,
                                        AgentContext{slower}, &m);
  ASSERT_TRUE(m.seeds_only) << "the plan did not run out of its second";
  ASSERT_TRUE(m.error.empty()) << m.error;
  // xla's, greedy's and xla's after greedy at most, and xla's kept.
  EXPECT_LE(m.fingerprints.size(), 3u);
  EXPECT_EQ(m.fingerprints[0], xla.fingerprint);
  EXPECT_EQ(m.chosen, 0);
  EXPECT_EQ(search.fingerprint, xla.fingerprint);
}

TEST(SearchMeasureTest, AFinishedPlanIsReplayedPastTheEpisodeLimits) {
  // The episode limits stop runaway episodes; a plan already made (here in
  // longer than the whole time limit) ends where it chose, every step of it.
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  const EpisodeResult xla = RunAgent("xla", *env, 1);
  // Every other end state faster than xla's: the plan leaves xla's path.
  auto source = std::make_shared<StandInSource>(
      [&](const Module& m) { return Fingerprint(m) == xla.fingerprint ? 1.0 : 0.5; }, true);
  EpisodeLimits limits;
  limits.max_seconds = 1e-9;
  limits.max_growth = 1e-9;
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(kSpec, 0, AgentContext{source});
  ASSERT_TRUE(agent.ok()) << agent.status();
  absl::StatusOr<EpisodeResult> search = RunEpisode(**agent, *env, 1, 0, limits);
  ASSERT_TRUE(search.ok()) << search.status();
  const SearchMeasurement& m = dynamic_cast<const SearchAgent&>(**agent).last_measurement();
  ASSERT_GE(m.chosen, 1) << "the plan kept xla's end";
  EXPECT_EQ(search->stopped, "");
  EXPECT_GT(search->steps, 1);
  EXPECT_EQ(search->fingerprint, m.fingerprints[m.chosen]);
  // The same limits stop an agent without a plan after its first step.
  absl::StatusOr<std::unique_ptr<Agent>> xla_agent = MakeAgent("xla", 0);
  ASSERT_TRUE(xla_agent.ok());
  absl::StatusOr<EpisodeResult> stopped = RunEpisode(**xla_agent, *env, 1, 0, limits);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->steps, 1);
  EXPECT_NE(stopped->stopped, "");
}

TEST(SearchMeasureTest, WithoutAMeasuredSourceTheOptionChangesNothing) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  absl::StatusOr<std::shared_ptr<RuntimeSource>> cpu_model = MakeRuntimeSource("cost:cpu");
  ASSERT_TRUE(cpu_model.ok());
  auto no_interleaving = std::make_shared<StandInSource>(CpuModel, false);
  for (int64_t b = 0; b < env->benchmarks().size(); ++b) {
    const EpisodeResult plain = RunAgent("search(budget=8, beam=2)", *env, b);
    EXPECT_EQ(plain.measure_seconds, 0);
    SearchMeasurement m;
    // The env's source (the H100 model) and a deterministic one are not timed on.
    EXPECT_EQ(RunAgent(kSpec, *env, b, {}, &m).choices, plain.choices);
    EXPECT_TRUE(m.fingerprints.empty());
    EXPECT_EQ(RunAgent(kSpec, *env, b, AgentContext{*cpu_model}, &m).choices, plain.choices);
    EXPECT_TRUE(m.fingerprints.empty());
    // A measured source that cannot time modules against one another: the
    // model's plan, and why.
    EXPECT_EQ(RunAgent(kSpec, *env, b, AgentContext{no_interleaving}, &m).choices, plain.choices);
    EXPECT_THAT(m.error, HasSubstr("not supported: timing modules against one another"));
  }
}

// The CPU backend, briefly: one warm-up, about 20 ms of timed runs a module.
std::shared_ptr<RuntimeSource> Cpu() {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> cpu =
      MakeRuntimeSource("cpu(warmup_runs=1, max_seconds=0.02)");
  EXPECT_TRUE(cpu.ok()) << cpu.status();
  return cpu.ok() ? *cpu : nullptr;
}

TEST(SearchMeasureTest, OnTheCpuOneEnvEndsOnATimedCandidate) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  std::shared_ptr<RuntimeSource> cpu = Cpu();
  ASSERT_NE(cpu, nullptr);
  for (int64_t b = 0; b < env->benchmarks().size(); ++b) {
    SearchMeasurement m;
    const EpisodeResult search = RunAgent(kSpec, *env, b, AgentContext{cpu}, &m);
    ASSERT_TRUE(m.error.empty()) << m.error;
    EXPECT_EQ(m.source, "cpu");
    ASSERT_GE(m.fingerprints.size(), 2u);
    ASSERT_GE(m.chosen, 0);
    EXPECT_EQ(search.fingerprint, m.fingerprints[m.chosen]);
    for (double t : m.median_seconds) EXPECT_GT(t, 0);
    // The episode reports the time it took (one plan: this one).
    EXPECT_EQ(search.measure_seconds, m.seconds);
    EXPECT_GT(m.seconds, m.compile_seconds);
    EXPECT_GT(m.compile_seconds, 0);
    if (m.chosen != 0) {
      EXPECT_LT(m.median_seconds[m.chosen], 0.98 * m.median_seconds[0]);
      EXPECT_GE(m.runs[m.chosen], 3);
      EXPECT_GE(m.runs[0], 3);
    }
  }
  // Kept out of the cache: the timed candidates were not measured for Runtime().
  EXPECT_EQ(dynamic_cast<CpuMeasuredSource&>(*cpu).runtime().cache().size(), 0);
}

TEST(SearchMeasureTest, OnTheCpuParallelEpisodesEndOnTimedCandidates) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  std::shared_ptr<RuntimeSource> cpu = Cpu();
  ASSERT_NE(cpu, nullptr);
  absl::StatusOr<std::vector<EpisodeResult>> results =
      RunEpisodes(*env, kSpec, {{0, 0}, {1, 0}}, 2, {}, {}, AgentContext{cpu});
  ASSERT_TRUE(results.ok()) << results.status();
  for (const EpisodeResult& r : *results) {
    ASSERT_TRUE(r.error.empty()) << r.error;
    // The candidates do not depend on timing: a stand-in source of the same
    // seed names the same ones.
    std::unique_ptr<HloRewriteEnv> fork = env->Fork();
    SearchMeasurement m;
    RunAgent(kSpec, *fork, r.benchmark,
        AgentContext{std::make_shared<StandInSource>(CpuModel, true)}, &m);
    EXPECT_THAT(m.fingerprints, Contains(r.fingerprint)) << r.benchmark_name;
  }
}

// Beside other agents' episodes, whose steps pause while search times: the
// run ends (no deadlock between the gate and the episodes waiting at it) and
// the other agents' episodes are the ones they run alone.
TEST(SearchMeasureTest, OnTheCpuOtherAgentsEpisodesRunBesideSearchsTiming) {
  std::unique_ptr<HloRewriteEnv> env = TwoTwins();
  ASSERT_NE(env, nullptr);
  std::shared_ptr<RuntimeSource> cpu = Cpu();
  ASSERT_NE(cpu, nullptr);
  const std::vector<std::string> specs = {"xla", kSpec, "greedy"};
  std::vector<EpisodeTask> tasks;
  for (size_t a = 0; a < specs.size(); ++a) {
    for (int64_t b = 0; b < env->benchmarks().size(); ++b) tasks.push_back({b, 0, a});
  }
  absl::StatusOr<std::vector<EpisodeResult>> together =
      RunEpisodes(*env, specs, tasks, 2, {}, {}, AgentContext{cpu});
  ASSERT_TRUE(together.ok()) << together.status();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const EpisodeResult& r = (*together)[i];
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.benchmark, tasks[i].benchmark);
    EXPECT_GE(r.paused_seconds, 0);
    EXPECT_LT(r.paused_seconds, r.seconds);
    if (specs[tasks[i].agent] == kSpec) {
      EXPECT_GT(r.measure_seconds, 0) << r.benchmark_name;
      continue;
    }
    absl::StatusOr<std::vector<EpisodeResult>> alone =
        RunEpisodes(*env, specs[tasks[i].agent], {{tasks[i].benchmark, 0}}, 1, {});
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_EQ(r.choices, (*alone)[0].choices) << specs[tasks[i].agent] << " " << r.benchmark_name;
  }
}

TEST(SearchMeasureTest, BadMeasureValuesAreErrors) {
  for (const char* spec : {"search(measure=-1)", "search(measure=65)", "search(measure=some)",
                           "search(measure=2, measure_ms=-1)",
                           "search(measure=2, measure_ms=10001)"}) {
    absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(spec, 0);
    ASSERT_FALSE(agent.ok()) << spec;
    EXPECT_EQ(agent.status().code(), absl::StatusCode::kInvalidArgument) << spec;
    EXPECT_THAT(agent.status().message(), HasSubstr("measure")) << spec;
  }
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent("search(measure=3)", 0);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ((*agent)->name(), "search(budget=64, beam=4, branch=4, measure=3)");
  agent = MakeAgent("search(measure=2, measure_ms=50)", 0);
  ASSERT_TRUE(agent.ok());
  EXPECT_EQ((*agent)->name(), "search(budget=64, beam=4, branch=4, measure=2, measure_ms=50)");
}

}  // namespace
}  // namespace hlogym

// A step that fails after its choices were applied (the reward source
// fails) leaves the env as it was: whether the step edited the module in
// place (undone by replaying the episode) or chose into a copy (kept when
// the graph is near the limits, or as a round's first module).
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/text/parser.h"
#include "core/text/printer.h"
#include "envs/hlo_rewrite_env.h"
#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

// The cost model, or an error while `fail` is set.
class FlakySource : public RuntimeSource {
 public:
  std::string name() const override { return "flaky"; }
  absl::StatusOr<double> Runtime(const Module& module) override {
    if (fail) return absl::UnavailableError("measurement failed (test)");
    return cost_.Runtime(module);
  }
  bool deterministic() const override { return true; }
  std::atomic<bool> fail{false};

 private:
  CostModelSource cost_{H100Device()};
};

std::shared_ptr<BenchmarkSet> Benchmarks(std::shared_ptr<RuntimeSource> source) {
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules;
  for (int chains : {2, 6}) {
    auto module = ParseModule(testing::DoubleNegationHlo(chains, 256));
    modules.emplace_back("negations" + std::to_string(chains), std::move(*module));
  }
  return *BenchmarkSet::FromModules(std::move(modules), {}, std::move(source));
}

EnvSpec FusionSpec(FeatureLimits limits, bool stages) {
  EnvSpec spec;
  spec.id = "fusion-test";
  if (stages) {
    spec.dry_stages = {{"fusion"}};
  } else {
    spec.dry_passes = {"fusion"};
  }
  spec.post_passes = {"cse", "dce"};
  spec.max_steps = 16;
  spec.limits = limits;
  return spec;
}

// The first choice at every node but every third, which keeps the original.
std::vector<int64_t> Choose(const HloRewriteEnv& env) {
  std::vector<int64_t> choices;
  for (size_t i = 0; i < env.choice_counts().size(); ++i) choices.push_back(i % 3 == 2 ? 0 : 1);
  return choices;
}

void ExpectSameState(const HloRewriteEnv& env, const HloRewriteEnv& twin) {
  EXPECT_EQ(PrintModule(env.module()), PrintModule(twin.module()));
  EXPECT_EQ(env.info().step, twin.info().step);
  EXPECT_EQ(env.info().fingerprint, twin.info().fingerprint);
  EXPECT_EQ(env.info().current_runtime, twin.info().current_runtime);
  EXPECT_EQ(env.info().num_alternatives, twin.info().num_alternatives);
  EXPECT_EQ(env.info().rewrites_applied, twin.info().rewrites_applied);
  EXPECT_EQ(env.info().dry_pass, twin.info().dry_pass);
  EXPECT_EQ(env.choice_counts(), twin.choice_counts());
  EXPECT_EQ(env.record().choices, twin.record().choices);
  EXPECT_EQ(env.round_first_id(), twin.round_first_id());
  ASSERT_EQ(env.alternatives().size(), twin.alternatives().size());
  for (size_t i = 0; i < env.alternatives().size(); ++i) {
    EXPECT_EQ(env.alternatives()[i].node->name(), twin.alternatives()[i].node->name());
    EXPECT_EQ(env.alternatives()[i].node->parent()->parent(), &env.module());
  }
  auto round_start = [](const HloRewriteEnv& e) {
    return PrintModule(*e.RoundStartModule().value());
  };
  EXPECT_EQ(round_start(env), round_start(twin));
}

// Steps `env` and `twin` alike, fails env's next step, then expects both
// alike and stepping on alike to the end.
void CheckFailedStepChangesNothing(FeatureLimits limits, bool stages) {
  auto source = std::make_shared<FlakySource>();
  std::shared_ptr<BenchmarkSet> benchmarks = Benchmarks(source);
  auto env = HloRewriteEnv::Create(FusionSpec(limits, stages), benchmarks, 1).value();
  auto twin = HloRewriteEnv::Create(FusionSpec(limits, stages), benchmarks, 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 1).ok());
  ASSERT_TRUE(twin->Reset(std::nullopt, 1).ok());
  ASSERT_TRUE(env->Step(Choose(*env)).ok());
  ASSERT_TRUE(twin->Step(Choose(*twin)).ok());
  ASSERT_FALSE(env->info().terminated);
  ASSERT_GT(env->choice_counts().size(), 2u);

  source->fail = true;
  const absl::Status failed = env->Step(Choose(*env)).status();
  source->fail = false;
  EXPECT_EQ(failed.message(), "measurement failed (test)") << failed;
  ASSERT_NO_FATAL_FAILURE(ExpectSameState(*env, *twin));

  int64_t steps = 0;
  while (!twin->info().terminated && !twin->info().truncated) {
    const std::vector<int64_t> choices = Choose(*twin);
    const absl::StatusOr<double> expected = twin->Step(choices);
    const absl::StatusOr<double> reward = env->Step(choices);
    ASSERT_TRUE(expected.ok() && reward.ok()) << expected.status() << reward.status();
    EXPECT_EQ(*reward, *expected);
    ASSERT_NO_FATAL_FAILURE(ExpectSameState(*env, *twin));
    ++steps;
  }
  EXPECT_GT(steps, 0);
}

TEST(FailedStepTest, AStepInPlaceIsUndoneByReplay) {
  CheckFailedStepChangesNothing({4096, 16384, 512, 16}, /*stages=*/false);
}

TEST(FailedStepTest, AStepNearTheLimitsKeepsTheModuleBefore) {
  // The graph of the failed step (142 nodes) is over half of max_nodes, so
  // are the next six steps' (chosen into copies), then the last two are not.
  CheckFailedStepChangesNothing({200, 16384, 512, 16}, /*stages=*/false);
}

TEST(FailedStepTest, AStepInARoundOfDryStagesIsUndone) {
  CheckFailedStepChangesNothing({4096, 16384, 512, 16}, /*stages=*/true);
}

}  // namespace
}  // namespace hlogym

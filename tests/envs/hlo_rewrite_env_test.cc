// Tests of one environment: episodes, rewards, errors, forks.
#include "envs/hlo_rewrite_env.h"

#include <memory>
#include <vector>

#include "core/ir/fingerprint.h"
#include "core/rewrite/decisions.h"
#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

using testing::TestBenchmarks;
using testing::TestSpec;

TEST(HloRewriteEnvTest, ResetOffersAlternativesAndStepRewards) {
  auto env = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 1).ok());  // two chains
  const EnvInfo& info = env->info();
  EXPECT_EQ(info.benchmark_name, "negations2");
  EXPECT_EQ(info.num_alternatives, 2);
  EXPECT_EQ(info.dry_pass, "test-double-negation");
  EXPECT_GT(info.original_runtime, 0);
  EXPECT_EQ(info.current_runtime, info.original_runtime);
  const uint64_t before = info.fingerprint;

  const double reward = env->Step({1, 1}).value();
  EXPECT_GT(reward, 0);  // two kernels per chain fewer
  EXPECT_NEAR(reward, (info.original_runtime - info.current_runtime) / info.original_runtime,
              1e-12);
  EXPECT_TRUE(env->info().terminated);  // nothing left to offer
  EXPECT_FALSE(env->info().truncated);
  EXPECT_EQ(env->info().step, 1);
  EXPECT_EQ(env->info().rewrites_applied, 2);
  EXPECT_NE(env->info().fingerprint, before);
  EXPECT_EQ(env->record().choices, (std::vector<std::vector<int64_t>>{{1, 1}}));
  EXPECT_FALSE(env->Step({}).ok());  // the episode is over
}

TEST(HloRewriteEnvTest, KeepingOriginalsTruncatesAtMaxSteps) {
  auto env = HloRewriteEnv::Create(TestSpec(3), TestBenchmarks(), 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 0).ok());
  const uint64_t prepared = env->info().fingerprint;
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(env->Step({0}).value(), 0.0);
  }
  EXPECT_TRUE(env->info().truncated);
  EXPECT_FALSE(env->info().terminated);
  EXPECT_EQ(env->info().fingerprint, prepared);  // choosing 0 restores it
}

TEST(HloRewriteEnvTest, BadChoicesChangeNothing) {
  auto env = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 2).ok());
  const uint64_t fingerprint = Fingerprint(env->module());
  absl::Status wrong_count = env->Step({1}).status();
  EXPECT_NE(wrong_count.message().find("expected one choice per alternatives node (3)"),
            std::string::npos) << wrong_count;
  absl::Status out_of_range = env->Step({0, 2, 0}).status();
  EXPECT_NE(out_of_range.message().find("out of range"), std::string::npos) << out_of_range;
  EXPECT_EQ(Fingerprint(env->module()), fingerprint);
  EXPECT_EQ(env->info().step, 0);
  EXPECT_EQ(env->info().num_alternatives, 3);
}

TEST(HloRewriteEnvTest, CreateRejectsBadSpecs) {
  EnvSpec spec = TestSpec();
  spec.dry_passes = {"no-such-pass"};
  absl::Status unknown = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).status();
  EXPECT_NE(unknown.message().find("unknown pass `no-such-pass`"), std::string::npos);
  spec = TestSpec();
  spec.dry_passes.clear();
  EXPECT_FALSE(HloRewriteEnv::Create(spec, TestBenchmarks(), 0).ok());
  spec = TestSpec(0);
  EXPECT_FALSE(HloRewriteEnv::Create(spec, TestBenchmarks(), 0).ok());
  spec = TestSpec();
  spec.dry_stages = {{"fusion"}};
  absl::Status both = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).status();
  EXPECT_NE(both.message().find("it has both"), std::string::npos) << both;
  spec.dry_passes.clear();
  spec.dry_stages = {{"fusion"}, {}};
  absl::Status empty = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).status();
  EXPECT_NE(empty.message().find("an empty dry stage"), std::string::npos) << empty;
  spec.dry_stages = {{"fusion"}, {"no-such-pass"}};
  absl::Status unknown_in_stage = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).status();
  EXPECT_NE(unknown_in_stage.message().find("unknown pass `no-such-pass`"), std::string::npos);
}

TEST(HloRewriteEnvTest, DryStagesOfferAPassWhileItChangesSomethingAndNeverGoBack) {
  EnvSpec spec = TestSpec(16);
  spec.dry_passes.clear();
  spec.dry_stages = {{"test-double-negation"}, {"fusion"}};
  spec.limits = {256, 512, 64, 16};
  auto env = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).value();
  auto all = [&](int64_t choice) {
    return std::vector<int64_t>(env->choice_counts().size(), choice);
  };
  ASSERT_TRUE(env->Reset(0, 2).ok());
  EXPECT_EQ(env->info().dry_pass, "test-double-negation");
  // Taken, nothing is left for it: the next stage's pass, from then on.
  ASSERT_TRUE(env->Step(all(1)).ok());
  EXPECT_EQ(env->info().dry_pass, "fusion");
  while (!env->info().terminated && !env->info().truncated) {
    EXPECT_EQ(env->info().dry_pass, "fusion");
    ASSERT_TRUE(env->Step(all(1)).ok());
  }
  EXPECT_TRUE(env->info().terminated);
  // Declined, the pass changed nothing: like a fixed-point loop, its stage
  // is over although the pass would offer the same again.
  ASSERT_TRUE(env->Reset(0, 2).ok());
  const uint64_t prepared = env->info().fingerprint;
  ASSERT_TRUE(env->Step(all(0)).ok());
  EXPECT_EQ(env->info().dry_pass, "fusion");
  EXPECT_EQ(env->info().fingerprint, prepared);
  // A fork carries on from the same place in the schedule.
  std::unique_ptr<HloRewriteEnv> fork = env->Fork();
  EXPECT_EQ(fork->info().dry_pass, "fusion");

  // A stage of two passes ends after a whole round that changed nothing:
  // declining one pass moves on to the next, and a change starts a new round.
  spec.dry_stages = {{"test-double-negation", "fusion"}};
  env = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).value();
  ASSERT_TRUE(env->Reset(0, 2).ok());
  EXPECT_EQ(env->info().dry_pass, "test-double-negation");
  ASSERT_TRUE(env->Step(all(0)).ok());
  EXPECT_EQ(env->info().dry_pass, "fusion");
  ASSERT_TRUE(env->Step(all(1)).ok());  // a change: fusion is asked again
  EXPECT_EQ(env->info().dry_pass, "fusion");
  ASSERT_TRUE(env->Step(all(0)).ok());  // fusion's round is over
  EXPECT_EQ(env->info().dry_pass, "test-double-negation");
  // Fusion's round changed the module: as in a fixed-point loop's next
  // iteration, every pass is asked again, fusion too.
  ASSERT_TRUE(env->Step(all(0)).ok());
  EXPECT_EQ(env->info().dry_pass, "fusion");
  ASSERT_TRUE(env->Step(all(0)).ok());  // two passes in a row changed nothing
  EXPECT_TRUE(env->info().terminated);

  // In turn instead (dry_passes), declining moves on to the next pass.
  EnvSpec turns = spec;
  turns.dry_stages.clear();
  turns.dry_passes = {"test-double-negation", "fusion"};
  auto rotating = HloRewriteEnv::Create(turns, TestBenchmarks(), 0).value();
  ASSERT_TRUE(rotating->Reset(0, 2).ok());
  ASSERT_TRUE(rotating->Step(std::vector<int64_t>(rotating->choice_counts().size(), 0)).ok());
  EXPECT_EQ(rotating->info().dry_pass, "fusion");
}

TEST(HloRewriteEnvTest, RoundStartModuleIsTheModuleTheRoundBeganOn) {
  EnvSpec spec = TestSpec(16);
  spec.dry_passes.clear();
  spec.dry_stages = {{"fusion"}};
  spec.limits = {256, 512, 64, 16};
  auto env = HloRewriteEnv::Create(spec, TestBenchmarks(), 0).value();
  auto all = [&](int64_t choice) {
    return std::vector<int64_t>(env->choice_counts().size(), choice);
  };
  auto round_start = [](const HloRewriteEnv& e) -> uint64_t {
    absl::StatusOr<std::unique_ptr<Module>> module = e.RoundStartModule();
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? Fingerprint(**module) : 0;
  };
  EXPECT_FALSE(env->RoundStartModule().ok());  // before reset
  ASSERT_TRUE(env->Reset(0, 2).ok());
  const uint64_t start = env->info().fingerprint;
  EXPECT_EQ(round_start(*env), start);
  // Taken, the round goes on: its start stays, for forks too.
  ASSERT_TRUE(env->Step(all(1)).ok());
  ASSERT_EQ(env->info().dry_pass, "fusion");
  ASSERT_NE(env->info().fingerprint, start);
  EXPECT_EQ(round_start(*env), start);
  std::unique_ptr<HloRewriteEnv> fork = env->Fork();
  EXPECT_EQ(round_start(*fork), start);
  ASSERT_TRUE(env->Step(all(1)).ok());
  ASSERT_FALSE(env->info().terminated);
  EXPECT_EQ(round_start(*env), start);
  EXPECT_EQ(round_start(*fork), start);
  // Declined, the round is over; the pass changed the module, so it is
  // asked again, in a round that starts from the module now.
  ASSERT_TRUE(env->Step(all(0)).ok());
  ASSERT_EQ(env->info().dry_pass, "fusion");
  EXPECT_EQ(round_start(*env), env->info().fingerprint);
  // A round that changes nothing ends the stage.
  ASSERT_TRUE(env->Step(all(0)).ok());
  EXPECT_TRUE(env->info().terminated);
  // A new episode starts a new round.
  ASSERT_TRUE(fork->Reset(0, 1).ok());
  EXPECT_EQ(round_start(*fork), fork->info().fingerprint);
}

TEST(HloRewriteEnvTest, SeededResetsDrawTheSameBenchmarks) {
  auto a = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 7).value();
  auto b = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 99).value();
  std::vector<int64_t> drawn_a, drawn_b;
  ASSERT_TRUE(a->Reset(42).ok());
  ASSERT_TRUE(b->Reset(42).ok());
  for (int i = 0; i < 10; ++i) {
    drawn_a.push_back(a->info().benchmark);
    drawn_b.push_back(b->info().benchmark);
    ASSERT_TRUE(a->Reset().ok());
    ASSERT_TRUE(b->Reset().ok());
  }
  EXPECT_EQ(drawn_a, drawn_b);
}

TEST(HloRewriteEnvTest, ForkContinuesIndependently) {
  auto env = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 3).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 1).ok());
  std::unique_ptr<HloRewriteEnv> fork = env->Fork();
  ASSERT_TRUE(env->Step({1, 1}).ok());
  EXPECT_EQ(fork->info().step, 0);
  EXPECT_EQ(fork->info().num_alternatives, 2);
  ASSERT_TRUE(fork->Step({1, 1}).ok());
  EXPECT_EQ(fork->info().fingerprint, env->info().fingerprint);
}

TEST(HloRewriteEnvTest, TakingTheStateOfAForkAheadIsSteppingThere) {
  auto env = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 3).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 2).ok());
  std::unique_ptr<HloRewriteEnv> stepped = env->Fork();
  std::unique_ptr<HloRewriteEnv> ahead = env->Fork();
  ASSERT_TRUE(stepped->Step({1, 0, 1}).ok());
  ASSERT_TRUE(ahead->Step({1, 0, 1}).ok());
  ASSERT_TRUE(env->TakeStateOf(std::move(*ahead)).ok());
  EXPECT_EQ(env->info().step, 1);
  EXPECT_EQ(env->info().fingerprint, stepped->info().fingerprint);
  EXPECT_EQ(env->info().current_runtime, stepped->info().current_runtime);
  EXPECT_EQ(env->info().num_alternatives, stepped->info().num_alternatives);
  EXPECT_EQ(env->record().choices, stepped->record().choices);
  EXPECT_EQ(env->record().rewards, stepped->record().rewards);
  EXPECT_EQ(Fingerprint(env->module()), Fingerprint(stepped->module()));
  // And it goes on as the stepped env does.
  const std::vector<int64_t> keep(env->choice_counts().size(), 0);
  if (!env->info().terminated) {
    ASSERT_TRUE(env->Step(keep).ok());
    ASSERT_TRUE(stepped->Step(keep).ok());
    EXPECT_EQ(env->info().fingerprint, stepped->info().fingerprint);
    EXPECT_EQ(env->record().rewards, stepped->record().rewards);
  }
}

TEST(HloRewriteEnvTest, TakingTheStateOfAnEnvFromElsewhereIsAnErrorAndChangesNothing) {
  auto env = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 3).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 2).ok());
  std::unique_ptr<HloRewriteEnv> behind = env->Fork();
  std::unique_ptr<HloRewriteEnv> elsewhere = env->Fork();
  ASSERT_TRUE(env->Step({1, 0, 0}).ok());
  ASSERT_TRUE(elsewhere->Step({0, 1, 0}).ok());
  std::unique_ptr<HloRewriteEnv> other_episode = env->Fork();
  ASSERT_TRUE(other_episode->Reset(std::nullopt, 1).ok());
  auto other_dataset = HloRewriteEnv::Create(TestSpec(), TestBenchmarks(), 3).value();
  ASSERT_TRUE(other_dataset->Reset(std::nullopt, 2).ok());
  ASSERT_TRUE(other_dataset->Step({1, 0, 0}).ok());

  const uint64_t fingerprint = env->info().fingerprint;
  const uint64_t with_alternatives = Fingerprint(env->module());
  for (HloRewriteEnv* other :
       {behind.get(), elsewhere.get(), other_episode.get(), other_dataset.get()}) {
    absl::Status s = env->TakeStateOf(std::move(*other));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("can only take the state of a fork of this env"),
              std::string::npos) << s;
    EXPECT_EQ(env->info().fingerprint, fingerprint);
    EXPECT_EQ(Fingerprint(env->module()), with_alternatives);
    EXPECT_EQ(env->info().step, 1);
    EXPECT_EQ(env->record().choices.size(), 1u);
  }
}

}  // namespace
}  // namespace hlogym

// PoolActor: one agent per env of a pool, actions in the pool's layout,
// accepted by the pool's Step.
#include <memory>
#include <vector>

#include "agents/pool_actor.h"
#include "core/rewrite/decisions.h"
#include "envs/env_pool.h"
#include "gtest/gtest.h"
#include "tests/agents/agent_test_util.h"

namespace hlogym {
namespace {

TEST(PoolActorTest, ActsForEveryEnvAndThePoolAcceptsIt) {
  std::unique_ptr<HloRewriteEnv> env = testing::MakeTestEnv("fusion-v0");
  ASSERT_NE(env, nullptr);
  EnvSpec spec = env->spec();
  spec.limits.max_alternatives = 256;
  absl::StatusOr<std::shared_ptr<BenchmarkSet>> set = BenchmarkSet::Load(
      {testing::SmallModule("softmax_4096x1024"), testing::SmallModule("layernorm_8192x1024")},
      env->benchmarks().pre_passes(), std::make_shared<CostModelSource>(H100Device()));
  ASSERT_TRUE(set.ok());
  PoolOptions options;
  options.num_envs = 3;
  absl::StatusOr<std::unique_ptr<EnvPool>> pool = EnvPool::Create(spec, *set, options);
  ASSERT_TRUE(pool.ok()) << pool.status();
  ASSERT_TRUE((*pool)->Reset(0, {}).ok());
  for (const char* agent_spec : {"random", "greedy", "xla"}) {
    absl::StatusOr<std::unique_ptr<PoolActor>> actor = PoolActor::Create(agent_spec, 1);
    ASSERT_TRUE(actor.ok());
    absl::StatusOr<std::vector<int64_t>> actions = (*actor)->ActPool(**pool);
    ASSERT_TRUE(actions.ok()) << actions.status();
    ASSERT_EQ(actions->size(), 3u * 256u);
    for (int64_t i = 0; i < 3; ++i) {
      absl::StatusOr<std::unique_ptr<Module>> module = (*pool)->ModuleCopy(i);
      ASSERT_TRUE(module.ok());
      const std::vector<AlternativeNode> alts = FindAlternatives(**module);
      for (size_t s = 0; s < 256; ++s) {
        const int64_t choice = (*actions)[i * 256 + s];
        if (s < alts.size()) {
          EXPECT_LT(choice, alts[s].num_choices());
        } else {
          EXPECT_EQ(choice, 0);
        }
      }
    }
    ASSERT_TRUE((*pool)->Step(*actions).ok());
  }
}

TEST(PoolActorTest, BadSpecFailsAtCreation) {
  EXPECT_FALSE(PoolActor::Create("nobody", 0).ok());
}

}  // namespace
}  // namespace hlogym

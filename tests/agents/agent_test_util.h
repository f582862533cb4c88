// Shared fixtures of the agent tests: envs built from the bundled configs
// over a few small corpus modules, and a helper that runs one episode while
// checking every step's choices.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "core/rewrite/decisions.h"
#include "envs/benchmark_set.h"
#include "envs/env_config.h"
#include "envs/hlo_rewrite_env.h"
#include "gtest/gtest.h"

namespace hlogym::testing {

inline std::string SmallModule(const std::string& name) {
  return std::string(HLOGYM_SOURCE_DIR) + "/data/corpus/small/hlo/" + name + "_small.hlo";
}

inline std::string DatasetModule(const std::string& name) {
  return std::string(HLOGYM_SOURCE_DIR) + "/data/dataset/hlo/" + name + ".hlo";
}

// Fast small-corpus modules (each episode well under a second).
inline std::vector<std::string> FastModules() {
  return {"softmax_4096x1024",  "layernorm_8192x1024", "gelu_4096x4096",
          "mlp_fwd_256x784",    "batchnorm_train_64x56x56x128",
          "logsumexp_xent_4096x32000"};
}

// An env from configs/CONFIG.yaml over `modules` (FastModules() by default;
// small corpus names, or paths ending in .hlo),
// with the config's reward source (`reward`, e.g. "cost:cpu", when given);
// max_steps and the graph limits overridden when positive.
inline std::unique_ptr<HloRewriteEnv> MakeTestEnv(const std::string& config_id,
                                                  std::vector<std::string> modules = {},
                                                  int64_t max_steps = 0, uint64_t seed = 0,
                                                  int64_t max_nodes = 0, int64_t max_edges = 0,
                                                  int64_t max_alternatives = 0,
                                                  const std::string& reward = "") {
  if (modules.empty()) modules = FastModules();
  absl::StatusOr<EnvConfig> config =
      LoadEnvConfig(std::string(HLOGYM_SOURCE_DIR) + "/configs/" + config_id + ".yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return nullptr;
  std::vector<std::string> paths;
  for (const std::string& m : modules) {
    paths.push_back(m.ends_with(".hlo") ? m : SmallModule(m));
  }
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source =
      MakeRuntimeSource(reward.empty() ? config->reward : reward);
  EXPECT_TRUE(source.ok()) << source.status();
  absl::StatusOr<std::shared_ptr<BenchmarkSet>> set =
      BenchmarkSet::Load(paths, config->pre_passes, *source);
  EXPECT_TRUE(set.ok()) << set.status();
  if (!set.ok()) return nullptr;
  EnvSpec spec;
  spec.id = config->id;
  spec.dry_passes = config->dry_passes;
  spec.dry_stages = config->dry_stages;
  spec.post_passes = config->post_passes;
  spec.max_steps = max_steps > 0 ? max_steps : config->max_steps;
  spec.limits = {max_nodes > 0 ? max_nodes : config->max_nodes,
                 max_edges > 0 ? max_edges : config->max_edges,
                 max_alternatives > 0 ? max_alternatives : config->max_alternatives,
                 config->max_choices};
  absl::StatusOr<std::unique_ptr<HloRewriteEnv>> env =
      HloRewriteEnv::Create(spec, *std::move(set), seed);
  EXPECT_TRUE(env.ok()) << env.status();
  return env.ok() ? *std::move(env) : nullptr;
}

// Runs `agent` through an episode on `benchmark`, checking at each step that
// the agent left the env unchanged and that every choice is in range.
inline void RunCheckedEpisode(Agent& agent, HloRewriteEnv& env, int64_t benchmark) {
  ASSERT_TRUE(env.Reset(0, benchmark).ok());
  while (!env.info().terminated && !env.info().truncated) {
    const uint64_t before = env.info().fingerprint;
    const int64_t step = env.info().step;
    absl::StatusOr<std::vector<int64_t>> choices = agent.Act(env);
    ASSERT_TRUE(choices.ok()) << choices.status();
    EXPECT_EQ(env.info().fingerprint, before);
    EXPECT_EQ(env.info().step, step);
    const std::vector<AlternativeNode> alternatives = FindAlternatives(env.module());
    ASSERT_EQ(choices->size(), alternatives.size());
    for (size_t i = 0; i < alternatives.size(); ++i) {
      ASSERT_GE((*choices)[i], 0);
      ASSERT_LT((*choices)[i], alternatives[i].num_choices());
    }
    absl::StatusOr<double> reward = env.Step(*choices);
    ASSERT_TRUE(reward.ok()) << reward.status();
  }
}

}  // namespace hlogym::testing

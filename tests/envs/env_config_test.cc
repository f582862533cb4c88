// Env configs: the bundled configs load; unknown keys, wrong types and bad
// YAML are errors that name the key and the file.
#include "envs/env_config.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using ::testing::HasSubstr;

const std::string kConfigs = std::string(HLOGYM_SOURCE_DIR) + "/configs";

TEST(EnvConfigTest, BundledConfigsLoad) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".yaml") continue;
    absl::StatusOr<EnvConfig> config = LoadEnvConfig(entry.path().string());
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->id, entry.path().stem().string());
    EXPECT_FALSE(config->pre_passes.empty());
    EXPECT_NE(config->dry_passes.empty(), config->dry_stages.empty()) << entry.path();
    EXPECT_GT(config->max_steps, 0);
    EXPECT_EQ(config->dataset, "data");
    ++loaded;
  }
  EXPECT_GE(loaded, 3);
}

TEST(EnvConfigTest, FusionV0) {
  absl::StatusOr<EnvConfig> config = LoadEnvConfig(kConfigs + "/fusion-v0.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->dry_passes, std::vector<std::string>{"fusion"});
  EXPECT_EQ(config->post_passes, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_EQ(config->max_nodes, 8192);
  EXPECT_EQ(config->max_edges, 32768);
  EXPECT_EQ(config->max_alternatives, 1024);
  EXPECT_EQ(config->max_choices, 64);
  EXPECT_EQ(config->reward, "cost");
}

TEST(EnvConfigTest, XlaV0HasTheDefaultPipelinesFusionStages) {
  absl::StatusOr<EnvConfig> config = LoadEnvConfig(kConfigs + "/xla-v0.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->dry_passes.empty());
  const std::vector<std::vector<std::string>> stages = {
      {"fusion(mode=xla)", "multi-output-fusion(mode=xla)"},
      {"horizontal-fusion(mode=xla)", "fusion(mode=xla)"}};
  EXPECT_EQ(config->dry_stages, stages);
}

TEST(EnvConfigTest, DryStagesAreListsOfListsAndExcludeDryPasses) {
  absl::StatusOr<EnvConfig> both =
      ParseEnvConfig("id: x\ndry_passes: [dce]\ndry_stages: [[dce]]\n", "both.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(), HasSubstr("not both"));
  absl::StatusOr<EnvConfig> flat = ParseEnvConfig("id: x\ndry_stages: [dce]\n", "flat.yaml");
  ASSERT_FALSE(flat.ok());
  EXPECT_THAT(flat.status().message(), HasSubstr("`dry_stages[0]`"));
  absl::StatusOr<EnvConfig> scalar = ParseEnvConfig("id: x\ndry_stages: dce\n", "scalar.yaml");
  ASSERT_FALSE(scalar.ok());
  EXPECT_THAT(scalar.status().message(), HasSubstr("`dry_stages`"));
}

TEST(EnvConfigTest, MissingKeysKeepDefaults) {
  absl::StatusOr<EnvConfig> config = ParseEnvConfig("id: tiny\ndry_passes: [dce]\n", "tiny.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->max_steps, 32);
  EXPECT_TRUE(config->pre_passes.empty());
  EXPECT_TRUE(config->observe_candidate_bodies);
}

TEST(EnvConfigTest, CandidateBodiesCanBeLeftOutOfObservations) {
  absl::StatusOr<EnvConfig> config =
      ParseEnvConfig("id: x\nobserve_candidate_bodies: false\n", "compact.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->observe_candidate_bodies);
}

TEST(EnvConfigTest, UnknownKeyNamesKeyAndFile) {
  absl::StatusOr<EnvConfig> config = ParseEnvConfig("id: x\nmax_stepz: 3\n", "typo.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("typo.yaml"));
  EXPECT_THAT(config.status().message(), HasSubstr("max_stepz"));
}

TEST(EnvConfigTest, WrongTypesNameTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"id: x\nmax_steps: many\n", "max_steps"},
      {"id: x\nmax_nodes: -1\n", "max_nodes"},
      {"id: x\nmax_choices: 2.5\n", "max_choices"},
      {"id: x\ndry_passes: fusion\n", "dry_passes"},
      {"id: x\npre_passes: [[a, b]]\n", "pre_passes"},
      {"id: [x]\n", "id"},
      {"id: x\nreward: {a: 1}\n", "reward"},
      {"id: x\nobserve_candidate_bodies: sometimes\n", "observe_candidate_bodies"},
  };
  for (const auto& [yaml, key] : cases) {
    absl::StatusOr<EnvConfig> config = ParseEnvConfig(yaml, "bad.yaml");
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(std::string("`") + key + "`")) << yaml;
    EXPECT_THAT(config.status().message(), HasSubstr("bad.yaml")) << yaml;
  }
}

TEST(EnvConfigTest, BadYamlAndMissingFileAreErrors) {
  EXPECT_EQ(ParseEnvConfig("id: [unclosed\n", "broken.yaml").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEnvConfig("- a list\n", "list.yaml").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEnvConfig("max_steps: 3\n", "noid.yaml").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<EnvConfig> missing = LoadEnvConfig(kConfigs + "/no-such-env.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-env.yaml"));
}

}  // namespace
}  // namespace hlogym

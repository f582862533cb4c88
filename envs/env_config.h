// EnvConfig: a named environment's settings, read from configs/ENV_ID.yaml.
// Unknown keys and wrong types are errors naming the key and the file.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlogym {

struct EnvConfig {
  std::string id;
  std::vector<std::string> pre_passes;   // run once per episode, before any decision
  std::vector<std::string> dry_passes;   // offer alternatives, one per step, in turn
  std::vector<std::vector<std::string>> dry_stages;  // or these (EnvSpec says how)
  std::vector<std::string> post_passes;  // run after each step's decisions
  int64_t max_steps = 32;
  int64_t max_nodes = 4096;
  int64_t max_edges = 16384;
  int64_t max_alternatives = 1024;
  int64_t max_choices = 8;
  // Whether observations hold candidates' fused computations
  // (NodeScope::kAll) or leave them out (kWithoutCandidateBodies).
  bool observe_candidate_bodies = true;
  std::string reward = "cost";  // a RuntimeSource spec
  std::string dataset = "data";  // relative to the project root, or absolute
};

absl::StatusOr<EnvConfig> LoadEnvConfig(const std::string& path);
absl::StatusOr<EnvConfig> ParseEnvConfig(const std::string& yaml_text,
                                         const std::string& source_name);

}  // namespace hlogym

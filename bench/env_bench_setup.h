// What the environment benchmarks share: the env spec they step (a bundled
// config with limits wide enough for every corpus module), and the machine's
// load, printed beside every figure taken on a shared machine.
#pragma once

#include <fstream>

#include "envs/env_config.h"
#include "envs/hlo_rewrite_env.h"

namespace hlogym::bench {

inline EnvSpec WideLimitsSpec(const EnvConfig& config) {
  EnvSpec spec;
  spec.id = config.id;
  spec.dry_passes = config.dry_passes;
  spec.dry_stages = config.dry_stages;
  spec.post_passes = config.post_passes;
  spec.max_steps = config.max_steps;
  spec.limits = {32768, 131072, 2048, 16};
  spec.node_scope = config.observe_candidate_bodies ? NodeScope::kAll
                                                    : NodeScope::kWithoutCandidateBodies;
  return spec;
}

// The 1-minute load average, -1 where /proc is missing.
inline double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

}  // namespace hlogym::bench

// RandomAgent: the uniform baseline. For each choice group (the alternatives
// nodes of one original value's uses, see choice_groups.h) it picks one of the
// legal choices uniformly at random from a seeded generator, so a run with
// the same seed makes the same choices. Choosing per use instead would
// mostly keep the original alive next to its rewrite, and duplicated
// producers then multiply from step to step.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "agents/agent.h"

namespace hlogym {

class RandomAgent : public Agent {
 public:
  explicit RandomAgent(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  // Half of xla's over the main job's modules (16.5 against 35.5 s).
  double relative_work() const override { return 0.5; }
  // One uniform choice per choice group of the env's current graph.
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) override;
  // One choice in [0, num_choices[i]) per alternative.
  absl::StatusOr<std::vector<int64_t>> Choose(absl::Span<const int64_t> num_choices);

 private:
  std::mt19937_64 rng_;
};

}  // namespace hlogym

// RandomAgent: the uniform baseline. For each alternative it picks one of the
// legal choices uniformly at random from a seeded generator, so a run with
// the same seed makes the same choices.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hlogym {

class RandomAgent {
 public:
  explicit RandomAgent(uint64_t seed) : rng_(seed) {}
  // One choice in [0, num_choices[i]) per alternative.
  absl::StatusOr<std::vector<int64_t>> Choose(absl::Span<const int64_t> num_choices);

 private:
  std::mt19937_64 rng_;
};

}  // namespace hlogym

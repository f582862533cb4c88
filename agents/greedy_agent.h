// GreedyAgent: one-step lookahead. It tries every move alone on a copy of the
// module (choices applied, post-passes run, runtime from the env's own
// source: the cost model, or measurements under "cpu"/"gpu"). A move is one
// candidate of one choice group, or, under producer-consumer fusion, one
// producer fused into every consumer that offers it (a producer with several
// users only disappears when all absorb it). The moves that beat keeping
// the originals are combined, best first, skipping moves that touch a group
// already set; when together they are slower than the best alone (rewrites
// that interact), they are added one at a time instead, each kept only if
// the runtime still drops.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "agents/agent.h"

namespace hlogym {

struct GreedyOptions {
  // A candidate must be at least this much faster, relative to the current
  // runtime, to be taken (room for measurement noise). Negative: automatic,
  // 0 for a deterministic runtime source (the cost model), 2% for measured.
  double tolerance = -1;
};

class GreedyAgent : public Agent {
 public:
  explicit GreedyAgent(GreedyOptions options = {}) : options_(options) {}
  std::string name() const override { return "greedy"; }
  // Thread-safe. Under a deterministic runtime source it remembers the last
  // module where no move paid, so the rest of an episode spent there (all-0
  // choices leave the module as it is) costs no lookahead.
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) override;
  // Runtime evaluations (lookahead measurements) made so far.
  int64_t evaluations() const { return evaluations_.load(); }

 private:
  GreedyOptions options_;
  std::atomic<int64_t> evaluations_{0};
  std::atomic<uint64_t> plateau_fingerprint_{0};  // 0: none yet
};

}  // namespace hlogym

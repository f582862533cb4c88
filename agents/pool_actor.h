// PoolActor: one agent per environment of an EnvPool (agent i seeded with
// seed + i, so each env's choices do not depend on the others or on thread
// timing), acting for all of them in parallel with TBB. It writes the
// pool's action layout: [num_envs, max_alternatives], zero-padded.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "agents/agent.h"
#include "envs/env_pool.h"

namespace hlogym {

class PoolActor {
 public:
  // Checks the spec by making the first agent.
  static absl::StatusOr<std::unique_ptr<PoolActor>> Create(std::string spec, uint64_t seed);

  const std::string& spec() const { return spec_; }
  uint64_t seed() const { return seed_; }

  // Choices for one env, by agent `slot` (made on first use).
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env, int64_t slot);
  // Actions for every env of `pool` (none may be in flight), row-major
  // [num_envs, max_alternatives]. Envs whose episode has ended get zeros
  // (the pool's autoreset ignores them).
  absl::StatusOr<std::vector<int64_t>> ActPool(const EnvPool& pool);

 private:
  PoolActor(std::string spec, uint64_t seed) : spec_(std::move(spec)), seed_(seed) {}
  // Makes agents 0..count-1 that do not exist yet (not thread-safe).
  absl::Status Grow(int64_t count);
  // ActPool's work, on the pool's envs while no other call changes them.
  absl::Status ActAll(absl::Span<const HloRewriteEnv* const> envs, int64_t width,
                      std::vector<int64_t>& actions);

  std::string spec_;
  uint64_t seed_;
  // Held by Act and ActPool: agents keep state (their random generators),
  // and Python threads may ask one actor at once.
  std::mutex acting_;
  std::vector<std::unique_ptr<Agent>> agents_;
};

}  // namespace hlogym

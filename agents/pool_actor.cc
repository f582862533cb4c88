#include "agents/pool_actor.h"

#include <algorithm>
#include <mutex>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<std::unique_ptr<PoolActor>> PoolActor::Create(std::string spec, uint64_t seed) {
  std::unique_ptr<PoolActor> actor(new PoolActor(std::move(spec), seed));
  RETURN_IF_ERROR(actor->Grow(1));
  return actor;
}

absl::Status PoolActor::Grow(int64_t count) {
  while (static_cast<int64_t>(agents_.size()) < count) {
    ASSIGN_OR_RETURN(std::unique_ptr<Agent> agent, MakeAgent(spec_, seed_ + agents_.size()));
    agents_.push_back(std::move(agent));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> PoolActor::Act(const HloRewriteEnv& env, int64_t slot) {
  if (slot < 0) return absl::OutOfRangeError(absl::StrCat("agent slot ", slot, " is negative"));
  std::lock_guard<std::mutex> acting(acting_);
  RETURN_IF_ERROR(Grow(slot + 1));
  return agents_[slot]->Act(env);
}

absl::StatusOr<std::vector<int64_t>> PoolActor::ActPool(const EnvPool& pool) {
  const int64_t n = pool.num_envs();
  const int64_t width = pool.spec().limits.max_alternatives;
  std::lock_guard<std::mutex> acting(acting_);
  RETURN_IF_ERROR(Grow(n));
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<int64_t> actions(n * width, 0);
  RETURN_IF_ERROR(pool.ReadEnvs(ids, [&](absl::Span<const HloRewriteEnv* const> envs) {
    return ActAll(envs, width, actions);
  }));
  return actions;
}

absl::Status PoolActor::ActAll(absl::Span<const HloRewriteEnv* const> envs, int64_t width,
                               std::vector<int64_t>& actions) {
  const int64_t n = static_cast<int64_t>(envs.size());
  std::mutex error_mutex;
  absl::Status error;
  ParallelForEach(0, n, [&](int64_t i) {
    const EnvInfo& info = envs[i]->info();
    if (!envs[i]->in_episode() || info.terminated || info.truncated) return;
    absl::StatusOr<std::vector<int64_t>> choices = agents_[i]->Act(*envs[i]);
    if (!choices.ok()) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (error.ok()) {
        error = absl::Status(choices.status().code(),
                             absl::StrCat("env ", i, ": ", choices.status().message()));
      }
      return;
    }
    const int64_t count = std::min<int64_t>(width, static_cast<int64_t>(choices->size()));
    std::copy(choices->begin(), choices->begin() + count, actions.begin() + i * width);
  });
  return error;
}

}  // namespace hlogym

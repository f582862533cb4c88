#include "envs/async_job_queues.h"

#include <utility>

namespace hlogym {

AsyncJobQueues::AsyncJobQueues(int64_t num_envs, int num_slots) : queues_(num_slots) {
  home_.resize(num_envs);
  for (int64_t i = 0; i < num_envs; ++i) home_[i] = static_cast<int>(i % num_slots);
}

void AsyncJobQueues::Push(int32_t env_id, std::vector<int64_t> action) {
  queues_[home_[env_id]].push_back({env_id, std::move(action), sent_++});
  ++queued_;
}

std::optional<AsyncJobQueues::Job> AsyncJobQueues::Take(int slot, int64_t patience) {
  if (queued_ == 0) return std::nullopt;
  std::deque<Job>* oldest = nullptr;
  for (std::deque<Job>& queue : queues_) {
    if (!queue.empty() && (oldest == nullptr || queue.front().sent < oldest->front().sent)) {
      oldest = &queue;
    }
  }
  std::deque<Job>& own = queues_[slot];
  std::deque<Job>& from =
      !own.empty() && own.front().sent - oldest->front().sent <= patience ? own : *oldest;
  Job job = std::move(from.front());
  from.pop_front();
  --queued_;
  home_[job.env_id] = slot;
  return job;
}

}  // namespace hlogym

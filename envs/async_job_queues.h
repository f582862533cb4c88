// AsyncJobQueues: the async pool's sent-but-not-started env steps, one queue
// per arena slot, and the rule for which job a free thread runs next.
//
// An env's module is made and freed by its steps; on the thread that made it,
// it is in that core's cache and its memory goes back to that thread's
// allocator arena (one shared queue, run by whichever thread was free, had a
// 64-env 2-thread async pool 13% slower; docs/benchmarks.md, "Stop 32"). So
// an env's job is queued to the slot that ran its last one, and a thread runs
// its own queue's oldest job, but not while a job elsewhere has waited much
// longer: a thread keeping to its own queue would leave the envs queued to a
// slow or busy thread waiting on it. Not thread-safe: the pool locks.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace hlogym {

class AsyncJobQueues {
 public:
  struct Job {
    int32_t env_id = -1;
    std::vector<int64_t> action;
    int64_t sent = 0;  // its place in the order jobs were sent
  };

  // Env i starts homed on slot i % num_slots.
  AsyncJobQueues(int64_t num_envs, int num_slots);

  // Queues the env's job to its home slot.
  void Push(int32_t env_id, std::vector<int64_t> action);

  // The job slot `slot` runs next: its own queue's oldest, unless the oldest
  // job of all was sent more than `patience` jobs before that one (or its
  // own queue is empty), then the oldest of all. The env's home becomes
  // `slot`. Nothing when every queue is empty.
  std::optional<Job> Take(int slot, int64_t patience);

  int64_t queued() const { return queued_; }
  int home(int32_t env_id) const { return home_[env_id]; }

 private:
  std::vector<std::deque<Job>> queues_;
  std::vector<int> home_;
  int64_t queued_ = 0;  // jobs in all queues
  int64_t sent_ = 0;    // jobs ever pushed
};

}  // namespace hlogym

#include "envs/env_pool_schedule.h"

#include <algorithm>
#include <chrono>

#include "core/base/parallel.h"
#include "core/base/thread_cpu_time.h"
#include "oneapi/tbb/task_arena.h"

namespace hlogym {

StepSchedule::StepSchedule(int64_t num_envs, int num_threads)
    : num_envs_(num_envs),
      num_threads_(std::max(1, num_threads)),
      last_s_(num_envs, 0.0),
      last_cpu_s_(num_envs, 0.0),
      home_(num_envs),
      lists_(std::make_unique<List[]>(num_threads_)),
      claimed_(std::make_unique<std::atomic<bool>[]>(num_threads_)) {
  for (int64_t e = 0; e < num_envs; ++e) home_[e] = static_cast<int>(e % num_threads_);
}

std::vector<std::vector<int64_t>> PlanStep(absl::Span<const double> seconds,
                                           std::vector<int>& home, int num_threads) {
  const int64_t n = static_cast<int64_t>(seconds.size());
  std::vector<double> load(num_threads, 0.0);
  double total = 0;
  for (int64_t e = 0; e < n; ++e) {
    load[home[e]] += seconds[e];
    total += seconds[e];
  }
  // Greedy moves from the busiest to the idlest thread: the env whose time
  // best splits their gap. A move must shorten the busiest load by 2% of the
  // step's total, so timing noise does not bounce envs between threads.
  for (int64_t moves = 0; num_threads > 1 && moves < n; ++moves) {
    const int busy = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    const int idle = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    const double gap = load[busy] - load[idle];
    int64_t best = -1;
    double best_gain = 0.02 * total;
    for (int64_t e = 0; e < n; ++e) {
      if (home[e] != busy || seconds[e] <= 0 || seconds[e] >= gap) continue;
      // The busier of the two afterwards is shorter than load[busy] by this.
      const double gain = std::min(seconds[e], gap - seconds[e]);
      if (gain > best_gain) {
        best_gain = gain;
        best = e;
      }
    }
    if (best < 0) break;
    home[best] = idle;
    load[busy] -= seconds[best];
    load[idle] += seconds[best];
  }
  std::vector<std::vector<int64_t>> lists(num_threads);
  for (int64_t e = 0; e < n; ++e) lists[home[e]].push_back(e);
  for (std::vector<int64_t>& list : lists) {
    // Longest first; ties (and the first step, all zero) in env order.
    std::stable_sort(list.begin(), list.end(),
                     [&](int64_t a, int64_t b) { return seconds[a] > seconds[b]; });
  }
  return lists;
}

void StepSchedule::Plan() {
  std::vector<std::vector<int64_t>> lists = PlanStep(last_s_, home_, num_threads_);
  for (int t = 0; t < num_threads_; ++t) {
    List& list = lists_[t];
    list.envs = std::move(lists[t]);
    list.front = 0;
    list.back = list.envs.size();
    claimed_[t] = false;
  }
}

void StepSchedule::RunOne(absl::FunctionRef<void(int64_t)> body, int64_t env, int list) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  body(env);
  last_s_[env] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  last_cpu_s_[env] = ThreadCpuSeconds() - cpu_start;
  home_[env] = list;
}

void StepSchedule::Work(absl::FunctionRef<void(int64_t)> body) {
  // The arena's slot index is stable for a thread while it stays in the
  // arena, so an env's home list usually maps to the same thread.
  const int index = tbb::this_task_arena::current_thread_index();
  int mine = index >= 0 ? index % num_threads_ : 0;
  if (claimed_[mine].exchange(true)) {
    // Another task runs on this thread's list (this thread ran it, or the
    // arena slot changed hands): take any free one. There are as many
    // tasks as lists, so one is always free.
    for (int t = 0; t < num_threads_; ++t) {
      if (!claimed_[t].exchange(true)) {
        mine = t;
        break;
      }
    }
  }
  List& own = lists_[mine];
  while (true) {
    int64_t env;
    {
      std::lock_guard<std::mutex> lock(own.mutex);
      if (own.front == own.back) break;
      env = own.envs[own.front++];
    }
    RunOne(body, env, mine);
  }
  // Steal the shortest remaining env of the list with the most left.
  while (true) {
    int64_t env = -1;
    size_t most = 0;
    int victim = -1;
    for (int t = 0; t < num_threads_; ++t) {
      if (t == mine) continue;
      std::lock_guard<std::mutex> lock(lists_[t].mutex);
      const size_t left = lists_[t].back - lists_[t].front;
      if (left > most) {
        most = left;
        victim = t;
      }
    }
    if (victim < 0) return;
    {
      std::lock_guard<std::mutex> lock(lists_[victim].mutex);
      if (lists_[victim].back == lists_[victim].front) continue;
      env = lists_[victim].envs[--lists_[victim].back];
    }
    RunOne(body, env, mine);
  }
}

void StepSchedule::Run(absl::FunctionRef<void(int64_t)> body) {
  Plan();
  if (num_threads_ == 1) {
    for (int64_t env : lists_[0].envs) RunOne(body, env, 0);
    return;
  }
  ParallelFor(0, num_threads_, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) Work(body);
  });
}

}  // namespace hlogym

// StepSchedule: how a synchronous pool step (or reset) spreads its
// environments over the arena's threads.
//
// A sync step lasts as long as its busiest thread, and env steps differ by
// two orders of magnitude across the corpus (a gpt2 step ~34 ms, most under
// 1 ms), so TBB's plain range splitting left a thread idle for up to a third
// of a 16-env batch. Envs are dealt by their last call's time, longest first,
// into one list per thread; a thread that empties its list takes the shortest
// remaining work from the back of another's, which corrects a wrong guess (an
// env that reset onto another module) at a cost of one small item.
//
// An env keeps its thread from step to step unless moving it evens the
// loads: the module an env frees at its next step was allocated by its last
// one, and glibc frees another thread's chunk under that thread's arena lock
// (the 2-thread pool lost a fifth of its steps per CPU second to that when
// envs wandered between threads every step).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace hlogym {

// The plan of one step: envs dealt to `num_threads` lists from their last
// times (`seconds`, 0 when unknown) and homes (`home`, each in
// [0, num_threads), updated for the envs moved). An env stays home unless
// moving it to the idlest thread cuts the busiest thread's load by more than
// 2% of the total. Each list is longest first, ties in env order.
std::vector<std::vector<int64_t>> PlanStep(absl::Span<const double> seconds,
                                           std::vector<int>& home, int num_threads);

class StepSchedule {
 public:
  StepSchedule(int64_t num_envs, int num_threads);

  // Runs body(env) once for every env in [0, num_envs) on the current TBB
  // arena and returns when all have run; times each call for the next plan.
  // Which thread runs an env never changes what body computes.
  void Run(absl::FunctionRef<void(int64_t)> body);

  int num_threads() const { return num_threads_; }
  // Seconds the env's last call took (0 before its first).
  double last_seconds(int64_t env) const { return last_s_[env]; }
  // CPU seconds of the thread that ran it, over the same call: what the
  // call cost whatever else the machine was running (benchmarks' per-module
  // figures; the plan uses the wall time above).
  double last_cpu_seconds(int64_t env) const { return last_cpu_s_[env]; }
  // The thread list the env ran on last (its memory's arena, in glibc terms).
  int home(int64_t env) const { return home_[env]; }

 private:
  struct List {
    std::mutex mutex;
    std::vector<int64_t> envs;  // longest first
    size_t front = 0;           // the owner takes from here
    size_t back = 0;            // thieves take from here (one past)
  };

  void Plan();  // PlanStep into lists_
  // One worker: claims a list (its own thread's if free), runs it front to
  // back, then steals from the others' backs.
  void Work(absl::FunctionRef<void(int64_t)> body);
  void RunOne(absl::FunctionRef<void(int64_t)> body, int64_t env, int list);

  const int64_t num_envs_;
  const int num_threads_;
  std::vector<double> last_s_;
  std::vector<double> last_cpu_s_;
  std::vector<int> home_;
  std::unique_ptr<List[]> lists_;
  std::unique_ptr<std::atomic<bool>[]> claimed_;
};

}  // namespace hlogym

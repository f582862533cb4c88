// MachineGate: lets an agent time modules on the whole machine while other
// episodes run beside it. Planning and stepping go in units (Planning); a
// timing (Time) waits for the units under way to end and holds new ones back
// until it is done, so the kernels it times get every core, as when the
// table times the end states later (Agent::times_modules says why that
// matters). One gate per process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>

#include "oneapi/tbb/task_arena.h"

namespace hlogym {

class MachineGate {
 public:
  static MachineGate& Get() {
    static MachineGate* gate = new MachineGate;  // never destroyed
    return *gate;
  }
  // Runs `work` as one unit. Isolated: a thread waiting inside it (greedy's
  // parallel lookahead, a kernel's loop) must not pick up another episode's
  // task from the arena, which could reach Time() while this thread's own
  // unit is open below it: a deadlock. Units never nest, for the same
  // reason.
  template <typename F>
  static auto Planning(F&& work) {
    Work unit;
    return tbb::this_task_arena::isolate(std::forward<F>(work));
  }
  // Seconds the calling thread has waited so far to start a unit while
  // another thread timed: an episode's limits leave them out (Stopwatch).
  static double PausedSeconds() { return paused_seconds_; }
  // Wall time on the calling thread since it was made, and the part of it
  // spent waiting at the gate: an episode's or a plan's own time is the
  // difference.
  class Stopwatch {
   public:
    double wall() const {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    double paused() const { return PausedSeconds() - paused_before_; }
    double own() const { return wall() - paused(); }

   private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    double paused_before_ = PausedSeconds();
  };
  // Runs `timing` once no unit is under way, holding new ones back. The
  // caller must not be inside Planning.
  void Time(const std::function<void()>& timing) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !timing_; });
      timing_ = true;
      changed_.wait(lock, [&] { return working_ == 0; });
    }
    timing();
    std::lock_guard<std::mutex> lock(mutex_);
    timing_ = false;
    changed_.notify_all();
  }

 private:
  // A unit of work: waits while a thread times.
  class Work {
   public:
    Work() : gate_(Get()) {
      std::unique_lock<std::mutex> lock(gate_.mutex_);
      if (gate_.timing_) {
        const auto start = std::chrono::steady_clock::now();
        gate_.changed_.wait(lock, [&] { return !gate_.timing_; });
        paused_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      ++gate_.working_;
    }
    ~Work() {
      std::lock_guard<std::mutex> lock(gate_.mutex_);
      --gate_.working_;
      gate_.changed_.notify_all();
    }
    Work(const Work&) = delete;
    Work& operator=(const Work&) = delete;

   private:
    MachineGate& gate_;
  };

  static inline thread_local double paused_seconds_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool timing_ = false;
  int working_ = 0;
};

}  // namespace hlogym

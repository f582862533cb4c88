// Tests of the sync step's schedule: the plan (homes kept unless a move
// evens the loads, longest first) and the run (every env exactly once, on
// any number of threads, times and homes recorded).
#include "envs/env_pool_schedule.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"

namespace hlogym {
namespace {

using Lists = std::vector<std::vector<int64_t>>;

TEST(PlanStepTest, UnknownTimesKeepHomesInEnvOrder) {
  std::vector<int> home = {0, 1, 0, 1, 0};
  EXPECT_EQ(PlanStep(std::vector<double>(5, 0.0), home, 2), (Lists{{0, 2, 4}, {1, 3}}));
  EXPECT_EQ(home, (std::vector<int>{0, 1, 0, 1, 0}));
}

TEST(PlanStepTest, BalancedHomesStayAndRunLongestFirst) {
  std::vector<int> home = {0, 1, 0, 1};
  // Loads 5 + 1 and 2 + 3.5: moving anything would not shorten 6 by 2%.
  const std::vector<double> seconds = {5, 2, 1, 3.5};
  EXPECT_EQ(PlanStep(seconds, home, 2), (Lists{{0, 2}, {3, 1}}));
  EXPECT_EQ(home, (std::vector<int>{0, 1, 0, 1}));
}

TEST(PlanStepTest, MovesEnvsFromTheBusiestThreadUntilEven) {
  // Thread 0 holds 20 + 10 + 10, thread 1 holds 2 + 2: the 20 moves (20 /
  // 24), then a 2 (22 / 22), the best split of 44 into whole envs.
  std::vector<int> home = {0, 1, 0, 1, 0};
  const std::vector<double> seconds = {20, 2, 10, 2, 10};
  const Lists lists = PlanStep(seconds, home, 2);
  double load[2] = {0, 0};
  for (int t = 0; t < 2; ++t) {
    for (int64_t e : lists[t]) {
      EXPECT_EQ(home[e], t);
      load[t] += seconds[e];
    }
  }
  EXPECT_EQ(load[0], 22);
  EXPECT_EQ(load[1], 22);
  EXPECT_EQ(home[2], 0);  // two moves, not more
  EXPECT_EQ(home[4], 0);
  EXPECT_EQ(home[3], 1);
  for (const std::vector<int64_t>& list : lists) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_GE(seconds[list[i - 1]], seconds[list[i]]);
  }
}

TEST(PlanStepTest, OneEnvLongerThanTheRestStaysAlone) {
  std::vector<int> home = {0, 1, 0, 1};
  const std::vector<double> seconds = {30, 1, 1, 1};
  const Lists lists = PlanStep(seconds, home, 2);
  EXPECT_EQ(lists[0], (std::vector<int64_t>{0}));
  EXPECT_EQ(lists[1], (std::vector<int64_t>{1, 2, 3}));
}

TEST(PlanStepTest, ThreeThreads) {
  std::vector<int> home = {0, 0, 0, 0, 0, 0};
  const std::vector<double> seconds = {3, 3, 3, 3, 3, 3};
  const Lists lists = PlanStep(seconds, home, 3);
  for (const std::vector<int64_t>& list : lists) EXPECT_EQ(list.size(), 2u);
}

// Every env runs exactly once per Run, whatever the arena's size, and its
// home afterwards is the list of the thread that ran it.
TEST(StepScheduleTest, RunsEveryEnvOnce) {
  for (int threads : {1, 2, 4}) {
    tbb::task_arena arena(threads);
    StepSchedule schedule(23, threads);
    for (int round = 0; round < 5; ++round) {
      std::unique_ptr<std::atomic<int>[]> runs(new std::atomic<int>[23]);
      for (int e = 0; e < 23; ++e) runs[e] = 0;
      arena.execute([&] {
        schedule.Run([&](int64_t env) {
          // Uneven work, so plans move envs and threads steal.
          if (env % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          ++runs[env];
        });
      });
      for (int e = 0; e < 23; ++e) {
        EXPECT_EQ(runs[e], 1) << "threads " << threads << ", round " << round << ", env " << e;
        EXPECT_GE(schedule.home(e), 0);
        EXPECT_LT(schedule.home(e), threads);
      }
      EXPECT_GE(schedule.last_seconds(7), 0.002);
    }
  }
}

}  // namespace
}  // namespace hlogym

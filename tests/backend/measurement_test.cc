// Runtime measurement: the stopping rules, the spread, one timed section per
// device at a time, the cache by fingerprint, and the CPU runtime on top.
#include "backend/measurement.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "backend/cpu_runtime.h"
#include "core/ir/fingerprint.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(MeasurementTest, SpreadIsThePercentileRangeOverTheMedian) {
  EXPECT_EQ(Spread({}), 0);
  EXPECT_EQ(Spread({2, 2, 2}), 0);
  // n = 10: p10 = t[0] = 1, p90 = t[9] = 10, median 5.5.
  EXPECT_DOUBLE_EQ(Spread({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}), 9.0 / 5.5);
  // n = 21: p10 = t[2] = 3, p90 = t[18] = 19, median t[10] = 11.
  std::vector<double> times;
  for (int i = 21; i >= 1; --i) times.push_back(i);
  EXPECT_DOUBLE_EQ(Spread(times), 16.0 / 11.0);
}

TEST(MeasurementTest, SteadyRunsStopAtMinRuns) {
  int calls = 0;
  MeasurementOptions options;
  options.warmup_runs = 3;
  options.min_runs = 5;
  options.target_spread = 1e9;  // any spread is small enough
  std::mutex device;
  absl::StatusOr<Measurement> m = MeasureRuns(
      [&] {
        ++calls;
        return absl::OkStatus();
      },
      options, device);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->runs, 5);
  EXPECT_TRUE(m->converged);
  EXPECT_EQ(calls, 3 + 5);
  EXPECT_LE(m->min_seconds, m->median_seconds);
}

TEST(MeasurementTest, NoisyRunsStopAtMaxRunsOrMaxSeconds) {
  MeasurementOptions options;
  options.warmup_runs = 0;
  options.min_runs = 2;
  options.max_runs = 7;
  options.target_spread = -1;  // never small enough
  std::mutex device;
  absl::StatusOr<Measurement> m =
      MeasureRuns([] { return absl::OkStatus(); }, options, device);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->runs, 7);
  EXPECT_FALSE(m->converged);

  options.max_runs = 1000;
  options.max_seconds = 0.02;
  m = MeasureRuns(
      [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return absl::OkStatus();
      },
      options, device);
  ASSERT_TRUE(m.ok());
  // Each run sleeps 5 ms at least, so the fourth reaches 20 ms.
  EXPECT_GE(m->runs, 1);
  EXPECT_LE(m->runs, 4);
  EXPECT_GE(m->median_seconds, 0.005);
}

TEST(MeasurementTest, AnErrorEndsTheMeasurement) {
  int calls = 0;
  std::mutex device;
  absl::StatusOr<Measurement> m = MeasureRuns(
      [&] {
        return ++calls == 2 ? absl::InternalError("kernel fault") : absl::OkStatus();
      },
      MeasurementOptions{}, device);
  EXPECT_EQ(m.status(), absl::InternalError("kernel fault"));
  EXPECT_EQ(calls, 2);
}

TEST(MeasurementTest, InterleavedRoundsRotateWhichRunGoesFirst) {
  std::vector<int> order;
  std::vector<std::function<absl::Status()>> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back([&order, i] {
      order.push_back(i);
      return absl::OkStatus();
    });
  }
  MeasurementOptions options;
  options.warmup_runs = 1;
  options.min_runs = 3;
  options.target_spread = 1e9;  // any spread is small enough
  std::mutex device;
  absl::StatusOr<std::vector<Measurement>> m = MeasureInterleaved(runs, options, device);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 3u);
  for (const Measurement& one : *m) {
    EXPECT_EQ(one.runs, 3);
    EXPECT_TRUE(one.converged);
  }
  // Warm-up of each in order, then rounds 0 1 2, 1 2 0, 2 0 1.
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0, 1}));
}

TEST(MeasurementTest, InterleavedMediansAreEachRunsOwn) {
  auto sleeper = [](int ms) {
    return [ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return absl::OkStatus();
    };
  };
  MeasurementOptions options;
  options.warmup_runs = 0;
  options.min_runs = 3;
  options.max_runs = 3;
  std::mutex device;
  // 1 ms against 40 ms: for the order to flip, two of the three short sleeps
  // must oversleep by 39 ms (8 ms flipped once in ~100 runs on a busy machine).
  absl::StatusOr<std::vector<Measurement>> m =
      MeasureInterleaved({sleeper(1), sleeper(40)}, options, device);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_GE((*m)[0].median_seconds, 0.001);
  EXPECT_GE((*m)[1].median_seconds, 0.040);
  EXPECT_LT((*m)[0].median_seconds, (*m)[1].median_seconds);
}

TEST(MeasurementTest, InterleavedRoundsStopAtTheirTimeBudgetOrAnError) {
  MeasurementOptions options;
  options.warmup_runs = 0;
  options.min_runs = 1;
  options.max_runs = 1000;
  options.target_spread = -1;   // never small enough
  options.max_seconds = 0.004;  // per run
  std::mutex device;
  auto sleep5 = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return absl::OkStatus();
  };
  absl::StatusOr<std::vector<Measurement>> m = MeasureInterleaved({sleep5, sleep5}, options, device);
  ASSERT_TRUE(m.ok()) << m.status();
  // Each run takes 5 ms at least, so its first spends its budget, however
  // slow the machine. (With a budget of two runs, a loaded CI machine let
  // one take a second run and not the other.)
  EXPECT_EQ((*m)[0].runs, 1);
  EXPECT_EQ((*m)[1].runs, 1);
  EXPECT_FALSE((*m)[0].converged);

  int calls = 0;
  m = MeasureInterleaved({sleep5,
                          [&] {
                            return ++calls == 3 ? absl::InternalError("third run failed")
                                                : absl::OkStatus();
                          }},
                         options, device);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "third run failed");
}

TEST(MeasurementTest, ASlowRunLeavesTheRoundsAndTheFastOnesGoOn) {
  MeasurementOptions options;
  options.warmup_runs = 0;
  options.min_runs = 5;
  options.max_runs = 5;
  options.target_spread = 1e9;  // any spread is small enough
  options.max_seconds = 0.05;   // per run
  std::mutex device;
  auto sleeper = [](int ms) {
    return [ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return absl::OkStatus();
    };
  };
  absl::StatusOr<std::vector<Measurement>> m =
      MeasureInterleaved({sleeper(60), sleeper(1), sleeper(1)}, options, device);
  ASSERT_TRUE(m.ok()) << m.status();
  // The slow run's first run spends its budget; the fast ones (about 5 ms
  // of their 50 ms in five runs) get all their rounds. One budget for all
  // three (150 ms) ended the rounds after the third.
  EXPECT_EQ((*m)[0].runs, 1);
  EXPECT_EQ((*m)[1].runs, 5);
  EXPECT_EQ((*m)[2].runs, 5);
  EXPECT_TRUE((*m)[1].converged);
}

TEST(MeasurementTest, TimedSectionsOnOneDeviceNeverOverlap) {
  EXPECT_EQ(&DeviceTimingMutex("cpu"), &DeviceTimingMutex("cpu"));
  EXPECT_NE(&DeviceTimingMutex("cpu"), &DeviceTimingMutex("gpu:0"));
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  MeasurementOptions options;
  options.warmup_runs = 1;
  options.min_runs = 3;
  options.max_runs = 3;
  options.target_spread = -1;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      absl::StatusOr<Measurement> m = MeasureRuns(
          [&] {
            if (inside.fetch_add(1) != 0) overlapped = true;
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            inside.fetch_sub(1);
            return absl::OkStatus();
          },
          options, DeviceTimingMutex("test-device"));
      EXPECT_TRUE(m.ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlapped);
}

TEST(MeasurementTest, CacheKeepsTheFirstResultPerFingerprint) {
  MeasurementCache cache;
  EXPECT_FALSE(cache.Lookup(7).has_value());
  Measurement a;
  a.median_seconds = 1.5;
  Measurement b;
  b.median_seconds = 2.5;
  EXPECT_EQ(cache.Insert(7, a)->median_seconds, 1.5);
  EXPECT_EQ(cache.Insert(7, b)->median_seconds, 1.5);
  ASSERT_TRUE(cache.Lookup(7).has_value());
  EXPECT_EQ((*cache.Lookup(7))->median_seconds, 1.5);
  EXPECT_FALSE(cache.Insert(8, absl::UnimplementedError("not supported: x")).ok());
  EXPECT_EQ(cache.Lookup(8)->status(), absl::UnimplementedError("not supported: x"));
  EXPECT_EQ(cache.size(), 2);
  EXPECT_EQ(cache.hits(), 3);
  EXPECT_EQ(cache.misses(), 1);
}

constexpr char kSoftmax[] = R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,128] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[64,128] broadcast(mx), dimensions={0}
  d = f32[64,128] subtract(x, mb)
  ex = f32[64,128] exponential(d)
  zero = f32[] constant(0)
  sm = f32[64] reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[64,128] broadcast(sm), dimensions={0}
  ROOT r = f32[64,128] divide(ex, sb)
}
)";

TEST(CpuRuntimeTest, MeasuresOnceThenAnswersFromTheCacheForEqualModules) {
  MeasurementOptions options;
  options.max_seconds = 0.05;
  absl::StatusOr<std::unique_ptr<CpuRuntime>> runtime = CpuRuntime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(kSoftmax);
  ASSERT_TRUE(module.ok());
  absl::StatusOr<Measurement> first = (*runtime)->Measure(**module);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(first->median_seconds, 0);
  EXPECT_GE(first->runs, 1);

  // The same module with other names has the same fingerprint: cached.
  std::string renamed = kSoftmax;
  for (size_t at = renamed.find("mx"); at != std::string::npos; at = renamed.find("mx", at)) {
    renamed.replace(at, 2, "mq");
  }
  absl::StatusOr<std::unique_ptr<Module>> other = ParseModule(renamed);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_EQ(Fingerprint(**other), Fingerprint(**module));
  absl::StatusOr<Measurement> second = (*runtime)->Measure(**other);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->median_seconds, first->median_seconds);
  EXPECT_EQ(second->runs, first->runs);
  EXPECT_EQ((*runtime)->cache().size(), 1);
  EXPECT_EQ((*runtime)->cache().hits(), 1);

  absl::StatusOr<CpuRuntimeReport> report = (*runtime)->MeasureUncached(**module);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->stats.kernel_count, 7);  // every instruction but the parameter and constants
  EXPECT_GT(report->compile_seconds, 0);
}

TEST(CpuRuntimeTest, UnsupportedModuleIsAnErrorNamingTheInstruction) {
  absl::StatusOr<std::unique_ptr<CpuRuntime>> runtime = CpuRuntime::Create();
  ASSERT_TRUE(runtime.ok());
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="foo"
}
)");
  ASSERT_TRUE(module.ok());
  for (int i = 0; i < 2; ++i) {  // the second answer comes from the cache
    absl::StatusOr<Measurement> m = (*runtime)->Measure(**module);
    EXPECT_EQ(m.status().message(),
              "not supported: custom-call target `foo` in instruction `c` (the CPU backend has "
              "no kernel for it)");
  }
  EXPECT_EQ((*runtime)->cache().hits(), 1);
}

}  // namespace
}  // namespace hlogym

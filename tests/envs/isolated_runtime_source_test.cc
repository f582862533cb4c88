// Isolated runtime sources: measurements in a worker process, so that a
// kernel that crashes, hangs or fails fails one measurement, and the process
// and the other environments go on. The broken kernels are the CPU backend's
// fault-injection custom-call (backend/host_ops.h).
#include "envs/isolated_runtime_source.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "envs/env_pool.h"
#include "envs/measurement_worker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kQuickOptions[] = "min_runs=2, max_runs=3, max_seconds=0.05";

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

std::unique_ptr<Module> Tanh(int n) {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  return Parse("HloModule tanh\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT t = " +
               shape + " tanh(x)\n}\n");
}

// negate(negate(x)) and then a custom-call that fails as `fault` says.
std::string FaultyHlo(const std::string& fault) {
  return "HloModule faulty\n\nENTRY main {\n"
         "  p0 = f32[1024]{0} parameter(0)\n"
         "  a0 = f32[1024]{0} negate(p0)\n"
         "  b0 = f32[1024]{0} negate(a0)\n"
         "  ROOT c = f32[1024]{0} custom-call(b0), custom_call_target=\"hlogym.inject_fault\", "
         "backend_config=\"" +
         fault + "\"\n}\n";
}

// A custom-call the CPU backend does not know: an ordinary "not supported".
constexpr char kUnsupportedHlo[] =
    "HloModule m\nENTRY e {\n  x = f32[64] parameter(0)\n"
    "  ROOT c = f32[64] custom-call(x), custom_call_target=\"no_such_target\"\n}\n";

std::shared_ptr<IsolatedRuntimeSource> Isolated(const std::string& extra = "") {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source = MakeRuntimeSource(
      std::string("cpu(isolate=1, ") + kQuickOptions + (extra.empty() ? "" : ", " + extra) + ")");
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return nullptr;
  auto isolated = std::dynamic_pointer_cast<IsolatedRuntimeSource>(*source);
  EXPECT_NE(isolated, nullptr);
  return isolated;
}

bool ProcessExists(pid_t pid) { return kill(pid, 0) == 0; }

TEST(IsolatedRuntimeSourceTest, MeasuresInAWorkerProcessAndCachesByFingerprint) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->name(), "cpu");
  EXPECT_FALSE(source->deterministic());
  const pid_t worker = source->worker_pid();
  EXPECT_GT(worker, 0);
  EXPECT_NE(worker, getpid());
  std::unique_ptr<Module> module = Tanh(4096);
  absl::StatusOr<double> first = source->Runtime(*module);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(*first, 0);
  EXPECT_LT(*first, 1.0);
  EXPECT_EQ(*source->Runtime(*Tanh(4096)), *first);  // an equal module: the cache
  EXPECT_EQ(source->worker_pid(), worker);
  EXPECT_EQ(source->workers_started(), 1);
  source.reset();  // the worker ends with its source
  EXPECT_FALSE(ProcessExists(worker));
}

TEST(IsolatedRuntimeSourceTest, WaitsForTheDevicesTimingMutexLikeInProcessTiming) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  std::unique_ptr<Module> module = Tanh(128);
  std::unique_lock<std::mutex> held(DeviceTimingMutex(kCpuDevice));  // another source timing
  std::future<absl::StatusOr<double>> runtime =
      std::async(std::launch::async, [&] { return source->Runtime(*module); });
  EXPECT_EQ(runtime.wait_for(std::chrono::seconds(1)), std::future_status::timeout);
  held.unlock();
  absl::StatusOr<double> seconds = runtime.get();
  EXPECT_TRUE(seconds.ok()) << seconds.status();
}

TEST(IsolatedRuntimeSourceTest, MeasuresModulesAgainstOneAnother) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  std::unique_ptr<Module> small = Tanh(256), large = Tanh(1 << 16);
  absl::StatusOr<std::vector<Measurement>> timed =
      source->MeasureInterleaved({small.get(), large.get()});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_EQ(timed->size(), 2u);
  for (const Measurement& m : *timed) {
    EXPECT_GT(m.median_seconds, 0);
    EXPECT_GE(m.runs, 1);
  }
}

TEST(IsolatedRuntimeSourceTest, ACrashFailsThatMeasurementAndTheNextOneGetsANewWorker) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  const pid_t first_worker = source->worker_pid();
  absl::StatusOr<double> crashed = source->Runtime(*Parse(FaultyHlo("segfault")));
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(crashed.status().message()),
              StartsWith("measuring module `faulty` on `cpu` failed: its worker process "));
  EXPECT_THAT(std::string(crashed.status().message()),
              HasSubstr(" before answering; the next measurement starts a new one"));
  EXPECT_EQ(source->worker_pid(), -1);
  EXPECT_FALSE(ProcessExists(first_worker));  // reaped
  absl::StatusOr<double> next = source->Runtime(*Tanh(2048));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(source->workers_started(), 2);
  // A failed measurement is not cached: asked again, it runs (and crashes
  // the second worker) again.
  EXPECT_FALSE(source->Runtime(*Parse(FaultyHlo("segfault"))).ok());
  EXPECT_EQ(source->worker_pid(), -1);
  EXPECT_EQ(source->workers_started(), 2);
  // The GPU's illegal-address kernel is a segfault on the host.
  absl::StatusOr<double> illegal = source->Runtime(*Parse(FaultyHlo("illegal_address")));
  ASSERT_FALSE(illegal.ok());
  EXPECT_THAT(std::string(illegal.status().message()),
              StartsWith("measuring module `faulty` on `cpu` failed: its worker process "));
  EXPECT_EQ(source->workers_started(), 3);
}

TEST(IsolatedRuntimeSourceTest, AHangTimesOutAndItsWorkerIsKilled) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated("timeout_s=1");
  ASSERT_NE(source, nullptr);
  const pid_t worker = source->worker_pid();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<double> hung = source->Runtime(*Parse(FaultyHlo("hang")));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(hung.status().message(),
            "measuring module `faulty` on `cpu` gave no answer within 1 s (timeout_s); its "
            "worker process was killed and the next measurement starts a new one");
  EXPECT_GE(waited, 1.0);
  EXPECT_LT(waited, 30.0);
  EXPECT_FALSE(ProcessExists(worker));
  EXPECT_TRUE(source->Runtime(*Tanh(1024)).ok());
}

TEST(IsolatedRuntimeSourceTest, ACachedAnswerDoesNotWaitForARequestInFlight) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated("timeout_s=3");
  ASSERT_NE(source, nullptr);
  std::unique_ptr<Module> measured = Tanh(4096);
  absl::StatusOr<double> first = source->Runtime(*measured);
  ASSERT_TRUE(first.ok()) << first.status();
  std::unique_ptr<Module> hangs = Parse(FaultyHlo("hang"));
  std::future<absl::StatusOr<double>> hung =
      std::async(std::launch::async, [&] { return source->Runtime(*hangs); });
  // Time for the hang to reach the worker and hold it (microseconds of work).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  absl::StatusOr<double> again = source->Runtime(*measured);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  // Answered while the hang was still waiting for its worker.
  EXPECT_EQ(hung.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(hung.get().status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(IsolatedRuntimeSourceTest, AnInternalErrorReachesTheCallerAndEndsTheWorker) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  absl::StatusOr<double> failed = source->Runtime(*Parse(FaultyHlo("error")));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(failed.status().message()), HasSubstr("injected fault in `c`"));
  // The device may be unusable after such an error (a CUDA context is), so
  // that worker is gone and the next measurement starts another.
  EXPECT_EQ(source->worker_pid(), -1);
  EXPECT_TRUE(source->Runtime(*Tanh(512)).ok());
  EXPECT_EQ(source->workers_started(), 2);
}

TEST(IsolatedRuntimeSourceTest, NotSupportedIsTheInProcessMessageAndKeepsTheWorker) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  const pid_t worker = source->worker_pid();
  absl::StatusOr<double> isolated = source->Runtime(*Parse(kUnsupportedHlo));
  absl::StatusOr<double> in_process = (*MakeRuntimeSource("cpu"))->Runtime(*Parse(kUnsupportedHlo));
  ASSERT_FALSE(isolated.ok());
  ASSERT_FALSE(in_process.ok());
  EXPECT_EQ(isolated.status(), in_process.status());
  EXPECT_EQ(source->worker_pid(), worker);
}

TEST(IsolatedRuntimeSourceTest, PreparesManyInOneRequestWithTheInProcessVerdicts) {
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  std::unique_ptr<Module> a = Tanh(300), bad = Parse(kUnsupportedHlo), b = Tanh(301);
  const pid_t worker = source->worker_pid();
  const std::vector<absl::Status> verdicts = source->PrepareAll({a.get(), bad.get(), b.get()});
  const absl::Status in_process = (*MakeRuntimeSource("cpu"))->Prepare(*bad);
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_TRUE(verdicts[0].ok()) << verdicts[0];
  ASSERT_FALSE(in_process.ok());
  EXPECT_EQ(verdicts[1], in_process);
  EXPECT_TRUE(verdicts[2].ok()) << verdicts[2];
  EXPECT_EQ(source->Prepare(*bad), in_process);
  EXPECT_EQ(source->worker_pid(), worker);  // an ordinary error keeps it
  EXPECT_TRUE(source->PrepareAll({}).empty());
  // A module measured already is not sent again: with the worker killed
  // behind the source's back, preparing it asks nothing, so the source has
  // not noticed the dead worker yet.
  ASSERT_TRUE(source->Runtime(*a).ok());
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  EXPECT_TRUE(source->Prepare(*a).ok());
  EXPECT_EQ(source->worker_pid(), worker);
  // A module that is sent meets the dead worker: it stays unprepared (its
  // verdict ok, the fault left to its measurement) and the next measurement
  // starts a new worker.
  const std::vector<absl::Status> after_crash = source->PrepareAll({b.get()});
  ASSERT_EQ(after_crash.size(), 1u);
  EXPECT_TRUE(after_crash[0].ok()) << after_crash[0];
  EXPECT_EQ(source->worker_pid(), -1);
  EXPECT_TRUE(source->Runtime(*b).ok());
  EXPECT_EQ(source->workers_started(), 2);
}

TEST(IsolatedRuntimeSourceTest, BadOptionsAndAMissingWorkerSayWhatIsWrong) {
  EXPECT_EQ(MakeRuntimeSource("cpu(isolate=2)").status().message(),
            "reward source `cpu`: isolate is 0 or 1, got 2");
  EXPECT_EQ(MakeRuntimeSource("cpu(isolate=1, timeout_s=0)").status().message(),
            "reward source `cpu`: need timeout_s > 0, got 0");
  EXPECT_FALSE(MakeRuntimeSource("cpu(isolate=1, timeout=3)").ok());  // unknown key
  setenv("HLOGYM_MEASURE_WORKER", "/nonexistent/hlogym_measure_worker", 1);
  absl::Status missing = MakeRuntimeSource("cpu(isolate=1)").status();
  unsetenv("HLOGYM_MEASURE_WORKER");
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.message(),
            "reward source `cpu`: the measurement worker `/nonexistent/hlogym_measure_worker` "
            "is missing or not executable; build the target hlogym_measure_worker (part of "
            "the default build) or point HLOGYM_MEASURE_WORKER at it");
}

TEST(IsolatedRuntimeSourceTest, TheGpuIsIsolatedByDefaultAndReportsAMissingGpuAlike) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> isolated = MakeRuntimeSource("gpu");
  absl::StatusOr<std::shared_ptr<RuntimeSource>> in_process =
      MakeRuntimeSource("gpu(isolate=0)");
  if (in_process.ok()) {
    // On a GPU: a crashing kernel fails its measurement, and the next one
    // gets a new worker with a fresh CUDA context.
    ASSERT_TRUE(isolated.ok()) << isolated.status();
    auto gpu = std::dynamic_pointer_cast<IsolatedRuntimeSource>(*isolated);
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ(std::dynamic_pointer_cast<IsolatedRuntimeSource>(*in_process), nullptr);
    absl::StatusOr<double> crashed = gpu->Runtime(*Parse(FaultyHlo("segfault")));
    ASSERT_FALSE(crashed.ok());
    EXPECT_THAT(std::string(crashed.status().message()),
                StartsWith("measuring module `faulty` on `gpu` failed: its worker process "));
    absl::StatusOr<double> next = gpu->Runtime(*Tanh(1 << 20));
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_GT(*next, 0);
    EXPECT_EQ(gpu->workers_started(), 2);
    // A kernel's illegal address: CUDA's error comes back, the poisoned
    // context goes with its worker, and the next module measures.
    absl::StatusOr<double> faulted = gpu->Runtime(*Parse(FaultyHlo("illegal_address")));
    ASSERT_FALSE(faulted.ok());
    EXPECT_EQ(faulted.status().code(), absl::StatusCode::kInternal) << faulted.status();
    EXPECT_EQ(gpu->worker_pid(), -1) << faulted.status();
    absl::StatusOr<double> after = gpu->Runtime(*Tanh(1 << 19));
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(gpu->workers_started(), 3);
    return;
  }
  // No GPU (or no CUDA build) here: the worker's error is the same error.
  ASSERT_FALSE(isolated.ok());
  EXPECT_EQ(isolated.status(), in_process.status());
}

TEST(IsolatedRuntimeSourceTest, APoolGoesOnWhenOneEnvsMeasurementCrashes) {
  testing::RegisterTestPass();
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules;
  modules.emplace_back("good", Parse(testing::DoubleNegationHlo(1, 1024)));
  modules.emplace_back("faulty", Parse(FaultyHlo("segfault")));
  std::shared_ptr<IsolatedRuntimeSource> source = Isolated();
  ASSERT_NE(source, nullptr);
  auto set = BenchmarkSet::FromModules(std::move(modules), {"dce"}, source);
  ASSERT_TRUE(set.ok()) << set.status();
  EnvSpec spec = testing::TestSpec();
  auto pool = EnvPool::Create(spec, *set, {4, 0, 2, /*seed=*/0});
  ASSERT_TRUE(pool.ok()) << pool.status();
  std::shared_ptr<Batch> batch = (*pool)->Reset(5, {}).value();
  const int64_t width = spec.limits.max_alternatives;
  int failed = 0, fine = 0;
  for (int step = 0; step < 12; ++step) {
    for (int64_t e = 0; e < batch->size(); ++e) {
      if (batch->errors()[e].empty()) {
        ++fine;
        EXPECT_EQ(batch->benchmark(e), 0);
      } else {
        ++failed;
        EXPECT_THAT(batch->errors()[e],
                    HasSubstr("measuring module `faulty` on `cpu` failed: its worker process "));
      }
    }
    absl::StatusOr<std::shared_ptr<Batch>> next =
        (*pool)->Step(std::vector<int64_t>(4 * width, 0));
    ASSERT_TRUE(next.ok()) << next.status();
    batch = *next;
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(fine, 0);
}

TEST(MeasurementWorkerProtocolTest, MessagesRoundTripAndBadBytesAreErrors) {
  using namespace measurement_worker;
  Reply reply;
  reply.status = absl::UnimplementedError("not supported: x");
  reply.measurements.push_back({1.5, 1.0, 0.1, 7, true});
  reply.prepared = {absl::OkStatus(), absl::UnimplementedError("not supported: y")};
  reply.fingerprints = {42, 7};
  reply.worker_exits = true;
  const std::string bytes = EncodeReply(reply);
  absl::StatusOr<Reply> back = DecodeReply(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->status, reply.status);
  ASSERT_EQ(back->measurements.size(), 1u);
  EXPECT_EQ(back->measurements[0].runs, 7);
  EXPECT_TRUE(back->measurements[0].converged);
  EXPECT_EQ(back->prepared, reply.prepared);
  EXPECT_EQ(back->fingerprints, reply.fingerprints);
  EXPECT_TRUE(back->worker_exits);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeReply(std::string_view(bytes).substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeReply(bytes + "x").ok());
  Request request;
  request.kind = RequestKind::kPrepare;
  EXPECT_EQ(DecodeRequest(EncodeRequest(request))->kind, RequestKind::kPrepare);
  request.kind = RequestKind::kInterleaved;
  request.seconds_per_module = 0.25;
  request.modules = {"HloModule a", "HloModule b"};
  absl::StatusOr<Request> decoded = DecodeRequest(EncodeRequest(request));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->modules, request.modules);
  EXPECT_EQ(decoded->seconds_per_module, 0.25);
  std::string bad = EncodeRequest(request);
  bad[0] = 9;
  EXPECT_EQ(DecodeRequest(bad).status().message(), "measurement worker: unknown request kind 9");
}

}  // namespace
}  // namespace hlogym

// A measured runtime source run in a worker process (envs/measurement_worker.h),
// so that a kernel that crashes, hangs or leaves the device unusable fails
// the one measurement that ran it: the environment that asked gets the error,
// and the process and its other environments go on. "gpu" is isolated by
// default (a CUDA fault poisons the whole context); "cpu(isolate=1)" asks for
// it on the CPU.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "envs/measurement_worker.h"
#include "envs/runtime_source.h"

namespace hlogym {

struct IsolationOptions {
  // A measurement that gets no answer within this long is failed and its
  // worker killed (a hung kernel, a watchdog that never fires). Interleaved
  // measurements of n modules get n times this.
  double timeout_seconds = 300;
};

class IsolatedRuntimeSource : public RuntimeSource {
 public:
  // Starts a worker that builds the source `worker_spec` (a measured source
  // with isolate=0) and waits for it: the worker's error (no GPU, a bad
  // option) is Create's. `name` is what name() says ("cpu", "gpu").
  static absl::StatusOr<std::shared_ptr<IsolatedRuntimeSource>> Create(
      std::string name, std::string worker_spec, IsolationOptions options);
  ~IsolatedRuntimeSource() override;

  std::string name() const override { return name_; }
  // Thread-safe; measurements take turns on the one worker, each holding the
  // device's timing mutex (DeviceTimingMutex) as in-process timing does, so
  // that two sources' workers never time on one device at once. Equal
  // modules (same fingerprint) are answered from this side's cache.
  absl::StatusOr<double> Runtime(const Module& module) override;
  bool deterministic() const override { return false; }
  // The modules go to the worker in one request and are compiled there in
  // parallel; ones this side has measured already are not sent. A worker
  // that dies or hangs while compiling leaves them unprepared (verdicts ok):
  // each meets that fault again, on its own, when it is measured.
  absl::Status Prepare(const Module& module) override;
  std::vector<absl::Status> PrepareAll(const std::vector<const Module*>& modules) override;
  absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
      const std::vector<const Module*>& modules, double seconds_per_module = 0) override;

  // The worker's process id (-1 while none runs) and how many were started:
  // for tests and diagnostics.
  pid_t worker_pid() const;
  int64_t workers_started() const;

 private:
  IsolatedRuntimeSource(std::string name, std::string worker_spec, IsolationOptions options)
      : name_(std::move(name)),
        device_(name_ == "gpu" ? kGpuDevice : kCpuDevice),
        worker_spec_(std::move(worker_spec)),
        options_(options) {}

  // mutex_ held by all of these.
  absl::Status StartWorker();
  // Ends the worker: closes its socket, then waits (killing it first when
  // `kill`). Returns how it ended ("killed by signal 11 (Segmentation
  // fault)", "exited with status 1").
  std::string StopWorker(bool kill);
  absl::StatusOr<measurement_worker::Reply> Ask(const measurement_worker::Request& request,
                                                double timeout_seconds,
                                                const std::string& what);

  const std::string name_;
  const std::string device_;  // its DeviceTimingMutex
  const std::string worker_spec_;
  const IsolationOptions options_;
  mutable std::mutex mutex_;  // the worker: one request at a time
  pid_t pid_ = -1;
  int socket_ = -1;
  int64_t started_ = 0;
  // Its own lock, so that a cached answer never waits for a request in flight.
  mutable std::mutex cache_mutex_;
  std::unordered_map<uint64_t, double> cache_;  // fingerprint -> seconds
};

// The worker executable: $HLOGYM_MEASURE_WORKER, else the one this build
// made (build/envs/hlogym_measure_worker).
std::string MeasureWorkerPath();

}  // namespace hlogym

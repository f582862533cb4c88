// Runtime measurement: warm-up runs, then timed runs (steady clock) until
// their spread is small, one device at a time; and a thread-safe cache of
// the results by module fingerprint.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace hlogym {

struct MeasurementOptions {
  int warmup_runs = 2;   // untimed; cut short once they took max_seconds / 2
  int min_runs = 5;      // timed runs before the spread may stop them
  int max_runs = 50;
  // Stop once (p90 - p10) / median of the timed runs is at most this.
  double target_spread = 0.05;
  // Stop the timed runs once they took this long in all (after one run at
  // least), so big modules take a few runs and small ones well under this.
  double max_seconds = 0.5;
};

struct Measurement {
  double median_seconds = 0;
  double min_seconds = 0;
  // (p90 - p10) / median over the timed runs, percentiles by nearest rank
  // on the sorted times: p10 = t[floor(0.1 (n-1))], p90 = t[ceil(0.9 (n-1))].
  double spread = 0;
  int runs = 0;            // timed runs
  bool converged = false;  // spread <= target_spread was reached
};

// Runs `run` as the options say, holding `device_mutex` for the warm-up and
// timed runs together (overlapping runs would corrupt each other's times).
// An error from `run` ends the measurement with that error.
absl::StatusOr<Measurement> MeasureRuns(const std::function<absl::Status()>& run,
                                        const MeasurementOptions& options,
                                        std::mutex& device_mutex);

// As MeasureRuns, for runs that time themselves (a GPU run timed by CUDA
// events): `timed_run` returns its own seconds.
absl::StatusOr<Measurement> MeasureTimedRuns(const std::function<absl::StatusOr<double>()>& timed_run,
                                             const MeasurementOptions& options,
                                             std::mutex& device_mutex);

// Measures several runs against one another, for their ratios: warm-up runs
// of each, then rounds that time each once, the first of each round rotating,
// so that a change of load during the measurement (another process, a
// frequency step) shifts all of them alike instead of whichever ran then.
// Options apply per run: each gets at most max_runs timed runs and leaves
// the rounds once its own timed runs took max_seconds (after one at least),
// so a slow module beside fast ones takes a run or two while they go on;
// the rounds stop once every run has left, or once every spread is within
// target_spread after min_runs rounds. One result per run, in order; an
// error from any run ends the measurement with that error.
absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
    const std::vector<std::function<absl::Status()>>& runs, const MeasurementOptions& options,
    std::mutex& device_mutex);

// As MeasureInterleaved, for runs that time themselves (GPU runs timed by
// CUDA events).
absl::StatusOr<std::vector<Measurement>> MeasureInterleavedTimed(
    const std::vector<std::function<absl::StatusOr<double>()>>& timed_runs,
    const MeasurementOptions& options, std::mutex& device_mutex);

// The one mutex of a device (kCpuDevice, kGpuDevice, ...): every timed
// section on it, from any runtime source or measurement worker's caller,
// holds it.
inline constexpr char kCpuDevice[] = "cpu";
inline constexpr char kGpuDevice[] = "gpu:0";
std::mutex& DeviceTimingMutex(const std::string& device);

// The spread of a set of times as Measurement documents it (0 when empty).
double Spread(std::vector<double> times);

// Results by module fingerprint; errors are cached too (a module that does
// not compile does not compile the next time either). Thread-safe; the
// first result stored for a fingerprint is kept.
class MeasurementCache {
 public:
  std::optional<absl::StatusOr<Measurement>> Lookup(uint64_t fingerprint) const;
  // Returns the cached result: `result`, or the one stored before it.
  absl::StatusOr<Measurement> Insert(uint64_t fingerprint, absl::StatusOr<Measurement> result);
  // The cached result for `fingerprint`, else `measure()`'s, cached when it
  // succeeded or failed for what the module is (unimplemented, invalid);
  // other errors (out of memory, a device fault) may pass and are not kept.
  absl::StatusOr<Measurement> GetOrMeasure(uint64_t fingerprint,
                                           const std::function<absl::StatusOr<Measurement>()>& measure);
  int64_t size() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<uint64_t, absl::StatusOr<Measurement>> results_;
  mutable int64_t hits_ = 0, misses_ = 0;
};

}  // namespace hlogym

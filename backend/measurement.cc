#include "backend/measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

namespace hlogym {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::StatusOr<double> TimeRun(const std::function<absl::Status()>& run) {
  const Clock::time_point start = Clock::now();
  absl::Status status = run();
  const double seconds = SecondsSince(start);
  if (!status.ok()) return status;
  return seconds;
}

// The untimed warm-up runs of one run, cut short once they took
// max_seconds / 2.
absl::Status WarmUp(const std::function<absl::Status()>& run, const MeasurementOptions& options) {
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < std::max(options.warmup_runs, 0); ++i) {
    if (absl::Status status = run(); !status.ok()) return status;
    if (SecondsSince(start) >= options.max_seconds / 2) break;
  }
  return absl::OkStatus();
}

// Median, minimum and spread of timed runs (not empty).
Measurement Summarize(const std::vector<double>& times, bool converged) {
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  Measurement m;
  m.median_seconds = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  m.min_seconds = sorted.front();
  m.spread = Spread(times);
  m.runs = static_cast<int>(n);
  m.converged = converged;
  return m;
}

}  // namespace

double Spread(std::vector<double> times) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median =
      n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  const double p10 = times[static_cast<size_t>(std::floor(0.1 * static_cast<double>(n - 1)))];
  const double p90 = times[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n - 1)))];
  return median > 0 ? (p90 - p10) / median : 0;
}

absl::StatusOr<Measurement> MeasureRuns(const std::function<absl::Status()>& run,
                                        const MeasurementOptions& options,
                                        std::mutex& device_mutex) {
  return MeasureTimedRuns([&] { return TimeRun(run); }, options, device_mutex);
}

absl::StatusOr<Measurement> MeasureTimedRuns(const std::function<absl::StatusOr<double>()>& timed_run,
                                             const MeasurementOptions& options,
                                             std::mutex& device_mutex) {
  std::lock_guard<std::mutex> lock(device_mutex);
  if (absl::Status status = WarmUp([&] { return timed_run().status(); }, options); !status.ok()) {
    return status;
  }
  std::vector<double> times;
  const int max_runs = std::max(options.max_runs, 1);
  times.reserve(max_runs);
  double total = 0;
  bool converged = false;
  while (static_cast<int>(times.size()) < max_runs) {
    absl::StatusOr<double> seconds = timed_run();
    if (!seconds.ok()) return seconds.status();
    times.push_back(*seconds);
    total += *seconds;
    if (static_cast<int>(times.size()) >= options.min_runs &&
        Spread(times) <= options.target_spread) {
      converged = true;
      break;
    }
    if (total >= options.max_seconds) break;
  }
  return Summarize(times, converged);
}

absl::StatusOr<std::vector<Measurement>> MeasureInterleaved(
    const std::vector<std::function<absl::Status()>>& runs, const MeasurementOptions& options,
    std::mutex& device_mutex) {
  std::vector<std::function<absl::StatusOr<double>()>> timed_runs;
  timed_runs.reserve(runs.size());
  for (const std::function<absl::Status()>& run : runs) {
    timed_runs.push_back([&run] { return TimeRun(run); });
  }
  return MeasureInterleavedTimed(timed_runs, options, device_mutex);
}

absl::StatusOr<std::vector<Measurement>> MeasureInterleavedTimed(
    const std::vector<std::function<absl::StatusOr<double>()>>& timed_runs,
    const MeasurementOptions& options, std::mutex& device_mutex) {
  std::lock_guard<std::mutex> lock(device_mutex);
  const size_t count = timed_runs.size();
  for (const std::function<absl::StatusOr<double>()>& run : timed_runs) {
    if (absl::Status status = WarmUp([&] { return run().status(); }, options); !status.ok()) {
      return status;
    }
  }
  std::vector<std::vector<double>> times(count);
  // Each run has its own budget and leaves the rounds once its timed runs
  // took it. One shared budget let a slow module end every round after one
  // or two, so the fast modules timed beside it got as few runs.
  std::vector<double> spent(count, 0.0);
  std::vector<bool> left(count, false);
  size_t timing = count;
  const int max_runs = std::max(options.max_runs, 1);
  bool converged = false;
  for (int round = 0; timing > 0 && round < max_runs; ++round) {
    for (size_t k = 0; k < count; ++k) {
      const size_t i = (k + static_cast<size_t>(round)) % count;
      if (left[i]) continue;
      absl::StatusOr<double> seconds = timed_runs[i]();
      if (!seconds.ok()) return seconds.status();
      times[i].push_back(*seconds);
      spent[i] += *seconds;
      if (spent[i] >= options.max_seconds) {
        left[i] = true;
        --timing;
      }
    }
    if (round + 1 >= options.min_runs &&
        std::all_of(times.begin(), times.end(), [&](const std::vector<double>& t) {
          return Spread(t) <= options.target_spread;
        })) {
      converged = true;
      break;
    }
  }
  std::vector<Measurement> results;
  results.reserve(count);
  for (const std::vector<double>& t : times) results.push_back(Summarize(t, converged));
  return results;
}

std::mutex& DeviceTimingMutex(const std::string& device) {
  static std::mutex registry_mutex;
  // Never destroyed: measurements may still run while statics are torn down.
  static auto* mutexes = new absl::flat_hash_map<std::string, std::unique_ptr<std::mutex>>();
  std::lock_guard<std::mutex> lock(registry_mutex);
  std::unique_ptr<std::mutex>& m = (*mutexes)[device];
  if (m == nullptr) m = std::make_unique<std::mutex>();
  return *m;
}

std::optional<absl::StatusOr<Measurement>> MeasurementCache::Lookup(uint64_t fingerprint) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = results_.find(fingerprint);
  if (it == results_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

absl::StatusOr<Measurement> MeasurementCache::Insert(uint64_t fingerprint,
                                                     absl::StatusOr<Measurement> result) {
  std::lock_guard<std::mutex> lock(mutex_);
  return results_.try_emplace(fingerprint, std::move(result)).first->second;
}

absl::StatusOr<Measurement> MeasurementCache::GetOrMeasure(
    uint64_t fingerprint, const std::function<absl::StatusOr<Measurement>()>& measure) {
  if (std::optional<absl::StatusOr<Measurement>> cached = Lookup(fingerprint)) {
    return *std::move(cached);
  }
  absl::StatusOr<Measurement> result = measure();
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code != absl::StatusCode::kUnimplemented && code != absl::StatusCode::kInvalidArgument) {
      return result.status();
    }
  }
  return Insert(fingerprint, std::move(result));
}

int64_t MeasurementCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(results_.size());
}
int64_t MeasurementCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}
int64_t MeasurementCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

}  // namespace hlogym

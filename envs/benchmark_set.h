// BenchmarkSet: the HLO modules an environment pool draws episodes from,
// parsed once and shared read-only by every environment. Each benchmark is
// prepared (pre-passes run, original and default-pipeline runtimes measured)
// the first time an episode needs it, once for the whole pool.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "envs/runtime_source.h"

namespace hlogym {

struct PreparedBenchmark {
  std::unique_ptr<const Module> module;  // after the pre-passes
  double original_runtime = 0;           // of `module`, seconds
  double default_runtime = 0;            // after the default pipeline
  uint64_t fingerprint = 0;              // of `module`
};

class BenchmarkSet {
 public:
  // Parses and verifies every file; errors name the file.
  static absl::StatusOr<std::shared_ptr<BenchmarkSet>> Load(
      const std::vector<std::string>& paths, std::vector<std::string> pre_passes,
      std::shared_ptr<RuntimeSource> runtime);
  // The same from modules already in memory (names given by the caller).
  static absl::StatusOr<std::shared_ptr<BenchmarkSet>> FromModules(
      std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules,
      std::vector<std::string> pre_passes, std::shared_ptr<RuntimeSource> runtime);

  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  const std::string& name(int64_t i) const { return entries_[i]->name; }
  const Module& source(int64_t i) const { return *entries_[i]->source; }
  RuntimeSource& runtime() const { return *runtime_; }
  const std::vector<std::string>& pre_passes() const { return pre_passes_; }

  // Prepares benchmark i on first use (thread-safe) and returns it.
  absl::StatusOr<const PreparedBenchmark*> Prepared(int64_t i) const;

 private:
  struct Entry {
    std::string name;
    std::unique_ptr<const Module> source;
    mutable std::once_flag once;
    mutable absl::StatusOr<PreparedBenchmark> prepared;
  };
  BenchmarkSet(std::vector<std::string> pre_passes, std::shared_ptr<RuntimeSource> runtime)
      : pre_passes_(std::move(pre_passes)), runtime_(std::move(runtime)) {}

  std::vector<std::string> pre_passes_;
  std::shared_ptr<RuntimeSource> runtime_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

// Runs pass specs in order, the whole list to a fixed point.
absl::Status RunPassSpecs(const std::vector<std::string>& specs, Module& module);

}  // namespace hlogym

// Batch: the arrays one pool step returns, each a block of memory owned by a
// shared_ptr so Python can view it without copying (the numpy array's base
// holds the pointer). Row i of every array belongs to one environment.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/features/graph_features.h"

namespace hlogym {

enum class DType { kFloat32, kFloat64, kInt32, kUInt8, kBool, kUInt64 };
int DTypeSize(DType dtype);

struct BatchArray {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;  // [batch, ...]
  std::shared_ptr<uint8_t> data;
  int64_t bytes() const;
  template <typename T>
  T* row(int64_t i) const {
    int64_t per_row = bytes() / shape[0];
    return reinterpret_cast<T*>(data.get() + i * per_row);
  }
};

// The arrays of a batch, in order; BatchField indexes Batch::arrays().
enum BatchField : int {
  kNodeFeaturesField, kNodeOpcodeField, kNodeMaskField, kEdgeIndexField,
  kEdgeFeaturesField, kEdgeMaskField, kInEdgeOffsetsField, kAltNodesField,
  kAltValidField, kAltNumChoicesField, kAltMaskField,
  kEnvIdField, kRewardField, kTerminatedField, kTruncatedField, kElapsedStepField,
  kBenchmarkField, kNumAlternativesField, kRewritesAppliedField,
  kOriginalRuntimeField, kDefaultRuntimeField, kCurrentRuntimeField,
  kFingerprintField, kNumBatchFields
};

// Every array of a pool's batch, in a fixed order. Observation arrays come
// first (node_features ... alt_mask), then per-environment step results.
class Batch {
 public:
  Batch(int64_t batch_size, const FeatureLimits& limits);
  // The bytes a batch of `batch_size` rows holds at `limits` (in floating
  // point: absurd limits must not overflow the answer).
  static double Bytes(int64_t batch_size, const FeatureLimits& limits);

  int64_t size() const { return size_; }
  const std::vector<BatchArray>& arrays() const { return arrays_; }
  const BatchArray& array(const std::string& name) const;

  // Environment row i as an observation view.
  ObservationView Observation(int64_t i) const;
  // How much of row i's observation the last write used (all padding past
  // it), so that rewriting a row clears only that much (WriteObservation).
  GraphCounts* extent(int64_t i) const { return &extents_[i]; }
  // Writes row i as an empty observation (the padding WriteObservation
  // writes past a graph: zeros, masks 0, node and edge indices -1) with zero
  // step results, for an environment that has no graph to show.
  void ClearRow(int64_t i) const;
  // After env `env_id` wrote row i: hands the node and edge feature pages
  // past what the write used back to the OS (they read as zeros, the
  // padding) once earlier writes used more than twice as much and at least
  // 1 MiB more. A row sized for the widest graph (~13 MB at 32768 nodes and
  // 131072 edges) that once held one would otherwise stay resident for good,
  // and over a long run every row of a 64-env pool does. At once when the
  // same env wrote the row before (a sync pool's rows: that env's graph
  // shrank); else only after kReleaseAfterWrites such writes in a row: an
  // async pool's rows take whichever envs finish, large and small in turn,
  // and handing pages back at each small one had the next large one fault
  // them in again (~13% of a 16-env async pool's CPU).
  void ReleaseUnused(int64_t i, int32_t env_id) const;
  static constexpr int kReleaseAfterWrites = 8;

  // Per-environment results, by row.
  int32_t& env_id(int64_t i) const { return Get<int32_t>(kEnvIdField, i); }
  float& reward(int64_t i) const { return Get<float>(kRewardField, i); }
  bool& terminated(int64_t i) const { return Get<bool>(kTerminatedField, i); }
  bool& truncated(int64_t i) const { return Get<bool>(kTruncatedField, i); }
  int32_t& elapsed_step(int64_t i) const { return Get<int32_t>(kElapsedStepField, i); }
  int32_t& benchmark(int64_t i) const { return Get<int32_t>(kBenchmarkField, i); }
  int32_t& num_alternatives(int64_t i) const { return Get<int32_t>(kNumAlternativesField, i); }
  int32_t& rewrites_applied(int64_t i) const { return Get<int32_t>(kRewritesAppliedField, i); }
  double& original_runtime(int64_t i) const { return Get<double>(kOriginalRuntimeField, i); }
  double& default_runtime(int64_t i) const { return Get<double>(kDefaultRuntimeField, i); }
  double& current_runtime(int64_t i) const { return Get<double>(kCurrentRuntimeField, i); }
  uint64_t& fingerprint(int64_t i) const { return Get<uint64_t>(kFingerprintField, i); }

  // Messages of environments whose step failed inside the pool (empty when
  // it did not); such an environment is truncated and resets next step.
  std::vector<std::string>& errors() { return errors_; }
  const std::vector<std::string>& errors() const { return errors_; }

  // Whether anything outside the pool (a numpy array) still holds memory.
  bool shared_outside() const;

 private:
  template <typename T>
  T& Get(BatchField field, int64_t i) const {
    return *arrays_[field].row<T>(i);
  }
  // Every array's name, type and shape, without memory.
  static std::vector<BatchArray> Layout(int64_t batch_size, const FeatureLimits& limits);

  int64_t size_;
  std::vector<BatchArray> arrays_;
  std::vector<std::string> errors_;
  mutable std::vector<GraphCounts> extents_;
  mutable std::vector<GraphCounts> touched_;  // high-water of extents_ since the last release
  // Writes in a row that used under half of touched_, and the env that
  // wrote the row last (-1: none).
  mutable std::vector<int32_t> oversized_writes_;
  mutable std::vector<int32_t> last_writer_;
};

}  // namespace hlogym

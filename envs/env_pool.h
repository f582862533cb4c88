// EnvPool: num_envs environments stepped in parallel on a TBB arena, with a
// synchronous step over all of them and EnvPool-style asynchronous
// send/recv returning batch_size results at a time, tagged with env ids.
// Results are written straight into Batch buffers that Python views without
// copying; a buffer is reused only once nothing outside the pool holds it.
// Autoreset is Gymnasium's next-step mode: the step after an episode ends
// resets that environment, ignores its action and returns reward 0.
// A synchronous step deals its envs to the threads longest first, each env
// kept on its thread where the loads allow (envs/env_pool_schedule.h); async
// steps run on the workers and on Recv's thread while it waits, each env's
// queued to the thread that ran its last one (another takes it once it has
// waited more than a batch longer than that thread's next job).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/base/parallel.h"
#include "envs/async_job_queues.h"
#include "envs/batch.h"
#include "envs/env_pool_schedule.h"
#include "envs/hlo_rewrite_env.h"
#include "oneapi/tbb/task_arena.h"
#include "oneapi/tbb/task_group.h"

namespace hlogym {

struct PoolOptions {
  int64_t num_envs = 1;
  int64_t batch_size = 0;  // 0: num_envs (synchronous pools)
  int num_threads = 0;     // 0: all cores
  uint64_t seed = 0;       // environment i starts from seed + i
};

class EnvPool {
 public:
  static absl::StatusOr<std::unique_ptr<EnvPool>> Create(
      EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks, PoolOptions options);
  ~EnvPool();

  int64_t num_envs() const { return static_cast<int64_t>(envs_.size()); }
  int64_t batch_size() const { return options_.batch_size; }
  int num_threads() const { return options_.num_threads; }
  const EnvSpec& spec() const { return spec_; }
  const BenchmarkSet& benchmarks() const { return *benchmarks_; }

  // Resets the environments where `mask` is true (all when empty), reseeding
  // environment i with seed + i when a seed is given. Returns every
  // environment's row, in env order.
  absl::StatusOr<std::shared_ptr<Batch>> Reset(std::optional<uint64_t> seed,
                                               const std::vector<bool>& mask);
  // Steps every environment with its row of `actions` ([num_envs, A_max],
  // choice per alternative slot; slots past the env's alternatives are
  // ignored). Rows come back in env order. Invalid choices fail the whole
  // call before any environment moves.
  absl::StatusOr<std::shared_ptr<Batch>> Step(absl::Span<const int64_t> actions);

  // Asynchronous: queues a step for each env id with its row of `actions`
  // ([n, A_max]). An env id already in flight is an error.
  absl::Status Send(absl::Span<const int64_t> actions, absl::Span<const int32_t> env_ids);
  // Queues a reset of every environment not in flight.
  absl::Status AsyncReset();
  // Waits for the next batch_size results (in completion order), running
  // queued steps on the calling thread meanwhile (it is one of num_threads).
  absl::StatusOr<std::shared_ptr<Batch>> Recv();

  // Per-environment access; the environment must not be in flight.
  // Every call above and below may come from several threads at once (Python
  // threads, with the GIL released): they take turns (calls_mutex_), and an
  // env is never stepped by two at once. Recv does not wait its turn, so one
  // thread may wait in Recv while another sends.
  absl::StatusOr<std::unique_ptr<Module>> ModuleCopy(int64_t env_id) const;
  absl::StatusOr<EpisodeRecord> Record(int64_t env_id) const;
  absl::StatusOr<EnvInfo> Info(int64_t env_id) const;
  absl::StatusOr<std::unique_ptr<HloRewriteEnv>> ForkEnv(int64_t env_id) const;
  // Runs `read` on the environments `env_ids` (none in flight), in that
  // order, while no other call changes them: agents decide from the envs
  // without copying them. `read` must not call the pool.
  absl::Status ReadEnvs(
      absl::Span<const int64_t> env_ids,
      absl::FunctionRef<absl::Status(absl::Span<const HloRewriteEnv* const>)> read) const;
  // How the last sync Step or Reset ran: each env's time and thread.
  const StepSchedule& schedule() const { return schedule_; }

 private:
  struct Slot;
  EnvPool(EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks, PoolOptions options);

  // A batch to write into: a recycled one nobody else holds, or a new one.
  std::shared_ptr<Batch> AcquireBatch(int64_t rows);
  std::shared_ptr<Batch> AcquireBatchLocked(int64_t rows);  // mutex_ held
  absl::Status CheckEnvId(int64_t env_id) const;
  absl::Status SendLocked(absl::Span<const int64_t> actions,
                          absl::Span<const int32_t> env_ids);  // calls_mutex_ held
  absl::Status CheckActions(absl::Span<const int64_t> actions,
                            absl::Span<const int32_t> env_ids) const;
  // What one environment's step or reset came to, before it is written into
  // a row (the async path claims its row only then).
  struct Outcome {
    bool reset;  // a reset (asked for, or the autoreset) rather than a step
    absl::Status status;
    double reward;
  };
  Outcome ResetEnv(int32_t env_id, std::optional<uint64_t> seed);
  // The env's step with its row of actions, or its autoreset.
  Outcome AdvanceEnv(int32_t env_id, const int64_t* action);
  // `writers`: kArena from the sync Step and Reset (WriteObservation says why).
  void WriteOutcome(int32_t env_id, const Outcome& outcome, Batch& batch, int64_t row,
                    RowWriters writers);
  void WriteRow(int32_t env_id, double reward, Batch& batch, int64_t row, RowWriters writers);
  // Async: runs a queued job, if any (a worker's task, or Recv's thread
  // while it waits), the one AsyncJobQueues::Take gives this thread's slot
  // with a patience of batch_size jobs; false when every queue was empty.
  bool RunQueuedJob();
  // Async completion: claims a row in the open batch.
  std::pair<std::shared_ptr<Slot>, int64_t> ClaimRow();
  void FinishRow(const std::shared_ptr<Slot>& slot);

  EnvSpec spec_;
  std::shared_ptr<const BenchmarkSet> benchmarks_;
  PoolOptions options_;
  std::vector<std::unique_ptr<HloRewriteEnv>> envs_;
  std::vector<uint8_t> needs_reset_;             // done at the last step
  std::unique_ptr<std::atomic<bool>[]> in_flight_;
  StepSchedule schedule_;  // sync Step and Reset
  // TBB's hand-offs, for TSan: env state from Send to its tasks, and
  // everything the tasks did to the destructor.
  HandOffEdge task_spawn_;
  HandOffEdge task_join_;
  tbb::task_arena arena_;
  tbb::task_group async_tasks_;

  // Held by each public call but Recv for its whole run: two sync steps at
  // once would step every env twice at once, and a read of an env (a module
  // copy, a fork) during a step would read it half-stepped. Queued async
  // steps run without it, on envs marked in flight while it was held.
  mutable std::mutex calls_mutex_;
  std::mutex mutex_;  // guards everything below
  std::condition_variable ready_cv_;
  std::vector<std::shared_ptr<Batch>> recycled_;
  std::shared_ptr<Slot> open_;
  int64_t open_rows_ = 0;
  std::deque<std::shared_ptr<Batch>> ready_;
  // Sent, not started (AsyncJobQueues says which a free thread runs).
  AsyncJobQueues jobs_;
  int64_t pending_ = 0;  // queued async results not yet handed out
};

}  // namespace hlogym

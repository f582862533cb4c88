#include "envs/env_pool.h"

#include <algorithm>
#include <thread>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/status_macros.h"

namespace hlogym {

// An async batch being filled: rows are claimed under the mutex, written
// without it, and counted when done.
struct EnvPool::Slot {
  std::shared_ptr<Batch> batch;
  std::atomic<int64_t> done{0};
};

EnvPool::EnvPool(EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks,
                 PoolOptions options)
    : spec_(std::move(spec)), benchmarks_(std::move(benchmarks)), options_(options),
      schedule_(options.num_envs, options.num_threads),
      arena_(options.num_threads),
      jobs_(options.num_envs, options.num_threads) {}

EnvPool::~EnvPool() {
  arena_.execute([&] { async_tasks_.wait(); });
  task_join_.TakeOver();
}

namespace {

// Two batches of full rows (the one the caller holds and the next being
// written) and the environments themselves must fit in this machine's
// memory. The batches' pages cost nothing until written, so a pool past this
// starts, but cannot go on once its graphs grow; and one far past it never
// started: num_envs = 10^9 was killed by the OOM killer while making its
// environments (each at least sizeof(HloRewriteEnv), ~3 KiB with its random
// generator, before any module).
absl::Status CheckPoolFits(const PoolOptions& options, const FeatureLimits& limits) {
  const double batches = 2 * Batch::Bytes(options.batch_size, limits);
  const double envs = static_cast<double>(options.num_envs) * sizeof(HloRewriteEnv);
  const double memory =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (memory <= 0 || batches + envs <= memory) return absl::OkStatus();
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return absl::InvalidArgumentError(absl::StrFormat(
      "a pool of %d envs, %d per batch, at max_nodes %d, max_edges %d, max_alternatives %d "
      "and max_choices %d needs %.1f GiB for two batches of observations (%.1f MiB per row) "
      "and %.1f GiB for its envs, more than this machine's %.1f GiB: lower num_envs (or "
      "batch_size) or the limits",
      options.num_envs, options.batch_size, limits.max_nodes, limits.max_edges,
      limits.max_alternatives, limits.max_choices, batches / kGiB,
      Batch::Bytes(1, limits) / (1024.0 * 1024), envs / kGiB, memory / kGiB));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EnvPool>> EnvPool::Create(
    EnvSpec spec, std::shared_ptr<const BenchmarkSet> benchmarks, PoolOptions options) {
  if (options.num_envs <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_envs must be positive, got ", options.num_envs));
  }
  if (options.batch_size == 0) options.batch_size = options.num_envs;
  if (options.batch_size < 0 || options.batch_size > options.num_envs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_size must be in [1, num_envs = ", options.num_envs, "], got ",
        options.batch_size));
  }
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be >= 0, got ", options.num_threads));
  }
  if (options.num_threads == 0) {
    options.num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  RETURN_IF_ERROR(CheckPoolFits(options, spec.limits));
  std::unique_ptr<EnvPool> pool(new EnvPool(spec, benchmarks, options));
  for (int64_t i = 0; i < options.num_envs; ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<HloRewriteEnv> env,
                     HloRewriteEnv::Create(spec, benchmarks, options.seed + i));
    pool->envs_.push_back(std::move(env));
  }
  pool->needs_reset_.assign(options.num_envs, 1);
  pool->in_flight_ = std::make_unique<std::atomic<bool>[]>(options.num_envs);
  for (int64_t i = 0; i < options.num_envs; ++i) pool->in_flight_[i] = false;
  return pool;
}

std::shared_ptr<Batch> EnvPool::AcquireBatch(int64_t rows) {
  std::lock_guard<std::mutex> lock(mutex_);
  return AcquireBatchLocked(rows);
}

std::shared_ptr<Batch> EnvPool::AcquireBatchLocked(int64_t rows) {
  for (auto& batch : recycled_) {
    if (batch->size() == rows && batch.use_count() == 1 && !batch->shared_outside()) {
      std::fill(batch->errors().begin(), batch->errors().end(), "");
      return batch;
    }
  }
  auto batch = std::make_shared<Batch>(rows, spec_.limits);
  // Keep a few for reuse; beyond that, let old ones go once released.
  if (recycled_.size() < 8) recycled_.push_back(batch);
  return batch;
}

absl::Status EnvPool::CheckEnvId(int64_t env_id) const {
  if (env_id < 0 || env_id >= num_envs()) {
    return absl::OutOfRangeError(
        absl::StrCat("env id ", env_id, " is out of range [0, ", num_envs(), ")"));
  }
  if (in_flight_[env_id]) {
    return absl::FailedPreconditionError(
        absl::StrCat("env ", env_id, " has a step in flight: recv it first"));
  }
  return absl::OkStatus();
}

absl::Status EnvPool::CheckActions(absl::Span<const int64_t> actions,
                                   absl::Span<const int32_t> env_ids) const {
  const int64_t width = spec_.limits.max_alternatives;
  if (static_cast<int64_t>(actions.size()) != static_cast<int64_t>(env_ids.size()) * width) {
    return absl::InvalidArgumentError(absl::StrCat(
        "actions must have shape [", env_ids.size(), ", ", width, "] (max_alternatives = ",
        width, "); got ", actions.size(), " values"));
  }
  for (size_t r = 0; r < env_ids.size(); ++r) {
    const int32_t id = env_ids[r];
    RETURN_IF_ERROR(CheckEnvId(id));
    if (needs_reset_[id]) continue;  // the action is ignored
    const std::vector<int32_t>& counts = envs_[id]->choice_counts();
    if (static_cast<int64_t>(counts.size()) > width) {
      // The env refuses such graphs at reset and step; never index past a row.
      return absl::InternalError(absl::StrCat(
          "env ", id, " offers ", counts.size(), " alternatives but max_alternatives is ",
          width));
    }
    for (size_t s = 0; s < counts.size(); ++s) {
      const int64_t choice = actions[r * width + s];
      if (choice < 0 || choice >= counts[s]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "env ", id, ", alternative ", s, ": choice ", choice,
            " is out of range [0, ", counts[s], ")"));
      }
    }
  }
  return absl::OkStatus();
}

void EnvPool::WriteRow(int32_t env_id, double reward, Batch& batch, int64_t row,
                       RowWriters writers) {
  const HloRewriteEnv& env = *envs_[env_id];
  const EnvInfo& info = env.info();
  absl::StatusOr<GraphCounts> counts =
      env.Observe(batch.Observation(row), batch.extent(row), writers);
  if (!counts.ok()) batch.ClearRow(row);  // no stale graph from the buffer's last use
  batch.ReleaseUnused(row, env_id);
  batch.env_id(row) = env_id;
  batch.reward(row) = static_cast<float>(reward);
  batch.terminated(row) = info.terminated;
  batch.truncated(row) = info.truncated;
  batch.elapsed_step(row) = static_cast<int32_t>(info.step);
  batch.benchmark(row) = static_cast<int32_t>(info.benchmark);
  batch.num_alternatives(row) = static_cast<int32_t>(info.num_alternatives);
  batch.rewrites_applied(row) = static_cast<int32_t>(info.rewrites_applied);
  batch.original_runtime(row) = info.original_runtime;
  batch.default_runtime(row) = info.default_runtime;
  batch.current_runtime(row) = info.current_runtime;
  batch.fingerprint(row) = info.fingerprint;
  if (!counts.ok()) {
    // The graph does not fit the observation: end the episode visibly.
    batch.errors()[row] = std::string(counts.status().message());
    batch.truncated(row) = !info.terminated;
  }
  needs_reset_[env_id] = batch.terminated(row) || batch.truncated(row);
}

EnvPool::Outcome EnvPool::ResetEnv(int32_t env_id, std::optional<uint64_t> seed) {
  return {true, envs_[env_id]->Reset(seed), 0.0};
}

EnvPool::Outcome EnvPool::AdvanceEnv(int32_t env_id, const int64_t* action) {
  if (needs_reset_[env_id]) return ResetEnv(env_id, std::nullopt);
  HloRewriteEnv& env = *envs_[env_id];
  // CheckActions made sure the env's slots fit the action row.
  absl::StatusOr<double> reward =
      env.Step(absl::MakeConstSpan(action, env.choice_counts().size()));
  if (!reward.ok()) return {false, reward.status(), 0.0};
  return {false, absl::OkStatus(), *reward};
}

void EnvPool::WriteOutcome(int32_t env_id, const Outcome& outcome, Batch& batch, int64_t row,
                           RowWriters writers) {
  if (outcome.reset && !outcome.status.ok()) {
    // No graph to show: an empty row carrying the error, truncated so that
    // the next step resets (and draws) again.
    batch.ClearRow(row);
    batch.errors()[row] = std::string(outcome.status.message());
    batch.env_id(row) = env_id;
    batch.benchmark(row) = -1;
    batch.truncated(row) = true;
    needs_reset_[env_id] = 1;
    return;
  }
  WriteRow(env_id, outcome.reward, batch, row, writers);
  if (!outcome.status.ok()) {
    // A failed step leaves the env unchanged: show where it stands, with the
    // error, and end the episode so the pool goes on.
    batch.errors()[row] = std::string(outcome.status.message());
    batch.truncated(row) = true;
    needs_reset_[env_id] = 1;
  }
}

absl::StatusOr<std::shared_ptr<Batch>> EnvPool::Reset(std::optional<uint64_t> seed,
                                                      const std::vector<bool>& mask) {
  if (!mask.empty() && static_cast<int64_t>(mask.size()) != num_envs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reset_mask must have num_envs = ", num_envs(), " entries, got ", mask.size()));
  }
  std::lock_guard<std::mutex> call(calls_mutex_);
  for (int64_t i = 0; i < num_envs(); ++i) RETURN_IF_ERROR(CheckEnvId(i));
  std::shared_ptr<Batch> batch = AcquireBatch(num_envs());
  arena_.execute([&] {
    schedule_.Run([&](int64_t i) {
      const int32_t id = static_cast<int32_t>(i);
      if (mask.empty() || mask[i]) {
        WriteOutcome(id, ResetEnv(id, seed ? std::optional<uint64_t>(*seed + i) : std::nullopt),
                     *batch, i, RowWriters::kArena);
      } else if (envs_[i]->in_episode()) {
        WriteRow(id, 0.0, *batch, i, RowWriters::kArena);
      } else {
        WriteOutcome(id, ResetEnv(id, std::nullopt), *batch, i, RowWriters::kArena);
      }
    });
  });
  return batch;
}

absl::StatusOr<std::shared_ptr<Batch>> EnvPool::Step(absl::Span<const int64_t> actions) {
  std::vector<int32_t> ids(num_envs());
  for (int64_t i = 0; i < num_envs(); ++i) ids[i] = static_cast<int32_t>(i);
  std::lock_guard<std::mutex> call(calls_mutex_);
  RETURN_IF_ERROR(CheckActions(actions, ids));
  std::shared_ptr<Batch> batch = AcquireBatch(num_envs());
  const int64_t width = spec_.limits.max_alternatives;
  arena_.execute([&] {
    schedule_.Run([&](int64_t i) {
      const int32_t id = static_cast<int32_t>(i);
      WriteOutcome(id, AdvanceEnv(id, actions.data() + i * width), *batch, i, RowWriters::kArena);
    });
  });
  return batch;
}

std::pair<std::shared_ptr<EnvPool::Slot>, int64_t> EnvPool::ClaimRow() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_ == nullptr || open_rows_ == batch_size()) {
    open_ = std::make_shared<Slot>();
    open_->batch = AcquireBatchLocked(batch_size());
    open_rows_ = 0;
  }
  return {open_, open_rows_++};
}

void EnvPool::FinishRow(const std::shared_ptr<Slot>& slot) {
  if (slot->done.fetch_add(1) + 1 == batch_size()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(slot->batch);
    ready_cv_.notify_all();
  }
}

absl::Status EnvPool::Send(absl::Span<const int64_t> actions,
                           absl::Span<const int32_t> env_ids) {
  std::lock_guard<std::mutex> call(calls_mutex_);
  return SendLocked(actions, env_ids);
}

absl::Status EnvPool::SendLocked(absl::Span<const int64_t> actions,
                                 absl::Span<const int32_t> env_ids) {
  RETURN_IF_ERROR(CheckActions(actions, env_ids));
  for (size_t a = 0; a < env_ids.size(); ++a) {
    for (size_t b = a + 1; b < env_ids.size(); ++b) {
      if (env_ids[a] == env_ids[b]) {
        return absl::InvalidArgumentError(
            absl::StrCat("env id ", env_ids[a], " appears twice in one send"));
      }
    }
  }
  const int64_t width = spec_.limits.max_alternatives;
  for (size_t r = 0; r < env_ids.size(); ++r) {
    const int32_t id = env_ids[r];
    in_flight_[id] = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++pending_;
      jobs_.Push(id, std::vector<int64_t>(actions.begin() + r * width,
                                          actions.begin() + (r + 1) * width));
    }
    // One task per job for the arena's workers; a task runs the job
    // RunQueuedJob picks for its thread, or nothing when every queue was
    // emptied first (by Recv's thread, or by other tasks).
    // One thread has no workers: Recv runs every job.
    if (num_threads() == 1) continue;
    task_spawn_.HandOff();
    arena_.execute([&] {
      async_tasks_.run([this] {
        task_spawn_.TakeOver();
        RunQueuedJob();
        task_join_.HandOff();
      });
    });
  }
  ready_cv_.notify_all();  // a Recv waiting on another thread has jobs to run
  return absl::OkStatus();
}

bool EnvPool::RunQueuedJob() {
  // Inside the arena (a task, or Recv's execute): a slot in [0, num_threads).
  const int index = tbb::this_task_arena::current_thread_index();
  const int here = index >= 0 ? index % num_threads() : 0;
  std::optional<AsyncJobQueues::Job> taken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken = jobs_.Take(here, batch_size());
  }
  if (!taken) return false;
  const AsyncJobQueues::Job& job = *taken;
  // The row is claimed once the env has stepped, so a batch holds the first
  // batch_size envs to finish rather than the first to start (a slow env no
  // longer holds back the ones that started after it); env ids tell the rows
  // apart.
  const Outcome outcome = AdvanceEnv(job.env_id, job.action.data());
  auto [slot, row] = ClaimRow();
  WriteOutcome(job.env_id, outcome, *slot->batch, row, RowWriters::kCallingThread);
  in_flight_[job.env_id] = false;
  FinishRow(slot);
  return true;
}

absl::Status EnvPool::AsyncReset() {
  std::lock_guard<std::mutex> call(calls_mutex_);
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < num_envs(); ++i) {
    if (!in_flight_[i]) {
      ids.push_back(static_cast<int32_t>(i));
      needs_reset_[i] = 1;
    }
  }
  std::vector<int64_t> zeros(ids.size() * spec_.limits.max_alternatives, 0);
  return SendLocked(zeros, ids);
}

absl::StatusOr<std::shared_ptr<Batch>> EnvPool::Recv() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (ready_.empty() && pending_ < batch_size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "recv would wait forever: ", pending_, " results are pending but a batch needs ",
        batch_size(), "; send more first"));
  }
  // The arena reserves a slot for this thread, which would otherwise sit
  // idle while the queue waits for the workers (all of them, with one
  // thread: the queue never ran): it runs queued jobs until a batch is ready.
  while (ready_.empty()) {
    if (jobs_.queued() == 0) {
      ready_cv_.wait(lock);  // the last jobs run on workers
      continue;
    }
    lock.unlock();
    arena_.execute([&] { RunQueuedJob(); });
    lock.lock();
  }
  std::shared_ptr<Batch> batch = ready_.front();
  ready_.pop_front();
  pending_ -= batch_size();
  return batch;
}

absl::StatusOr<std::unique_ptr<Module>> EnvPool::ModuleCopy(int64_t env_id) const {
  std::lock_guard<std::mutex> call(calls_mutex_);
  RETURN_IF_ERROR(CheckEnvId(env_id));
  if (!envs_[env_id]->in_episode()) {
    return absl::FailedPreconditionError(absl::StrCat("env ", env_id, " has not been reset"));
  }
  return envs_[env_id]->module().Clone();
}

absl::StatusOr<EpisodeRecord> EnvPool::Record(int64_t env_id) const {
  std::lock_guard<std::mutex> call(calls_mutex_);
  RETURN_IF_ERROR(CheckEnvId(env_id));
  return envs_[env_id]->record();
}

absl::StatusOr<EnvInfo> EnvPool::Info(int64_t env_id) const {
  std::lock_guard<std::mutex> call(calls_mutex_);
  RETURN_IF_ERROR(CheckEnvId(env_id));
  return envs_[env_id]->info();
}

absl::StatusOr<std::unique_ptr<HloRewriteEnv>> EnvPool::ForkEnv(int64_t env_id) const {
  std::lock_guard<std::mutex> call(calls_mutex_);
  RETURN_IF_ERROR(CheckEnvId(env_id));
  return envs_[env_id]->Fork();
}

absl::Status EnvPool::ReadEnvs(
    absl::Span<const int64_t> env_ids,
    absl::FunctionRef<absl::Status(absl::Span<const HloRewriteEnv* const>)> read) const {
  std::lock_guard<std::mutex> call(calls_mutex_);
  std::vector<const HloRewriteEnv*> envs;
  envs.reserve(env_ids.size());
  for (int64_t id : env_ids) {
    RETURN_IF_ERROR(CheckEnvId(id));
    envs.push_back(envs_[id].get());
  }
  return read(envs);
}

}  // namespace hlogym

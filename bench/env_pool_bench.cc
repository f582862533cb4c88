// Environment pool speed and memory on the corpus (data/corpus/hlo/*.hlo)
// under fusion-v0 with the cost-model reward ("cost"), random legal actions.
//
//   BM_PoolSteps/<num_envs>/<num_threads>  steps per second of EnvPool::Step
//                                          (env steps, autoresets included;
//                                          the action sampling is timed too)
//       balance    the env steps' time over num_threads x the busiest
//                  thread's, summed over pool steps (1: no thread waited)
//       x2_bound   the env steps' time over what two threads would take at
//                  best, max(sum / 2, longest env step), summed over pool
//                  steps: the 1 -> 2 thread ratio these step times allow
//                  with whole env steps as the unit of work (a large env's
//                  observation rows are shared by the threads, so the ratio
//                  can pass it)
//   BM_PoolAsync/<num_envs>/<batch>/<num_threads>  the same through
//                                          Send/Recv: every env in flight,
//                                          each Recv's batch_size envs sent
//                                          again at once, so no step waits
//                                          for the slowest env of a batch
//   BM_StepLatency/<module>                one environment's step (Step plus
//                                          the observation write, as the pool
//                                          does it): median and worst
//   BM_StepLatencyCorpus                   the median over every module's
//                                          steps and the slowest module
//   BM_PoolMemory                          resident memory (VmRSS) of 64 envs
//                                          on 2 threads ($HLOGYM_BENCH_MEMORY_
//                                          THREADS) over
//                                          $HLOGYM_BENCH_MEMORY_STEPS pool
//                                          steps (default 10000; each steps
//                                          all 64 envs), printed every 100
//                                          with where it is (file-backed,
//                                          batches, malloc, the rest: mostly
//                                          tbbmalloc's instruction blocks);
//                                          fails over 2 GB or when it grows
//                                          by more than high-water explains
//                                          (see kMaxGrowthMiB)
//
// fusion-v0's limits are raised to max_nodes 32768, max_edges 131072,
// max_alternatives 2048 and max_choices 16 (fusion offers up to 11
// producers at one node) so that every corpus module but one fits all
// episode long: gpt2_tiny_train_4x128 starts at 4619 nodes and grows by
// about 5000 nodes per step of random fusions, past 32768 around step 6.
// A reset or step error (a graph over these limits) is counted in `errors`.
// `load1` is the 1-minute load average when the benchmark ended: the
// figures are only comparable on an idle machine.
//
// Switches: the first two for BM_PoolSteps, printing to stderr; the third
// for every benchmark here:
//   HLOGYM_BENCH_OBS_DIGEST=1   hashes every row's whole observation arrays
//       and step results after every pool step and prints the digest: a
//       change to how rows are written must leave it as it was (this reads
//       every padded row, so leave it off for speed figures)
//   HLOGYM_BENCH_PER_MODULE=1   prints, per corpus module, its share of the
//       mix's env steps and their mean CPU time (the scheduler's per-env
//       timing, on the thread that ran it: the env step plus the row write;
//       autoreset steps apart), which is what the mix's mean step cost is
//       made of (cheap: a few adds per env step)
//   HLOGYM_BENCH_NO_CANDIDATE_BODIES=1   observations without candidates'
//       fused computations (observe_candidate_bodies: false). The episodes
//       are the same, but the limits apply to the smaller graph, so
//       gpt2_tiny_train_4x128 keeps stepping where it would stop: compare
//       per module (HLOGYM_BENCH_PER_MODULE=1), not the mix's totals
//
//   build/bench/hlogym_env_pool_bench --benchmark_filter='BM_PoolSteps|BM_StepLatency'
//   HLOGYM_BENCH_MEMORY_STEPS=1000 build/bench/hlogym_env_pool_bench --benchmark_filter=BM_PoolMemory
//   PYTHONPATH=python .venv/bin/python bench/env_pool_python_loop.py   (the Python comparison)
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "bench/bench_data.h"
#include "bench/env_bench_setup.h"
#include "benchmark/benchmark.h"
#include "envs/env_config.h"
#include "envs/env_pool.h"
#include "oneapi/tbb/scalable_allocator.h"

namespace hlogym {
namespace {

struct Corpus {
  EnvSpec spec;
  std::shared_ptr<BenchmarkSet> set;
};

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const std::string root = bench::SourceDir().string();
    EnvConfig config = LoadEnvConfig(root + "/configs/fusion-v0.yaml").value();
    std::vector<std::string> files;
    for (const auto& path : bench::HloPaths("data/corpus/hlo")) files.push_back(path.string());
    c->set = BenchmarkSet::Load(files, config.pre_passes, MakeRuntimeSource("cost").value())
                 .value();
    for (int64_t b = 0; b < c->set->size(); ++b) (void)c->set->Prepared(b).value();
    c->spec = bench::WideLimitsSpec(config);
    if (EnvFlag("HLOGYM_BENCH_NO_CANDIDATE_BODIES")) {
      c->spec.node_scope = NodeScope::kWithoutCandidateBodies;
    }
    return c;
  }();
  return *corpus;
}

// Resident set size in MiB (VmRSS of /proc/self/status).
double ResidentMiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1;
}

// Bytes malloc hands out from its heaps, every thread's arena (modules,
// vectors), and in mmap'd chunks (the batch buffers, allocated once). A leak
// grows the first; the batch buffers' resident part is what rows use now and
// recently (Batch::ReleaseUnused hands back what a larger graph left).
// Instruction blocks come from tbbmalloc and its caches and are not in
// either.
double HeapInUseMiB() { return static_cast<double>(mallinfo2().uordblks) / (1 << 20); }
double MmappedMiB() { return static_cast<double>(mallinfo2().hblkhd) / (1 << 20); }
// What malloc's heaps hold from the OS beyond what is in use: freed chunks
// it keeps (every arena). Growth here with a flat heap in use is
// fragmentation, not a leak.
double HeapHeldFreeMiB() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.arena - m.uordblks) / (1 << 20);
}

// Resident MiB of a batch's arrays (mincore over their whole pages).
double BatchResidentMiB(const Batch& batch) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  int64_t pages = 0;
  std::vector<unsigned char> in;
  for (const BatchArray& a : batch.arrays()) {
    const uintptr_t lo = (reinterpret_cast<uintptr_t>(a.data.get()) + page - 1) & ~(page - 1);
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(a.data.get()) + a.bytes()) & ~(page - 1);
    if (hi <= lo) continue;
    in.assign((hi - lo) / page, 0);
    if (mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()) != 0) continue;
    for (unsigned char c : in) pages += c & 1;
  }
  return static_cast<double>(pages * page) / (1 << 20);
}

// A uniformly random legal choice for every offered alternative.
void RandomActions(const Batch& batch, int64_t width, std::mt19937_64& rng,
                   std::vector<int64_t>& actions) {
  actions.assign(batch.size() * width, 0);
  const BatchArray& counts = batch.arrays()[kAltNumChoicesField];
  for (int64_t e = 0; e < batch.size(); ++e) {
    const int32_t* k = counts.row<int32_t>(e);
    for (int64_t s = 0; s < batch.num_alternatives(e); ++s) {
      actions[e * width + s] = static_cast<int64_t>(rng() % static_cast<uint64_t>(k[s]));
    }
  }
}

int64_t CountErrors(const Batch& batch) {
  int64_t n = 0;
  for (const std::string& e : batch.errors()) n += !e.empty();
  return n;
}

// A 64-bit FNV-1a style hash over 8-byte words (rows are 8-byte multiples
// but for the bool arrays; a tail is hashed byte by byte). Not absl::Hash:
// its seed changes from run to run.
uint64_t HashBytes(uint64_t h, const uint8_t* p, int64_t n) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * kPrime;
  return h;
}

// Every array's row of every env, in env order (HLOGYM_BENCH_OBS_DIGEST).
uint64_t HashBatch(uint64_t h, const Batch& batch) {
  for (int64_t e = 0; e < batch.size(); ++e) {
    for (const BatchArray& a : batch.arrays()) {
      const int64_t per_row = a.bytes() / a.shape[0];
      h = HashBytes(h, a.data.get() + e * per_row, per_row);
    }
  }
  return h;
}

// Per module: env steps taken on it in the mix and their seconds
// (HLOGYM_BENCH_PER_MODULE).
struct ModuleMix {
  std::vector<int64_t> steps;
  std::vector<double> seconds;  // CPU seconds (the env's thread)
  int64_t resets = 0;
  double reset_seconds = 0;

  explicit ModuleMix(int64_t modules) : steps(modules), seconds(modules) {}

  // `before` holds the rows the envs stepped from: an env whose row there
  // ended its episode reset this step.
  void Add(const Batch& before, const StepSchedule& schedule) {
    for (int64_t e = 0; e < before.size(); ++e) {
      const int32_t b = before.benchmark(e);
      if (before.terminated(e) || before.truncated(e) || b < 0) {
        ++resets;
        reset_seconds += schedule.last_cpu_seconds(e);
        continue;
      }
      ++steps[b];
      seconds[b] += schedule.last_cpu_seconds(e);
    }
  }

  void Print(const char* what, const BenchmarkSet& set) const {
    int64_t total = resets;
    double total_s = reset_seconds;
    for (size_t b = 0; b < steps.size(); ++b) {
      total += steps[b];
      total_s += seconds[b];
    }
    std::fprintf(stderr, "%s: per module (%lld env steps, mean %.3f ms CPU)\n", what,
                 static_cast<long long>(total), total > 0 ? 1e3 * total_s / total : 0.0);
    std::fprintf(stderr, "  %-40s %7s %7s %9s %8s\n", "module", "steps", "share", "cpu_ms",
                 "cpu%");
    auto row = [&](const std::string& name, int64_t n, double s) {
      std::fprintf(stderr, "  %-40s %7lld %6.1f%% %9.3f %7.1f%%\n", name.c_str(),
                   static_cast<long long>(n), 100.0 * n / std::max<int64_t>(total, 1),
                   n > 0 ? 1e3 * s / n : 0.0, 100.0 * s / std::max(total_s, 1e-12));
    };
    for (size_t b = 0; b < steps.size(); ++b) {
      row(set.name(static_cast<int64_t>(b)), steps[b], seconds[b]);
    }
    row("(autoreset steps)", resets, reset_seconds);
  }
};

// CPU seconds of the whole process (every thread).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Every configuration takes the same number of environment steps from the
// same seeds, so runs compare; steps/cpu_s counts every thread's CPU time
// and is the figure that survives a loaded machine best.
constexpr int64_t kPoolEnvSteps = 2048;

void BM_PoolSteps(benchmark::State& state, int64_t num_envs, int threads) {
  const Corpus& corpus = GetCorpus();
  auto pool = EnvPool::Create(corpus.spec, corpus.set, {num_envs, 0, threads, 0}).value();
  const int64_t width = corpus.spec.limits.max_alternatives;
  std::shared_ptr<Batch> batch = pool->Reset(0, {}).value();
  std::mt19937_64 rng(1);
  std::vector<int64_t> actions;
  int64_t errors = 0;
  double env_s = 0, busiest_s = 0, two_thread_s = 0;
  std::vector<double> thread_s(threads);
  const bool digest = EnvFlag("HLOGYM_BENCH_OBS_DIGEST");
  uint64_t hash = digest ? HashBatch(0xcbf29ce484222325ull, *batch) : 0;
  ModuleMix mix(EnvFlag("HLOGYM_BENCH_PER_MODULE") ? corpus.set->size() : 0);
  const double cpu_start = ProcessCpuSeconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    RandomActions(*batch, width, rng, actions);
    std::shared_ptr<Batch> before = std::move(batch);
    batch = pool->Step(actions).value();
    errors += CountErrors(*batch);
    const StepSchedule& schedule = pool->schedule();
    if (!mix.steps.empty()) mix.Add(*before, schedule);
    before.reset();
    if (digest) hash = HashBatch(hash, *batch);
    double sum = 0, longest = 0;
    std::fill(thread_s.begin(), thread_s.end(), 0.0);
    for (int64_t e = 0; e < num_envs; ++e) {
      sum += schedule.last_seconds(e);
      longest = std::max(longest, schedule.last_seconds(e));
      thread_s[schedule.home(e)] += schedule.last_seconds(e);
    }
    env_s += sum;
    busiest_s += *std::max_element(thread_s.begin(), thread_s.end());
    two_thread_s += std::max(sum / 2, longest);
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double steps = static_cast<double>(state.iterations() * num_envs);
  state.counters["steps/s"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
  state.counters["steps/s/thread"] =
      benchmark::Counter(steps / threads, benchmark::Counter::kIsRate);
  state.counters["steps/cpu_s"] = steps / cpu;
  state.counters["cpu_util"] = cpu / wall;
  state.counters["balance"] = env_s / (threads * busiest_s);
  state.counters["x2_bound"] = env_s / two_thread_s;
  state.counters["errors"] = static_cast<double>(errors);
  state.counters["load1"] = bench::LoadAverage();
  const std::string name = "BM_PoolSteps/envs:" + std::to_string(num_envs) +
                           "/threads:" + std::to_string(threads);
  if (digest) {
    std::fprintf(stderr, "%s: observation digest %016llx\n", name.c_str(),
                 static_cast<unsigned long long>(hash));
  }
  if (!mix.steps.empty()) mix.Print(name.c_str(), *corpus.set);
}

void BM_PoolAsync(benchmark::State& state, int64_t num_envs, int64_t batch_size, int threads) {
  const Corpus& corpus = GetCorpus();
  auto pool =
      EnvPool::Create(corpus.spec, corpus.set, {num_envs, batch_size, threads, 0}).value();
  const int64_t width = corpus.spec.limits.max_alternatives;
  if (absl::Status s = pool->AsyncReset(); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  std::mt19937_64 rng(1);
  std::vector<int64_t> actions;
  std::vector<int32_t> ids(batch_size);
  int64_t errors = 0;
  const double cpu_start = ProcessCpuSeconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::shared_ptr<Batch> batch = pool->Recv().value();
    errors += CountErrors(*batch);
    RandomActions(*batch, width, rng, actions);
    for (int64_t r = 0; r < batch_size; ++r) ids[r] = batch->env_id(r);
    batch.reset();  // the buffer can be reused by the next batches
    if (absl::Status s = pool->Send(actions, ids); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double steps = static_cast<double>(state.iterations() * batch_size);
  state.counters["steps/s"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
  state.counters["steps/cpu_s"] = steps / cpu;
  state.counters["cpu_util"] = cpu / wall;
  state.counters["errors"] = static_cast<double>(errors);
  state.counters["load1"] = bench::LoadAverage();
  // The envs still in flight finish before the pool goes (its destructor
  // waits); their time is not counted.
}

struct Latency {
  std::vector<double> step_s;   // Step + observation write, per step
  std::vector<double> reset_s;  // Reset + observation write, per episode
  int64_t errors = 0;
};

// One environment on benchmark `b` for at least `min_steps` steps and
// `min_seconds`, resetting (timed apart) when an episode ends.
Latency MeasureLatency(int64_t b, int64_t min_steps, double min_seconds) {
  const Corpus& corpus = GetCorpus();
  using Clock = std::chrono::steady_clock;
  auto env = HloRewriteEnv::Create(corpus.spec, corpus.set, 0).value();
  Batch row(1, corpus.spec.limits);
  std::mt19937_64 rng(b);
  Latency out;
  const Clock::time_point start = Clock::now();
  bool need_reset = true;
  while (static_cast<int64_t>(out.step_s.size()) < min_steps ||
         std::chrono::duration<double>(Clock::now() - start).count() < min_seconds) {
    Clock::time_point t0 = Clock::now();
    if (need_reset) {
      absl::Status s = env->Reset(std::nullopt, b);
      if (!s.ok() || !env->Observe(row.Observation(0), row.extent(0)).ok()) {
        ++out.errors;
        break;
      }
      out.reset_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      need_reset = env->info().terminated;
      if (need_reset) break;  // nothing to decide on this module
      continue;
    }
    std::vector<int64_t> choices;
    for (int32_t k : env->choice_counts()) choices.push_back(static_cast<int64_t>(rng() % k));
    t0 = Clock::now();
    absl::StatusOr<double> reward = env->Step(choices);
    absl::StatusOr<GraphCounts> counts = env->Observe(row.Observation(0), row.extent(0));
    out.step_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!reward.ok() || !counts.ok()) {
      ++out.errors;
      need_reset = true;
      continue;
    }
    need_reset = env->info().terminated || env->info().truncated;
  }
  return out;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

void BM_StepLatency(benchmark::State& state, int64_t b) {
  for (auto _ : state) {
    Latency latency = MeasureLatency(b, 200, 0.5);
    double total = 0;
    for (double t : latency.step_s) total += t;
    state.SetIterationTime(std::max(total, 1e-9));
    state.counters["steps"] = static_cast<double>(latency.step_s.size());
    state.counters["median_ms"] = 1e3 * Percentile(latency.step_s, 0.5);
    state.counters["p99_ms"] = 1e3 * Percentile(latency.step_s, 0.99);
    state.counters["max_ms"] = 1e3 * Percentile(latency.step_s, 1.0);
    state.counters["reset_ms"] = 1e3 * Percentile(latency.reset_s, 0.5);
    state.counters["errors"] = static_cast<double>(latency.errors);
    state.counters["load1"] = bench::LoadAverage();
  }
}

void BM_StepLatencyCorpus(benchmark::State& state) {
  const Corpus& corpus = GetCorpus();
  for (auto _ : state) {
    std::vector<double> all;
    double worst_median = 0;
    std::string worst;
    int64_t errors = 0;
    for (int64_t b = 0; b < corpus.set->size(); ++b) {
      Latency latency = MeasureLatency(b, 100, 0.0);
      errors += latency.errors;
      all.insert(all.end(), latency.step_s.begin(), latency.step_s.end());
      const double median = Percentile(latency.step_s, 0.5);
      if (median > worst_median) {
        worst_median = median;
        worst = corpus.set->name(b);
      }
    }
    double total = 0;
    for (double t : all) total += t;
    state.SetIterationTime(std::max(total, 1e-9));
    state.counters["median_ms"] = 1e3 * Percentile(all, 0.5);
    state.counters["p99_ms"] = 1e3 * Percentile(all, 0.99);
    state.counters["worst_module_median_ms"] = 1e3 * worst_median;
    state.counters["errors"] = static_cast<double>(errors);
    state.counters["load1"] = bench::LoadAverage();
    state.SetLabel("slowest: " + worst);
  }
}
BENCHMARK(BM_StepLatencyCorpus)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// Where the resident memory is, from /proc/self/smaps_rollup (MiB).
struct Resident {
  double rss = 0;
  double anon = 0;  // anonymous pages: heaps, batches, instruction blocks
  double huge = 0;  // of which transparent huge pages
};

Resident ReadResident() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  Resident r;
  auto field = [&](const char* key, double& out) {
    if (line.rfind(key, 0) == 0) {
      out = std::strtod(line.c_str() + std::strlen(key), nullptr) / 1024.0;
    }
  };
  while (std::getline(in, line)) {
    field("Rss:", r.rss);
    field("Anonymous:", r.anon);
    field("AnonHugePages:", r.huge);
  }
  return r;
}

// Hands back what the allocators hold free: tbbmalloc's caches and empty
// regions (instruction blocks) and glibc's free chunks at the top and inside
// its heaps. Memory that comes back here was allocator high-water, not a leak.
void ReleaseAllocatorCaches() {
  scalable_allocation_command(TBBMALLOC_CLEAN_ALL_BUFFERS, nullptr);
  malloc_trim(0);
}

// Graph nodes and edges the rows of a batch hold (what the envs' modules
// are now, roughly: the module an env holds is the graph its row shows).
std::pair<int64_t, int64_t> BatchGraphSize(const Batch& batch) {
  int64_t nodes = 0, edges = 0;
  for (int64_t e = 0; e < batch.size(); ++e) {
    nodes += batch.extent(e)->nodes;
    edges += batch.extent(e)->edges;
  }
  return {nodes, edges};
}

// Fails (SkipWithError) when the pool's memory is over the 2 GB, or
// when it grows. What may grow, and does, is high-water: tbbmalloc keeps the
// regions that the most instructions ever live at once took (the 64 envs'
// modules together, with a step's dry-pass candidates and the module it
// replaces), so the process grows by ~1 KiB for each node by which the sum
// of the rows' graphs sets a new record, and not at all in between; the two
// rotating batches' resident rows move with the graphs they hold (bounded by
// Batch::ReleaseUnused). So: after the allocators hand back what they hold
// free (ReleaseAllocatorCaches), the resident set at the end may exceed the
// same measure at a tenth of the run by at most kMaxGrowthMiB, plus what the
// batches' resident rows grew, plus kBytesPerNode for each node by which the
// record sum of graph nodes rose. A leak or an unbounded cache grows
// without new records and fails.
constexpr double kMaxRssMiB = 2048;
constexpr double kMaxGrowthMiB = 32;
constexpr double kBytesPerNode = 1024;

void BM_PoolMemory(benchmark::State& state) {
  const Corpus& corpus = GetCorpus();
  const char* env_steps = std::getenv("HLOGYM_BENCH_MEMORY_STEPS");
  const int64_t total_steps = env_steps != nullptr ? std::atoll(env_steps) : 10000;
  const char* env_threads = std::getenv("HLOGYM_BENCH_MEMORY_THREADS");
  const int threads = env_threads != nullptr ? std::atoi(env_threads) : 2;
  const int64_t width = corpus.spec.limits.max_alternatives;
  const int64_t check_step = std::max<int64_t>(1, total_steps / 10);
  for (auto _ : state) {
    auto pool = EnvPool::Create(corpus.spec, corpus.set, {64, 0, threads, 0}).value();
    std::shared_ptr<Batch> batch = pool->Reset(0, {}).value();
    std::weak_ptr<Batch> previous;  // the other batch of the pair that rotates
    const double rss_reset = ResidentMiB();
    double rss_100 = 0, rss_1k = 0, rss_peak = rss_reset;
    double released_check = 0, batches_check = 0;
    int64_t record_check = 0;
    int64_t max_nodes = 0;
    std::mt19937_64 rng(2);
    std::vector<int64_t> actions;
    int64_t errors = 0;
    std::fprintf(stderr, "BM_PoolMemory: 64 envs, %d threads, after reset: VmRSS %.1f MiB\n",
                 threads, rss_reset);
    auto batches_resident = [&] {
      double mib = BatchResidentMiB(*batch);
      if (std::shared_ptr<Batch> other = previous.lock(); other != nullptr && other != batch) {
        mib += BatchResidentMiB(*other);
      }
      return mib;
    };
    for (int64_t step = 1; step <= total_steps; ++step) {
      RandomActions(*batch, width, rng, actions);
      previous = batch;
      batch = pool->Step(actions).value();
      errors += CountErrors(*batch);
      const double rss = ResidentMiB();
      rss_peak = std::max(rss_peak, rss);
      const auto [nodes, edges] = BatchGraphSize(*batch);
      max_nodes = std::max(max_nodes, nodes);
      if (step == 100) rss_100 = rss;
      if (step == 1000) rss_1k = rss;
      if (step % 100 == 0 || step == total_steps) {
        const Resident r = ReadResident();
        std::fprintf(stderr,
                     "BM_PoolMemory: pool step %lld (%lld env steps): VmRSS %.1f MiB (anon "
                     "%.1f, huge %.1f), peak %.1f MiB, malloc heap in use %.1f MiB, held free "
                     "%.1f MiB, mmap'd %.1f MiB, both batches resident %.1f MiB, graphs %lld "
                     "nodes %lld edges (most so far %lld nodes), load %.2f\n",
                     static_cast<long long>(step), static_cast<long long>(step * 64), rss,
                     r.anon, r.huge, rss_peak, HeapInUseMiB(), HeapHeldFreeMiB(), MmappedMiB(),
                     batches_resident(), static_cast<long long>(nodes),
                     static_cast<long long>(edges), static_cast<long long>(max_nodes),
                     bench::LoadAverage());
      }
      if (step == check_step || step == total_steps) {
        ReleaseAllocatorCaches();
        const double released = ResidentMiB();
        const double both = batches_resident();
        std::fprintf(stderr,
                     "BM_PoolMemory: pool step %lld: allocator caches released: VmRSS %.1f -> "
                     "%.1f MiB (heap in use %.1f, held free %.1f, both batches resident %.1f, "
                     "graphs %lld nodes, most so far %lld)\n",
                     static_cast<long long>(step), rss, released, HeapInUseMiB(),
                     HeapHeldFreeMiB(), both, static_cast<long long>(nodes),
                     static_cast<long long>(max_nodes));
        if (step == check_step) {
          released_check = released;
          batches_check = both;
          record_check = max_nodes;
        } else {
          state.counters["rss_released_check_MiB"] = released_check;
          state.counters["rss_released_end_MiB"] = released;
          const double allowed =
              kMaxGrowthMiB + std::max(0.0, both - batches_check) +
              static_cast<double>(max_nodes - record_check) * kBytesPerNode / (1 << 20);
          state.counters["growth_MiB"] = released - released_check;
          state.counters["growth_allowed_MiB"] = allowed;
          if (released - released_check > allowed) {
            const std::string why =
                "memory grows: " + std::to_string(released - released_check) +
                " MiB from pool step " + std::to_string(check_step) + " to " +
                std::to_string(total_steps) + " with the allocators' caches released (allowed " +
                std::to_string(allowed) + ")";
            std::fprintf(stderr, "BM_PoolMemory: FAILED: %s\n", why.c_str());
            state.SkipWithError(why.c_str());
          }
        }
      }
    }
    state.counters["pool_steps"] = static_cast<double>(total_steps);
    state.counters["rss_after_reset_MiB"] = rss_reset;
    state.counters["rss_at_100_MiB"] = rss_100;
    state.counters["rss_at_1k_MiB"] = rss_1k;
    state.counters["rss_at_end_MiB"] = ResidentMiB();
    state.counters["rss_peak_MiB"] = rss_peak;
    state.counters["heap_in_use_MiB"] = HeapInUseMiB();
    state.counters["heap_held_free_MiB"] = HeapHeldFreeMiB();
    state.counters["batch_resident_MiB"] = BatchResidentMiB(*batch);
    state.counters["mmapped_MiB"] = MmappedMiB();
    state.counters["errors"] = static_cast<double>(errors);
    state.counters["load1"] = bench::LoadAverage();
    if (rss_peak > kMaxRssMiB) {
      const std::string why = "peak VmRSS " + std::to_string(rss_peak) + " MiB is over " +
                              std::to_string(kMaxRssMiB) + " MiB";
      std::fprintf(stderr, "BM_PoolMemory: FAILED: %s\n", why.c_str());
      state.SkipWithError(why.c_str());
    }
  }
}
BENCHMARK(BM_PoolMemory)->Iterations(1)->Unit(benchmark::kSecond);

// The pool configurations (fixed iterations: kPoolEnvSteps env steps
// each), then one latency benchmark per corpus module, named after it.
const bool kRegistered = [] {
  for (int threads : {1, 2}) {
    for (int64_t envs : {1, 4, 16, 64}) {
      const std::string name = "BM_PoolSteps/envs:" + std::to_string(envs) +
                               "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_PoolSteps, envs, threads)
          ->Iterations(kPoolEnvSteps / envs)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (int threads : {1, 2}) {
    for (int64_t envs : {16, 64}) {
      const int64_t batch = envs / 2;
      const std::string name = "BM_PoolAsync/envs:" + std::to_string(envs) +
                               "/batch:" + std::to_string(batch) +
                               "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_PoolAsync, envs, batch, threads)
          ->Iterations(kPoolEnvSteps / batch)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  const std::vector<std::filesystem::path> paths = bench::HloPaths("data/corpus/hlo");
  for (size_t b = 0; b < paths.size(); ++b) {
    benchmark::RegisterBenchmark(("BM_StepLatency/" + paths[b].stem().string()).c_str(),
                                 BM_StepLatency, static_cast<int64_t>(b))
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace hlogym

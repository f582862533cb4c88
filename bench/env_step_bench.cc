// One environment step, single-threaded, as issue #5 times it: apply the
// decisions, prune, run the post-passes, measure the cost-model runtime and
// run the next dry pass (HloRewriteEnv::Step alone; no observation write).
// fusion-v0 with the limits of env_pool_bench, random legal choices from a
// fixed seed, episodes restarted (untimed) when they end or fail.
//
//   BM_EnvStep/median:<module>   the corpus module of median instruction count
//   BM_EnvStep/gpt2_tiny_train_4x128
//   BM_EnvStep/resnet_block_train_16x32x32x64, .../transformer_block_train_8x256x512:
//     with gpt2, the three that take most of env_pool_bench's mix
//
// Counters: median_ms, p90_ms, max_ms over the timed steps (wall clock),
// cpu_median_ms (the step thread's CPU time: the figure to compare on a
// loaded machine, where wall time includes preemption), errors (steps
// that failed, e.g. a graph past the limits), load1. `digest` on stderr
// hashes every step's fingerprint and reward: two builds that print the same
// digest took the same trajectories.
//
//   build/bench/hlogym_env_step_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "bench/env_bench_setup.h"
#include "benchmark/benchmark.h"
#include "envs/env_config.h"
#include "envs/env_pool.h"

namespace hlogym {
namespace {

struct Corpus {
  EnvSpec spec;
  std::shared_ptr<BenchmarkSet> set;
  int64_t median = 0;  // benchmark index of the median-size module
  // The large modules timed on their own: (name, benchmark index, steps).
  std::vector<std::tuple<std::string, int64_t, int64_t>> large;
};

// gpt2 is #5's target; resnet and the transformer's training step take most
// of the pool mix's time after it (docs/benchmarks.md, "Pool").
constexpr std::pair<const char*, int64_t> kLargeModules[] = {
    {"gpt2_tiny_train_4x128", 40},
    {"resnet_block_train_16x32x32x64", 100},
    {"transformer_block_train_8x256x512", 100},
};

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    const std::string root = bench::SourceDir().string();
    EnvConfig config = LoadEnvConfig(root + "/configs/fusion-v0.yaml").value();
    std::vector<std::string> files;
    for (const auto& path : bench::HloPaths("data/corpus/hlo")) files.push_back(path.string());
    c->set = BenchmarkSet::Load(files, config.pre_passes, MakeRuntimeSource("cost").value())
                 .value();
    std::vector<std::pair<int64_t, int64_t>> sizes;  // (instructions, index)
    for (int64_t b = 0; b < c->set->size(); ++b) {
      sizes.emplace_back(c->set->Prepared(b).value()->module->instruction_count(), b);
      for (const auto& [name, steps] : kLargeModules) {
        if (c->set->name(b).find(name) != std::string::npos) c->large.emplace_back(name, b, steps);
      }
    }
    std::sort(sizes.begin(), sizes.end());
    c->median = sizes[(sizes.size() - 1) / 2].second;
    c->spec = bench::WideLimitsSpec(config);
    return c;
  }();
  return *corpus;
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

void BM_EnvStep(benchmark::State& state, int64_t b, int64_t min_steps) {
  const Corpus& corpus = GetCorpus();
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    auto env = HloRewriteEnv::Create(corpus.spec, corpus.set, 0).value();
    std::mt19937_64 rng(7);
    std::vector<double> step_s, step_cpu_s;
    int64_t errors = 0;
    std::string first_error;
    uint64_t digest = 0;
    bool need_reset = true;
    while (static_cast<int64_t>(step_s.size()) < min_steps) {
      if (need_reset) {
        if (!env->Reset(rng(), b).ok() || env->info().terminated) {
          ++errors;
          break;
        }
        need_reset = false;
        continue;
      }
      std::vector<int64_t> choices;
      for (int32_t k : env->choice_counts()) {
        choices.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(k)));
      }
      const double cpu0 = ThreadCpuSeconds();
      const Clock::time_point t0 = Clock::now();
      absl::StatusOr<double> reward = env->Step(choices);
      step_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      step_cpu_s.push_back(ThreadCpuSeconds() - cpu0);
      if (!reward.ok()) {
        if (errors++ == 0) first_error = std::string(reward.status().message());
        digest = Mix(digest, 1);
        need_reset = true;
        continue;
      }
      uint64_t bits = 0;
      std::memcpy(&bits, &*reward, sizeof(bits));
      digest = Mix(Mix(digest, env->info().fingerprint), bits);
      need_reset = env->info().terminated || env->info().truncated;
    }
    double total = 0;
    for (double t : step_s) total += t;
    state.SetIterationTime(std::max(total, 1e-9));
    state.counters["steps"] = static_cast<double>(step_s.size());
    state.counters["median_ms"] = 1e3 * Percentile(step_s, 0.5);
    state.counters["p90_ms"] = 1e3 * Percentile(step_s, 0.9);
    state.counters["max_ms"] = 1e3 * Percentile(step_s, 1.0);
    state.counters["cpu_median_ms"] = 1e3 * Percentile(step_cpu_s, 0.5);
    state.counters["errors"] = static_cast<double>(errors);
    state.counters["load1"] = bench::LoadAverage();
    std::fprintf(stderr, "BM_EnvStep %s: %lld instructions at reset, digest %016llx\n",
                 corpus.set->name(b).c_str(),
                 static_cast<long long>(
                     corpus.set->Prepared(b).value()->module->instruction_count()),
                 static_cast<unsigned long long>(digest));
    if (!first_error.empty()) {
      std::fprintf(stderr, "BM_EnvStep %s: first failed step: %s\n",
                   corpus.set->name(b).c_str(), first_error.substr(0, 300).c_str());
    }
  }
}

const bool kRegistered = [] {
  const Corpus& corpus = GetCorpus();
  benchmark::RegisterBenchmark(("BM_EnvStep/median:" + corpus.set->name(corpus.median)).c_str(),
                               BM_EnvStep, corpus.median, int64_t{400})
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (const auto& [name, b, steps] : corpus.large) {
    benchmark::RegisterBenchmark(("BM_EnvStep/" + name).c_str(), BM_EnvStep, b, steps)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace hlogym

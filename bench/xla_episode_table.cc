// Where an xla episode's time goes on xla-v0: the agent's Act against the
// env's Step (apply, post-passes, runtime, next dry pass), split by the dry
// pass offered, with each episode's end compared to the default pipeline.
// By default the seven jax.random samplers the main job leaves out (over
// 300 instructions), with xla-v0's limits (steps, nodes, edges,
// alternatives, choices) raised `--scale` times (default 4).
//
//   build/bench/hlogym_xla_episode_table [--scale N] [--dump DIR] [--trace] [file.hlo ...]
//
// --dump DIR writes, for each module whose episode ends elsewhere than the
// default pipeline, both modules' text (DIR/NAME.episode.hlo and
// DIR/NAME.default.hlo), to find where they part. --trace prints each step's
// dry pass, how many of its alternatives the agent rewrote (rounds of a
// pass show as runs of steps) and the fingerprint of the module it was
// offered on (to compare with the default pipeline's, pass by pass).
//
// Times are wall clock and the thread's CPU time (the figure to compare on a
// loaded machine); load1 is printed with them.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agents/agent.h"
#include "bench/env_bench_setup.h"
#include "core/base/thread_cpu_time.h"
#include "core/ir/fingerprint.h"
#include "core/passes/default_pipeline.h"
#include "core/text/printer.h"
#include "envs/benchmark_set.h"
#include "envs/env_config.h"
#include "envs/hlo_rewrite_env.h"

namespace hlogym {
namespace {

struct Times {
  int64_t steps = 0;
  double act_s = 0, act_cpu_s = 0, step_s = 0, step_cpu_s = 0;
};

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

void PrintStep(const EnvInfo& info, const std::vector<int64_t>& choices) {
  int64_t taken = 0;
  for (int64_t c : choices) taken += c != 0;
  std::printf("  step %4lld %-30s rewrote %4lld of %4zu  on %016llx\n",
              static_cast<long long>(info.step), info.dry_pass.c_str(),
              static_cast<long long>(taken), choices.size(),
              static_cast<unsigned long long>(info.fingerprint));
}

int Run(int argc, char** argv) {
  int64_t scale = 4;
  std::string dump_dir;
  bool trace = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--scale" && i + 1 < argc) {
      scale = std::atoll(argv[++i]);
    } else if (arg == "--trace") {
      trace = true;
    } else if (arg == "--dump" && i + 1 < argc) {
      dump_dir = argv[++i];
    } else {
      files.push_back(arg);
    }
  }
  if (scale < 1) {
    std::fprintf(stderr, "--scale must be at least 1\n");
    return 2;
  }
  const std::string root = HLOGYM_SOURCE_DIR;
  if (files.empty()) {
    for (const char* name :
         {"beta", "dirichlet", "gamma", "poisson", "permutation", "split_fold", "choice"}) {
      files.push_back(root + "/data/dataset/hlo/random_" + name + ".hlo");
    }
  }
  absl::StatusOr<EnvConfig> config = LoadEnvConfig(root + "/configs/xla-v0.yaml");
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  EnvSpec spec = bench::WideLimitsSpec(*config);
  spec.max_steps = config->max_steps * scale;
  spec.limits = {config->max_nodes * scale, config->max_edges * scale,
                 config->max_alternatives * scale, config->max_choices * scale};
  std::printf("xla-v0, limits x%lld, load1 %.1f\n", static_cast<long long>(scale),
              bench::LoadAverage());
  std::printf("%-28s %6s %5s %8s %8s %8s %8s %6s  %s\n", "module", "steps", "end", "act_s",
              "act_cpu", "step_s", "step_cpu", "act%", "default pipeline's module");
  using Clock = std::chrono::steady_clock;
  for (const std::string& file : files) {
    auto set = BenchmarkSet::Load({file}, config->pre_passes, MakeRuntimeSource("cost").value());
    if (!set.ok()) {
      std::printf("%s: %s\n", file.c_str(), std::string(set.status().message()).c_str());
      continue;
    }
    auto env = HloRewriteEnv::Create(spec, *set, 0);
    auto agent = MakeAgent("xla", 0);
    if (!env.ok() || !agent.ok()) return 1;
    std::map<std::string, Times> by_pass;
    Times all;
    std::string end = "term";
    absl::Status status = (*env)->Reset(0, 0);
    while (status.ok() && !(*env)->info().terminated && !(*env)->info().truncated) {
      Times& t = by_pass[(*env)->info().dry_pass];
      double cpu0 = ThreadCpuSeconds();
      Clock::time_point t0 = Clock::now();
      absl::StatusOr<std::vector<int64_t>> choices = (*agent)->Act(**env);
      const double act = std::chrono::duration<double>(Clock::now() - t0).count();
      const double act_cpu = ThreadCpuSeconds() - cpu0;
      if (!choices.ok()) {
        status = choices.status();
        break;
      }
      cpu0 = ThreadCpuSeconds();
      t0 = Clock::now();
      if (trace) PrintStep((*env)->info(), *choices);
      status = (*env)->Step(*choices).status();
      const double step = std::chrono::duration<double>(Clock::now() - t0).count();
      const double step_cpu = ThreadCpuSeconds() - cpu0;
      for (Times* x : {&t, &all}) {
        ++x->steps;
        x->act_s += act;
        x->act_cpu_s += act_cpu;
        x->step_s += step;
        x->step_cpu_s += step_cpu;
      }
    }
    if (!status.ok()) end = "stop";
    if ((*env)->info().truncated) end = "trunc";
    std::unique_ptr<Module> baseline = (*set)->source(0).Clone();
    std::string compare = "?";
    if (DefaultPipeline().Run(*baseline).ok()) {
      const double ratio =
          (*env)->info().current_runtime / (*set)->runtime().Runtime(*baseline).value_or(1);
      char buffer[64];
      std::snprintf(buffer, sizeof(buffer), "%s (runtime %.4fx)",
                    Fingerprint((*env)->module()) == Fingerprint(*baseline) ? "same" : "differs",
                    ratio);
      compare = buffer;
    }
    const std::string name = (*set)->name(0);
    if (!dump_dir.empty() && compare.rfind("differs", 0) == 0) {
      WriteText(dump_dir + "/" + name + ".episode.hlo", PrintModule((*env)->module()));
      WriteText(dump_dir + "/" + name + ".default.hlo", PrintModule(*baseline));
    }
    std::printf("%-28s %6lld %5s %8.2f %8.2f %8.2f %8.2f %5.1f%%  %s\n", name.c_str(),
                static_cast<long long>(all.steps), end.c_str(), all.act_s, all.act_cpu_s,
                all.step_s, all.step_cpu_s, 100 * all.act_cpu_s / (all.act_cpu_s + all.step_cpu_s),
                compare.c_str());
    for (const auto& [pass, t] : by_pass) {
      std::printf("  %-26s %6lld %5s %8.2f %8.2f %8.2f %8.2f\n", pass.c_str(),
                  static_cast<long long>(t.steps), "", t.act_s, t.act_cpu_s, t.step_s,
                  t.step_cpu_s);
    }
    if (!status.ok()) std::printf("  stopped: %s\n", std::string(status.message()).c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) { return hlogym::Run(argc, argv); }

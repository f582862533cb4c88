// How long an env config takes to read: parse + validate of the bundled
// fusion-v0.yaml from memory and from disk. Pools create many environments,
// so this should stay far below a millisecond.
#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "envs/env_config.h"

namespace {

const std::string kPath = std::string(HLOGYM_SOURCE_DIR) + "/configs/fusion-v0.yaml";

void BM_ParseEnvConfig(benchmark::State& state) {
  std::ifstream in(kPath);
  std::stringstream text;
  text << in.rdbuf();
  const std::string yaml = text.str();
  for (auto _ : state) {
    auto config = hlogym::ParseEnvConfig(yaml, kPath);
    if (!config.ok()) state.SkipWithError(std::string(config.status().message()).c_str());
    benchmark::DoNotOptimize(config);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(yaml.size()));
}
BENCHMARK(BM_ParseEnvConfig);

void BM_LoadEnvConfig(benchmark::State& state) {
  for (auto _ : state) {
    auto config = hlogym::LoadEnvConfig(kPath);
    if (!config.ok()) state.SkipWithError(std::string(config.status().message()).c_str());
    benchmark::DoNotOptimize(config);
  }
}
BENCHMARK(BM_LoadEnvConfig);

}  // namespace

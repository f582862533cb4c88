// The GPU backend against XLA on the H100: for every corpus module, our
// CUDA-event time for the default pipeline and for no fusion, beside XLA's
// pipelined times from data/corpus/xla_anchors.json, with ratios and
// geometric means; then the warm-cache time to compile and measure a module
// again, and device memory before and after all measurements.
//   build/bench/hlogym_gpu_backend_table [MODULE_SUBSTRING]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "tests/core/oracle_json.h"

#ifdef HLOGYM_HAVE_CUDA
#include "backend/gpu_runtime.h"
#endif

namespace hlogym {
namespace {

#ifdef HLOGYM_HAVE_CUDA

std::string ReadFile(const std::filesystem::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::vector<PipelineStage> NoFusionStages() {
  std::vector<PipelineStage> stages;
  for (const PipelineStage& s : DefaultPipelineStages()) {
    if (s.name != "fusion" && s.name != "horizontal") stages.push_back(s);
  }
  return stages;
}

int Main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  absl::StatusOr<std::unique_ptr<GpuRuntime>> runtime = GpuRuntime::Create();
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", std::string(runtime.status().message()).c_str());
    return 2;
  }
  const std::filesystem::path root(HLOGYM_SOURCE_DIR);
  const testing::Json anchors = testing::ReadJsonFile((root / "data/corpus/xla_anchors.json").string());
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(root / "data/corpus/hlo")) {
    if (e.path().extension() == ".hlo" && e.path().stem().string().find(filter) != std::string::npos) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  const absl::StatusOr<int64_t> memory_before = (*runtime)->gpu().UsedMemory();
  absl::StatusOr<Pipeline> no_fusion = BuildPipeline("no-fusion", NoFusionStages());
  if (!no_fusion.ok()) return 1;
  std::printf("device: %s (%d SMs)\n\n", (*runtime)->gpu().name().c_str(), (*runtime)->gpu().sm_count());
  std::printf("%-34s %10s %10s %7s %10s %10s %7s %6s %5s %9s\n", "module", "ours_us", "xla_us",
              "ratio", "ours_nof", "xla_nof", "ratio", "kern", "host", "warm_ms");
  double log_sum = 0, log_sum_nof = 0;
  int counted = 0, counted_nof = 0, over4 = 0, failed = 0;
  std::vector<double> warm_ms;
  for (const auto& path : files) {
    const std::string name = path.stem().string();
    const testing::Json& a = anchors["modules"][name];
    const double xla = a.has("xla_us_pipelined") ? a["xla_us_pipelined"].number : NAN;
    const double xla_nof = a.has("nofusion_us_pipelined") ? a["nofusion_us_pipelined"].number : NAN;
    // Parses, runs the pipeline, then compiles and measures; `seconds` is the
    // time of the last part alone (what a reward costs once the env has the
    // rewritten module).
    auto measure = [&](Pipeline& pipeline, GpuRuntimeReport& report, double* seconds = nullptr) -> std::string {
      absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(ReadFile(path));
      if (!m.ok()) return std::string(m.status().message());
      if (!pipeline.Run(**m).ok()) return "pipeline failed";
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<GpuRuntimeReport> r = (*runtime)->MeasureUncached(**m);
      if (seconds != nullptr) {
        *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (!r.ok()) return std::string(r.status().message());
      report = *r;
      return "";
    };
    Pipeline fused = DefaultPipeline();
    GpuRuntimeReport ours, ours_nof;
    const std::string error = measure(fused, ours);
    if (!error.empty()) {
      std::printf("%-34s FAILED: %s\n", name.c_str(), error.c_str());
      ++failed;
      continue;
    }
    // Again, warm: kernels and inputs come from the caches (the reward path
    // of a step).
    GpuRuntimeReport again;
    Pipeline fused_again = DefaultPipeline();
    double warm_seconds = 0;
    measure(fused_again, again, &warm_seconds);
    warm_ms.push_back(warm_seconds * 1e3);
    const std::string error_nof = measure(*no_fusion, ours_nof);
    const double us = ours.measurement.median_seconds * 1e6;
    const double us_nof = error_nof.empty() ? ours_nof.measurement.median_seconds * 1e6 : NAN;
    const double ratio = us / xla, ratio_nof = us_nof / xla_nof;
    if (std::isfinite(ratio)) {
      log_sum += std::log(ratio);
      ++counted;
      over4 += ratio > 4;
    }
    if (std::isfinite(ratio_nof)) {
      log_sum_nof += std::log(ratio_nof);
      ++counted_nof;
    }
    std::printf("%-34s %10.1f %10.1f %7.2f %10.1f %10.1f %7.2f %6lld %5lld %9.1f\n", name.c_str(), us,
                xla, ratio, us_nof, xla_nof, ratio_nof, static_cast<long long>(ours.stats.total_gpu_kernel_count),
                static_cast<long long>(ours.stats.total_host_op_count), warm_ms.back());
    if (ours.stats.total_host_op_count > 0) std::printf("    host: %s\n", ours.stats.first_host_op.c_str());
  }
  std::sort(warm_ms.begin(), warm_ms.end());
  std::printf("\ngeomean ours/XLA, default pipeline: %.3f over %d modules (%d over 4x, %d failed)\n",
              counted ? std::exp(log_sum / counted) : NAN, counted, over4, failed);
  std::printf("geomean ours/XLA, no fusion:        %.3f over %d modules\n",
              counted_nof ? std::exp(log_sum_nof / counted_nof) : NAN, counted_nof);
  if (!warm_ms.empty()) {
    std::printf("warm-cache compile + measure: median %.1f ms, max %.1f ms\n",
                warm_ms[warm_ms.size() / 2], warm_ms.back());
  }
  const absl::StatusOr<int64_t> memory_after = (*runtime)->gpu().UsedMemory();
  if (memory_before.ok() && memory_after.ok()) {
    std::printf("device memory in use: %lld bytes before, %lld after (kernel cache: %lld kernels)\n",
                static_cast<long long>(*memory_before), static_cast<long long>(*memory_after),
                static_cast<long long>((*runtime)->kernels().size()));
  }
  return failed == 0 ? 0 : 1;
}

#else

int Main(int, char**) {
  std::fprintf(stderr, "not supported: built without CUDA\n");
  return 2;
}

#endif

}  // namespace
}  // namespace hlogym

int main(int argc, char** argv) { return hlogym::Main(argc, argv); }

// Device memory over many measurements of different modules (issue #8: "after
// 1,000 measurements of different modules, device memory in use is back at
// its starting level"): the GPU runtime's memory in use before, every 100
// measurements, after the last, and once the kernel cache is emptied. The
// modules are an elementwise chain, a row reduction and a dot (cuBLAS) over
// shapes that differ in every module, so each one compiles new kernels.
//   build/bench/hlogym_gpu_memory_table [COUNT]   (default 1000)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/text/parser.h"

#ifdef HLOGYM_HAVE_CUDA
#include "backend/gpu_runtime.h"
#endif

namespace hlogym {
namespace {

#ifdef HLOGYM_HAVE_CUDA

// Module `k`: rows = 16 + k, so no two share a shape.
std::string ModuleText(int k) {
  const std::string rows = std::to_string(16 + k);
  const std::string x = "f32[" + rows + ",64]";
  return absl::StrCat(
      "HloModule different_", k, "\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n",
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = ", x, " parameter(0)\n",
      "  w = f32[64,32] parameter(1)\n  t = ", x, " tanh(x)\n  y = ", x, " multiply(t, x)\n",
      "  zero = f32[] constant(0)\n  r = f32[", rows, "] reduce(y, zero), dimensions={1}, to_apply=sum\n",
      "  d = f32[", rows, ",32] dot(y, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
      "  ROOT out = (f32[", rows, "], f32[", rows, ",32]) tuple(r, d)\n}\n");
}

int Main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 1000;
  absl::StatusOr<std::unique_ptr<GpuRuntime>> runtime = GpuRuntime::Create();
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", std::string(runtime.status().message()).c_str());
    return 2;
  }
  GpuRuntime& gpu = **runtime;
  auto used = [&]() -> long long {
    absl::StatusOr<int64_t> bytes = gpu.gpu().UsedMemory();
    return bytes.ok() ? static_cast<long long>(*bytes) : -1;
  };
  std::printf("device: %s; %d measurements of different modules\n", gpu.gpu().name().c_str(), count);
  const long long before = used();
  std::printf("%12s %16s %16s %10s\n", "measured", "bytes in use", "above start", "kernels");
  int failed = 0;
  // In batches of 100: their kernels compiled in parallel (Prepare), then
  // each module measured on its own, as the table's rows are.
  for (int first = 0; first < count; first += 100) {
    const int last = std::min(count, first + 100);
    std::vector<std::unique_ptr<Module>> modules(last - first);
    ParallelForEach(first, last, [&](int64_t k) {
      absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(ModuleText(static_cast<int>(k)));
      if (m.ok() && gpu.Prepare(**m).ok()) modules[k - first] = *std::move(m);
    });
    for (int k = first; k < last; ++k) {
      absl::StatusOr<GpuRuntimeReport> report =
          modules[k - first] != nullptr ? gpu.MeasureUncached(*modules[k - first])
                                        : absl::InternalError("did not parse or prepare");
      if (!report.ok() && failed++ < 3) {
        std::printf("module %d FAILED: %s\n", k, std::string(report.status().message()).c_str());
      }
    }
    const long long now = used();
    std::printf("%12d %16lld %16lld %10lld\n", last, now, now - before,
                static_cast<long long>(gpu.kernels().size()));
  }
  gpu.kernels().Clear();
  const long long cleared = used();
  std::printf("kernel cache emptied: %lld bytes in use, %lld above the start (%lld before)\n", cleared,
              cleared - before, before);
  std::printf("%d of %d measurements failed\n", failed, count);
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

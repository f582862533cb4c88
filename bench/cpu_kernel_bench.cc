// CPU kernel compiler: compile time per kernel (cold, and a cache hit), and
// single-threaded run throughput of elementwise fusions (gelu in tanh form,
// which calls libm's tanhf per element; axpy) and a row reduction on 4096-wide f32 arrays.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/cpu_kernel.h"
#include "benchmark/benchmark.h"
#include "core/eval/formula_inputs.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

CpuKernelCompiler& Compiler() {
  static CpuKernelCompiler* compiler = [] {
    auto c = CpuKernelCompiler::Create();
    if (!c.ok()) std::abort();
    return c->release();
  }();
  return *compiler;
}

std::string Gelu(int64_t rows, int64_t cols, const std::string& constant) {
  const std::string s = absl::StrCat("f32[", rows, ",", cols, "]");
  return absl::StrCat("HloModule m\nfused {\n  x = ", s, " parameter(0)\n",
                      "  h = f32[] constant(0.5)\n  hb = ", s, " broadcast(h), dimensions={}\n",
                      "  c = f32[] constant(", constant, ")\n  cb = ", s,
                      " broadcast(c), dimensions={}\n  k = f32[] constant(0.044715)\n  kb = ", s,
                      " broadcast(k), dimensions={}\n  x2 = ", s, " multiply(x, x)\n  x3 = ", s,
                      " multiply(x2, x)\n  kx3 = ", s, " multiply(kb, x3)\n  in = ", s,
                      " add(x, kx3)\n  t = ", s, " multiply(cb, in)\n  th = ", s,
                      " tanh(t)\n  one = f32[] constant(1)\n  ob = ", s,
                      " broadcast(one), dimensions={}\n  sum = ", s, " add(th, ob)\n  hx = ", s,
                      " multiply(hb, x)\n  ROOT r = ", s, " multiply(hx, sum)\n}\n",
                      "ENTRY e {\n  a = ", s, " parameter(0)\n  ROOT f = ", s,
                      " fusion(a), kind=kLoop, calls=fused\n}\n");
}

std::string RowSum(int64_t rows, int64_t cols) {
  return absl::StrCat(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p = f32[)", rows, ",", cols, R"(] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[)", rows, R"(] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY e {
  a = f32[)", rows, ",", cols, R"(] parameter(0)
  ROOT f = f32[)", rows, R"(] fusion(a), kind=kInput, calls=fused
})");
}

// a * x + y, with a a broadcast scalar: pure arithmetic, vectorizable.
std::string Axpy(int64_t rows, int64_t cols) {
  const std::string s = absl::StrCat("f32[", rows, ",", cols, "]");
  return absl::StrCat("HloModule m\nfused {\n  x = ", s, " parameter(0)\n  y = ", s,
                      " parameter(1)\n  a = f32[] constant(1.5)\n  ab = ", s,
                      " broadcast(a), dimensions={}\n  m = ", s, " multiply(ab, x)\n  ROOT r = ", s,
                      " add(m, y)\n}\nENTRY e {\n  x = ", s, " parameter(0)\n  y = ", s,
                      " parameter(1)\n  ROOT f = ", s,
                      " fusion(x, y), kind=kLoop, calls=fused\n}\n");
}

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  if (!m.ok()) std::abort();
  return std::move(*m);
}

// A new constant each time, so every compile misses the cache.
void BM_CompileGeluCold(benchmark::State& state) {
  int64_t n = 0;
  for (auto _ : state) {
    auto module = Parse(Gelu(64, 64, absl::StrCat(1000 + n++)));
    auto kernel = Compiler().Compile(*module->entry()->root());
    if (!kernel.ok()) state.SkipWithError(std::string(kernel.status().message()).c_str());
  }
}
BENCHMARK(BM_CompileGeluCold)->Unit(benchmark::kMillisecond);

void BM_CompileGeluCached(benchmark::State& state) {
  auto module = Parse(Gelu(64, 64, "0.7978846"));
  (void)Compiler().Compile(*module->entry()->root());
  for (auto _ : state) {
    auto kernel = Compiler().Compile(*module->entry()->root());
    benchmark::DoNotOptimize(kernel);
  }
}
BENCHMARK(BM_CompileGeluCached)->Unit(benchmark::kMicrosecond);

// Runs the module's root kernel over its whole extent on one thread; bytes
// are the operands read plus the output written.
void RunRoot(benchmark::State& state, const std::string& text) {
  auto module = Parse(text);
  const Instruction& root = *module->entry()->root();
  auto kernel = Compiler().Compile(root);
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = FormulaInputs(*module);
  Literal out(root.shape());
  std::vector<void*> buffers;
  int64_t bytes = out.shape().byte_size();
  for (Literal& a : args) {
    buffers.push_back(a.raw_data());
    bytes += a.shape().byte_size();
  }
  buffers.push_back(out.raw_data());
  for (auto _ : state) {
    kernel->fn(buffers.data(), 0, kernel->parallel_extent);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_RunGelu4096x4096(benchmark::State& state) { RunRoot(state, Gelu(4096, 4096, "0.7978846")); }
BENCHMARK(BM_RunGelu4096x4096)->Unit(benchmark::kMillisecond);

void BM_RunAxpy4096x4096(benchmark::State& state) { RunRoot(state, Axpy(4096, 4096)); }
BENCHMARK(BM_RunAxpy4096x4096)->Unit(benchmark::kMillisecond);

void BM_RunRowSum4096x1024(benchmark::State& state) { RunRoot(state, RowSum(4096, 1024)); }
BENCHMARK(BM_RunRowSum4096x1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hlogym

// The GPU executable against the reference interpreter and the XLA oracle.
// Where there is no GPU (or no CUDA build) the GPU tests skip, and one test
// checks that asking for the GPU says so and suggests the CPU backend.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/lowering_test_util.h"
#include "tests/core/oracle_check.h"

#ifdef HLOGYM_HAVE_CUDA
#include "backend/gpu_runtime.h"
#endif

namespace hlogym {
namespace {

#ifdef HLOGYM_HAVE_CUDA

GpuRuntime* Runtime() {
  static GpuRuntime* runtime = [] {
    absl::StatusOr<std::unique_ptr<GpuRuntime>> r = GpuRuntime::Create();
    return r.ok() ? r->release() : nullptr;
  }();
  return runtime;
}

#define REQUIRE_GPU() \
  if (Runtime() == nullptr) GTEST_SKIP() << "no GPU: " << GpuContext::Get().status()

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::vector<std::filesystem::path> HloFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(HLOGYM_SOURCE_DIR) / dir)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// "" when the GPU's outputs match the interpreter's on the formula inputs.
// Convolutions and long dots sum in a different order than the interpreter
// (which uses double), so their outputs get atol 1e-5 of their magnitude.
std::string CompareWithInterpreter(const Module& module, const std::string& label,
                                   GpuExecutableStats* stats = nullptr) {
  const std::vector<Literal> inputs = FormulaInputs(module);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(module, inputs);
  if (!expected.ok()) return label + ": interpreter: " + expected.status().ToString();
  absl::StatusOr<std::unique_ptr<GpuExecutable>> executable =
      GpuExecutable::Compile(module, Runtime()->kernels(), Runtime()->host_compiler());
  if (!executable.ok()) return label + ": compile: " + executable.status().ToString();
  if (stats != nullptr) *stats = (*executable)->stats();
  absl::StatusOr<std::vector<Literal>> actual = (*executable)->Run(inputs);
  if (!actual.ok()) return label + ": run: " + actual.status().ToString();
  if (expected->size() != actual->size()) return label + ": output count differs";
  for (size_t i = 0; i < expected->size(); ++i) {
    const Literal& e = (*expected)[i];
    double scale = 0;
    if (IsFloat(e.shape().element_type())) {
      for (int64_t k = 0; k < e.element_count(); ++k) {
        if (std::isfinite(e.GetAsDouble(k))) scale = std::max(scale, std::abs(e.GetAsDouble(k)));
      }
    }
    EquivalenceOptions tolerance;
    tolerance.atol = std::max(tolerance.atol, 1e-5 * scale);
    std::vector<Literal> want, got;
    want.push_back(e);
    got.push_back((*actual)[i]);
    EquivalenceReport report = CompareLiterals(want, got, tolerance);
    if (!report.equivalent) return label + ": output " + std::to_string(i) + ": " + report.message;
  }
  return "";
}

TEST(GpuExecutableTest, DotsInEveryLayoutOnCublas) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  a = f32[3,40,50] parameter(0)
  b = f32[3,50,20] parameter(1)
  at = f32[3,50,40] parameter(2)
  bt = f32[3,20,50] parameter(3)
  d0 = f32[3,40,20] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  d1 = f32[3,40,20] dot(at, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d2 = f32[3,40,20] dot(a, bt), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  d3 = f32[3,40,20] dot(at, bt), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}
  ROOT t = (f32[3,40,20], f32[3,40,20], f32[3,40,20], f32[3,40,20]) tuple(d0, d1, d2, d3)
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "dots", &stats), "");
  EXPECT_EQ(stats.cublas_count, 4);
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, ConvolutionsRunAsIm2colFusionsAndCublas) {
  REQUIRE_GPU();
  // Each lowered (LowerForGpu) to loop fusions and one GEMM.
  std::unique_ptr<Module> m = Parse(lowering_test::kThreeConvolutions);
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "convolutions", &stats), "");
  EXPECT_EQ(stats.cublas_count, 3);
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, SelectAndScattersRunAsAReduceWindowAndAScatterKernel) {
  REQUIRE_GPU();
  // A max-pool gradient with overlapping, padded windows: lowered
  // (LowerForGpu) to a variadic reduce-window and an atomic scatter, with
  // nothing on the host.
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,33,33,16] parameter(0)
  s = f32[8,17,17,16] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[8,33,33,16] select-and-scatter(x, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "select-and-scatter", &stats), "");
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, TopKRunsAsRowReductionKernels) {
  REQUIRE_GPU();
  // k row reductions (LowerForGpu), nothing on the host; ties to the lower
  // index as the interpreter's topk (the floor makes many).
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  p = f32[300,1000] parameter(0)
  eight = f32[] constant(8)
  b = f32[300,1000] broadcast(eight), dimensions={}
  m = f32[300,1000] multiply(p, b)
  x = f32[300,1000] floor(m)
  ROOT t = (f32[300,16], s32[300,16]) topk(x), k=16, largest=true
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "topk", &stats), "");
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, LongCumulativeScansRunInBlocks) {
  REQUIRE_GPU();
  // scan-blocking (LowerForGpu): a scan within blocks, a scan of the
  // blocks' totals and a fusion; forward and reverse.
  std::unique_ptr<Module> m = Parse(R"(HloModule m
sum {
  x = f32[64] parameter(0)
  c = f32[64] parameter(1)
  y = f32[64] add(x, c)
  ROOT t = (f32[64], f32[64]) tuple(y, y)
}
ENTRY e {
  x = f32[64,4096] parameter(0)
  z = f32[] constant(0.25)
  c = f32[64] broadcast(z), dimensions={}
  f = (f32[64,4096], f32[64]) scan(x, c), dimensions={1}, num_carries=1, is_associative=true, to_apply=sum
  r = (f32[64,4096], f32[64]) scan(x, c), dimensions={1}, num_carries=1, is_reverse=true, is_associative=true, to_apply=sum
  ROOT t = ((f32[64,4096], f32[64]), (f32[64,4096], f32[64])) tuple(f, r)
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "scans", &stats), "");
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, RowReductionsWithAnyInitAndVariadicReducers) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  keep = pred[] or(gt, and(eq, lt))
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[37,1000] parameter(0)
  seven = f32[] constant(7)
  s = f32[37] reduce(x, seven), dimensions={1}, to_apply=add
  ix = s32[37,1000] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  am = (f32[37], s32[37]) reduce(x, ix, ninf, zero), dimensions={1}, to_apply=argmax
  v = f32[37] get-tuple-element(am), index=0
  i = s32[37] get-tuple-element(am), index=1
  small = f32[37,5] slice(x), slice={[0:37], [0:5]}
  few = f32[37] reduce(small, seven), dimensions={1}, to_apply=add
  column = f32[1000] reduce(x, seven), dimensions={0}, to_apply=add
  tall = f32[3000,4] parameter(1)
  channels = f32[4] reduce(tall, seven), dimensions={0}, to_apply=add
  ROOT t = (f32[37], f32[37], s32[37], f32[37], f32[1000], f32[4]) tuple(s, v, i, few, column, channels)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CompareWithInterpreter(*m, "reductions"), "");
}

TEST(GpuExecutableTest, WhileConditionalAndCallRunOnTheDevice) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
cond {
  s = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[1000] get-tuple-element(s), index=1
  one = s32[] constant(1)
  half = f32[] constant(0.5)
  h = f32[1000] broadcast(half), dimensions={}
  y = f32[1000] add(multiply(x, h), h)
  ROOT t = (s32[], f32[1000]) tuple(add(i, one), y)
}
neg {
  a = f32[1000] parameter(0)
  ROOT n = f32[1000] negate(a)
}
same {
  a = f32[1000] parameter(0)
  ROOT c = f32[1000] copy(a)
}
twice {
  a = f32[1000] parameter(0)
  ROOT d = f32[1000] add(a, a)
}
ENTRY e {
  x = f32[1000] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1000]) tuple(zero, x)
  w = (s32[], f32[1000]) while(init), condition=cond, body=body
  y = f32[1000] get-tuple-element(w), index=1
  p = pred[] parameter(1)
  c = f32[1000] conditional(p, y, y), true_computation=neg, false_computation=same
  k = s32[] parameter(2)
  b = f32[1000] conditional(k, c, c, c), branch_computations={neg, same, twice}
  ROOT r = f32[1000] call(b), to_apply=twice
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "control flow", &stats), "");
  EXPECT_EQ(stats.control_flow_count, 4);
  EXPECT_EQ(stats.total_host_op_count, 0);
}

TEST(GpuExecutableTest, ScansForwardAndReverseRunAsKernels) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
body {
  x = f32[300] parameter(0)
  c = f32[300] parameter(1)
  m = f32[300] parameter(2)
  s = f32[300] add(x, c)
  mx = f32[300] maximum(x, m)
  ROOT t = (f32[300], f32[300], f32[300]) tuple(s, s, mx)
}
ENTRY e {
  x = f32[300,50] parameter(0)
  z = f32[] constant(0)
  init = f32[300] broadcast(z), dimensions={}
  ninf = f32[] constant(-inf)
  low = f32[300] broadcast(ninf), dimensions={}
  f = (f32[300,50], f32[300], f32[300]) scan(x, init, low), dimensions={1}, num_carries=2, to_apply=body
  r = (f32[300,50], f32[300], f32[300]) scan(x, init, low), dimensions={1}, num_carries=2, is_reverse=true, to_apply=body
  f0 = f32[300,50] get-tuple-element(f), index=0
  f2 = f32[300] get-tuple-element(f), index=2
  r0 = f32[300,50] get-tuple-element(r), index=0
  ROOT t = (f32[300,50], f32[300], f32[300,50]) tuple(f0, f2, r0)
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "scans", &stats), "");
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, ScattersWithAtomicAddAndACompareAndSwapCombiner) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
maxi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}
mulf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] multiply(a, b)
}
ENTRY e {
  table = f32[50,8] parameter(0)
  raw = s32[400] parameter(1)
  seven = s32[] constant(53)
  sev = s32[400] broadcast(seven), dimensions={}
  ids = s32[400] remainder(raw, sev)
  idx = s32[400,1] reshape(ids)
  rows = f32[400,8] parameter(2)
  sum = f32[50,8] scatter(table, idx, rows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  itable = s32[50,8] convert(table)
  irows = s32[400,8] convert(rows)
  mx = s32[50,8] scatter(itable, idx, irows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=maxi
  few = s32[10,1] slice(idx), slice={[0:10], [0:1]}
  frows = f32[10,8] slice(rows), slice={[0:10], [0:8]}
  prod = f32[50,8] scatter(table, few, frows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mulf
  ROOT t = (f32[50,8], s32[50,8], f32[50,8]) tuple(sum, mx, prod)
})");
  ASSERT_NE(m, nullptr);
  GpuExecutableStats stats;
  EXPECT_EQ(CompareWithInterpreter(*m, "scatters", &stats), "");
  EXPECT_EQ(stats.host_op_count, 0);
}

TEST(GpuExecutableTest, FusionsOfReductionsBesideElementwiseOutputs) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
total {
  x = f32[64,300] parameter(0)
  sq = f32[64,300] multiply(x, x)
  z = f32[] constant(0)
  all = f32[] reduce(sq, z), dimensions={0,1}, to_apply=add
  rows = f32[64] reduce(sq, z), dimensions={1}, to_apply=add
  ROOT t = (f32[64,300], f32[], f32[64]) tuple(sq, all, rows)
}
short {
  x = f32[500,40] parameter(0)
  e = f32[500,40] exponential(x)
  z = f32[] constant(1)
  r = f32[40] reduce(e, z), dimensions={0}, to_apply=add
  ROOT t = (f32[40], f32[500,40]) tuple(r, e)
}
ENTRY e {
  x = f32[64,300] parameter(0)
  y = f32[500,40] parameter(1)
  a = (f32[64,300], f32[], f32[64]) fusion(x), kind=kInput, calls=total
  b = (f32[40], f32[500,40]) fusion(y), kind=kInput, calls=short
  ROOT t = ((f32[64,300], f32[], f32[64]), (f32[40], f32[500,40])) tuple(a, b)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CompareWithInterpreter(*m, "mixed"), "");
}

TEST(GpuExecutableTest, SmallTwinsMatchTheInterpreter) {
  REQUIRE_GPU();
  std::vector<std::string> failures;
  int64_t kernels = 0, host_ops = 0;
  for (const auto& path : HloFiles("data/corpus/small/hlo")) {
    for (bool fused : {false, true}) {
      std::unique_ptr<Module> m = Parse(ReadFile(path));
      ASSERT_NE(m, nullptr);
      if (fused) {
        ASSERT_TRUE(DefaultPipeline().Run(*m).ok());
      }
      GpuExecutableStats stats;
      const std::string label = path.stem().string() + (fused ? " (default pipeline)" : " (unfused)");
      std::string failure = CompareWithInterpreter(*m, label, &stats);
      if (!failure.empty()) failures.push_back(failure);
      kernels += stats.total_gpu_kernel_count;
      host_ops += stats.total_host_op_count;
    }
  }
  std::cout << kernels << " GPU kernels, " << host_ops << " host ops\n";
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

// The full-size corpus after the default pipeline, on the formula inputs,
// against XLA's own outputs (data/corpus/oracle), as the issue asks.
TEST(GpuExecutableTest, CorpusMatchesTheXlaOracle) {
  REQUIRE_GPU();
  std::vector<std::string> failures;
  for (const auto& path : HloFiles("data/corpus/hlo")) {
    const std::string name = path.stem().string();
    const std::filesystem::path oracle_path =
        std::filesystem::path(HLOGYM_SOURCE_DIR) / "data/corpus/oracle" / (name + ".json");
    if (!std::filesystem::exists(oracle_path)) continue;
    const testing::Json oracle = testing::ReadJsonFile(oracle_path.string());
    std::unique_ptr<Module> m = Parse(ReadFile(path));
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(DefaultPipeline().Run(*m).ok());
    absl::StatusOr<std::unique_ptr<GpuExecutable>> executable =
        GpuExecutable::Compile(*m, Runtime()->kernels(), Runtime()->host_compiler());
    if (!executable.ok()) {
      failures.push_back(name + ": compile: " + executable.status().ToString());
      continue;
    }
    absl::StatusOr<std::vector<Literal>> outputs = (*executable)->Run(FormulaInputs(*m));
    if (!outputs.ok()) {
      failures.push_back(name + ": run: " + outputs.status().ToString());
      continue;
    }
    const std::string verdict = testing::CheckAgainstOracle(*outputs, oracle, /*elementwise=*/false);
    std::cout << name << ": " << (verdict.empty() ? "matches the oracle" : verdict) << " ("
              << (*executable)->stats().total_gpu_kernel_count << " kernels, "
              << (*executable)->stats().cublas_count << " cuBLAS, "
              << (*executable)->stats().total_host_op_count << " host ops)\n";
    if (!verdict.empty()) failures.push_back(name + ": " + verdict);
  }
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(GpuExecutableTest, DeviceMemoryIsFreedWithTheExecutable) {
  REQUIRE_GPU();
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  x = f32[4096,4096] parameter(0)
  ROOT y = f32[4096,4096] exponential(x)
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<int64_t> before = Runtime()->gpu().UsedMemory();
  ASSERT_TRUE(before.ok()) << before.status();
  {
    absl::StatusOr<std::unique_ptr<GpuExecutable>> e =
        GpuExecutable::Compile(*m, Runtime()->kernels(), Runtime()->host_compiler());
    ASSERT_TRUE(e.ok()) << e.status();
    absl::StatusOr<int64_t> during = Runtime()->gpu().UsedMemory();
    ASSERT_TRUE(during.ok());
    EXPECT_GE(*during - *before, 2 * 4096 * 4096 * 4);
  }
  absl::StatusOr<int64_t> after = Runtime()->gpu().UsedMemory();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);
}

TEST(GpuRuntimeTest, PrepareCompilesTheKernelsMeasuringNeeds) {
  REQUIRE_GPU();
  // Kernels in the entry, a while body and branches; a fresh runtime, so
  // that no other test's kernels are in its cache.
  std::unique_ptr<Module> m = Parse(R"(HloModule m
body {
  s = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[1000] get-tuple-element(s), index=1
  one = s32[] constant(1)
  ROOT t = (s32[], f32[1000]) tuple(add(i, one), exponential(x))
}
cond {
  s = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
neg {
  a = f32[1000] parameter(0)
  ROOT n = f32[1000] negate(a)
}
ENTRY e {
  x = f32[1000] parameter(0)
  zero = s32[] constant(0)
  t = f32[1000] tanh(x)
  init = (s32[], f32[1000]) tuple(zero, t)
  w = (s32[], f32[1000]) while(init), condition=cond, body=body
  y = f32[1000] get-tuple-element(w), index=1
  p = pred[] parameter(1)
  ROOT c = f32[1000] conditional(p, y, y), true_computation=neg, false_computation=neg
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<GpuRuntime>> runtime = GpuRuntime::Create();
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  ASSERT_TRUE((*runtime)->Prepare(*m).ok());
  const int64_t compiled = (*runtime)->kernels().compiled_count();
  EXPECT_GE(compiled, 3);  // tanh, exponential, negate at least
  absl::StatusOr<GpuRuntimeReport> report = (*runtime)->MeasureUncached(*m);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ((*runtime)->kernels().compiled_count(), compiled);  // every one was ready
  EXPECT_EQ(report->stats.total_host_op_count, 0);
}

TEST(GpuRuntimeTest, WithoutAGpuSaysSoAndSuggestsTheCpuBackend) {
  absl::StatusOr<GpuContext*> gpu = GpuContext::Get();
  if (gpu.ok()) GTEST_SKIP() << "a GPU is present: " << (*gpu)->name();
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(gpu.status().message().find("use the cpu backend instead"), std::string::npos)
      << gpu.status();
}

#else  // !HLOGYM_HAVE_CUDA

TEST(GpuRuntimeTest, BuiltWithoutCuda) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace hlogym

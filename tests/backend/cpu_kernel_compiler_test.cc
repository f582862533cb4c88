// CpuKernelCompiler's contract: what CanCompile accepts, the kernel cache
// (an identical fusion in another module is a hit), errors that name the
// unsupported instruction, the parallel extent and grain, concurrent Compile.
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/eval/formula_inputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const Instruction* Find(const Module& module, const std::string& name) {
  for (const auto& i : module.entry()->instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

constexpr char kGelu[] = R"(HloModule m
fused {
  x = f32[64,48] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[64,48] broadcast(h), dimensions={}
  c = f32[] constant(0.7978846)
  cb = f32[64,48] broadcast(c), dimensions={}
  t = f32[64,48] multiply(x, cb)
  th = f32[64,48] tanh(t)
  one = f32[] constant(1)
  ob = f32[64,48] broadcast(one), dimensions={}
  s = f32[64,48] add(th, ob)
  hx = f32[64,48] multiply(hb, x)
  ROOT r = f32[64,48] multiply(hx, s)
}
ENTRY e {
  a = f32[64,48] parameter(0)
  ROOT f = f32[64,48] fusion(a), kind=kLoop, calls=fused
})";

TEST(CpuKernelCompilerTest, CanCompileFusionsAndElementalOpsOnly) {
  auto module = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT l = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  c = f32[] constant(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[8,8] add(a, d)
  r = f32[8] reduce(s, c), dimensions={1}, to_apply=add
  t = (f32[8,8], f32[8]) tuple(s, r)
  g = f32[8,8] get-tuple-element(t), index=0
  srt = f32[8,8] sort(g), dimensions={1}, to_apply=lt
  ROOT o = (f32[8,8], f32[8,8]) tuple(g, srt)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(CpuKernelCompiler::CanCompile(*Find(*module, "s")));
  EXPECT_TRUE(CpuKernelCompiler::CanCompile(*Find(*module, "r")));
  for (const char* host : {"a", "c", "d", "t", "g", "srt", "o"}) {
    EXPECT_FALSE(CpuKernelCompiler::CanCompile(*Find(*module, host))) << host;
  }
}

TEST(CpuKernelCompilerTest, UnsupportedOpIsAnErrorNamingIt) {
  auto module = Parse(R"(HloModule m
fused {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  d = f32[4,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[4,4] negate(d)
}
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  ROOT f = f32[4,4] fusion(a, b), kind=kOutput, calls=fused
})");
  ASSERT_NE(module, nullptr);
  const Instruction& fusion = *module->entry()->root();
  EXPECT_FALSE(CpuKernelCompiler::CanCompile(fusion));
  absl::StatusOr<CpuKernel> kernel = kernel_test::Compiler().Compile(fusion);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(kernel.status().message(), "not supported: dot (d)");

  auto c64 = Parse(R"(HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  ROOT n = c64[4] negate(a)
})");
  ASSERT_NE(c64, nullptr);
  kernel = kernel_test::Compiler().Compile(*c64->entry()->root());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().message(), "not supported: negate (n) on element type c64");

  auto parameter = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[4] parameter(0)\n}\n");
  ASSERT_NE(parameter, nullptr);
  kernel = kernel_test::Compiler().Compile(*parameter->entry()->root());
  ASSERT_FALSE(kernel.ok());
  EXPECT_THAT(kernel.status().message(), HasSubstr("not supported: parameter (a)"));
}

TEST(CpuKernelCompilerTest, IdenticalFusionInAnotherModuleIsACacheHit) {
  auto first = Parse(kGelu);
  auto second = Parse(kGelu);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  CpuKernelCompiler& compiler = kernel_test::Compiler();
  const int64_t compiled = compiler.compiled_count();
  const int64_t hits = compiler.cache_hits();
  absl::StatusOr<CpuKernel> a = compiler.Compile(*first->entry()->root());
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<CpuKernel> b = compiler.Compile(*second->entry()->root());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_LE(compiler.compiled_count(), compiled + 1);
  EXPECT_EQ(compiler.cache_hits(), hits + 1 + (compiler.compiled_count() == compiled ? 1 : 0));
  EXPECT_EQ(a->fn, b->fn);
  EXPECT_EQ(a->parallel_extent, 64 * 48);
  EXPECT_GE(a->grain, 1);

  // A different constant is a different kernel.
  std::string other = kGelu;
  other.replace(other.find("0.7978846"), 9, "0.5000000");
  auto third = Parse(other);
  ASSERT_NE(third, nullptr);
  absl::StatusOr<CpuKernel> c = compiler.Compile(*third->entry()->root());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(c->fn, a->fn);
}

// HLOGYM_CPU_PIPELINE replaces the kernel pipeline; one LLVM cannot parse
// is an error naming the variable, not a crash.
TEST(CpuKernelCompilerTest, KernelPipelineCanComeFromTheEnvironment) {
  auto module = Parse(kGelu);
  ASSERT_NE(module, nullptr);
  const Instruction& fusion = *module->entry()->root();
  {
    setenv("HLOGYM_CPU_PIPELINE", "function(no-such-pass)", 1);
    absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> compiler = CpuKernelCompiler::Create();
    ASSERT_TRUE(compiler.ok()) << compiler.status();
    absl::StatusOr<CpuKernel> kernel = (*compiler)->Compile(fusion);
    unsetenv("HLOGYM_CPU_PIPELINE");
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(kernel.status().message(), HasSubstr("HLOGYM_CPU_PIPELINE"));
    EXPECT_THAT(kernel.status().message(), HasSubstr("no-such-pass"));
  }
  setenv("HLOGYM_CPU_PIPELINE", "function(instcombine)", 1);
  absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> compiler = CpuKernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::StatusOr<CpuKernel> kernel = (*compiler)->Compile(fusion);
  unsetenv("HLOGYM_CPU_PIPELINE");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_NE(kernel->fn, nullptr);
}

TEST(CpuKernelCompilerTest, ReductionExtentIsOutputElements) {
  auto module = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p = f32[100,1000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[100] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY e {
  a = f32[100,1000] parameter(0)
  ROOT f = f32[100] fusion(a), kind=kInput, calls=fused
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<CpuKernel> k = kernel_test::Compiler().Compile(*module->entry()->root());
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->parallel_extent, 100);
  EXPECT_EQ(k->grain, 32);  // 32768 elements of work per task
}

TEST(CpuKernelCompilerTest, ConcurrentCompilesAndRunsAgree) {
  std::vector<std::unique_ptr<Module>> modules;
  for (int i = 0; i < 4; ++i) modules.push_back(Parse(kGelu));
  const std::vector<Literal> args = FormulaInputs(*modules[0]);
  std::vector<std::vector<Literal>> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<std::vector<Literal>> r =
          kernel_test::RunKernel(*modules[i]->entry()->root(), {&args[0]}, 1 + i);
      if (r.ok()) results[i] = std::move(*r);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(results[0].size(), 1u);
  for (int i = 1; i < 4; ++i) {
    ASSERT_EQ(results[i].size(), 1u);
    EXPECT_TRUE(results[i][0] == results[0][0]);
  }
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(*modules[0], args);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(kernel_test::Mismatch((*expected)[0], results[0][0], 4), "");
}

}  // namespace
}  // namespace hlogym

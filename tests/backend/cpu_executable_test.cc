// CpuExecutable on small hand-written modules: BLAS dots and im2col
// convolutions in every operand arrangement, control flow, aliasing, buffer
// sharing, kernel counts and errors, each against the reference interpreter.
#include "backend/cpu_executable.h"

#include <malloc.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"
#include "tests/backend/heap_allocation_counter.h"


namespace hlogym {
namespace {

using kernel_test::Compiler;
using kernel_test::Parse;

// Compiles and runs `text` on its formula inputs and compares every output
// with the interpreter's. Returns the executable for further checks.
std::unique_ptr<CpuExecutable> ExpectMatchesInterpreter(const std::string& text) {
  // An executable refers to its module (step names, host ops), which must
  // outlive it; callers keep the executable, so the module lives on here.
  static auto* modules = new std::vector<std::unique_ptr<Module>>();
  modules->push_back(Parse(text));
  const Module* module = modules->back().get();
  if (module == nullptr) return nullptr;
  const std::vector<Literal> inputs = FormulaInputs(*module);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(*module, inputs);
  EXPECT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::Compile(*module, Compiler());
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok() || !expected.ok()) return nullptr;
  for (int run = 0; run < 2; ++run) {  // a second run sees no stale state
    absl::StatusOr<std::vector<Literal>> actual = (*executable)->Run(inputs);
    EXPECT_TRUE(actual.ok()) << actual.status();
    if (!actual.ok()) return nullptr;
    const EquivalenceReport report = CompareLiterals(*expected, *actual);
    EXPECT_TRUE(report.equivalent) << report.message;
  }
  return *std::move(executable);
}

TEST(CpuExecutableTest, DotInEveryOperandArrangement) {
  // lhs [M,K] / [K,M] / [B,K,M] / [M,B,K]; rhs [K,N] / [N,K] / [B,N,K] / [K,B,N].
  const char* cases[] = {
      "a = f32[5,7] parameter(0)\n b = f32[7,3] parameter(1)\n"
      " ROOT d = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f32[7,5] parameter(0)\n b = f32[3,7] parameter(1)\n"
      " ROOT d = f32[5,3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}",
      "a = f32[2,7,5] parameter(0)\n b = f32[2,3,7] parameter(1)\n"
      " ROOT d = f32[2,5,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1},"
      " rhs_batch_dims={0}, rhs_contracting_dims={2}",
      "a = f32[5,2,7] parameter(0)\n b = f32[7,2,3] parameter(1)\n"
      " ROOT d = f32[2,5,3] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2},"
      " rhs_batch_dims={1}, rhs_contracting_dims={0}",
      "a = f32[4,3,6] parameter(0)\n b = f32[6,4,5] parameter(1)\n"
      " ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={0,2}, rhs_contracting_dims={1,0}",
      "a = f64[9,4] parameter(0)\n b = f64[4] parameter(1)\n"
      " ROOT d = f64[9] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = bf16[6,5] parameter(0)\n b = bf16[6,4] parameter(1)\n"
      " ROOT d = bf16[5,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
      "a = f16[2,3,5] parameter(0)\n b = bf16[2,5,4] parameter(1)\n"
      " ROOT d = f32[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},"
      " rhs_batch_dims={0}, rhs_contracting_dims={1}",
      "a = f32[3,0] parameter(0)\n b = f32[0,2] parameter(1)\n"
      " ROOT d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
  };
  for (const char* body : cases) {
    SCOPED_TRACE(body);
    std::unique_ptr<CpuExecutable> e =
        ExpectMatchesInterpreter(std::string("HloModule m\nENTRY e {\n ") + body + "\n}\n");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->stats().blas_op_count, 1);
    EXPECT_EQ(e->stats().interpreter_op_count, 0);
  }
}

TEST(CpuExecutableTest, IntegerDotRunsOnTheInterpreter) {
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(
      "HloModule m\nENTRY e {\n a = s32[4,3] parameter(0)\n b = s32[3,2] parameter(1)\n"
      " ROOT d = s32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().interpreter_op_count, 1);
}

TEST(CpuExecutableTest, ConvolutionInEveryLayout) {
  const char* cases[] = {
      // forward, NHWC / HWIO, padded
      "x = f32[2,6,6,3] parameter(0)\n w = f32[3,3,3,4] parameter(1)\n"
      " ROOT c = f32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1},"
      " dim_labels=b01f_01io->b01f",
      // strided and window-dilated, kernel HWOI
      "x = f32[1,9,8,2] parameter(0)\n w = f32[2,3,5,2] parameter(1)\n"
      " ROOT c = f32[1,4,3,5] convolution(x, w), window={size=2x3 stride=2x2 rhs_dilate=1x2},"
      " dim_labels=b01f_01oi->b01f",
      // NCHW / OIHW -> NCHW, with base dilation and a reversed window
      "x = f32[2,3,5,5] parameter(0)\n w = f32[4,3,3,3] parameter(1)\n"
      " ROOT c = f32[2,4,11,11] convolution(x, w), window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2"
      " rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01",
      // a backward-filter convolution as JAX writes it
      "x = f32[4,7,7,2] parameter(0)\n g = f32[4,7,7,3] parameter(1)\n"
      " ROOT c = f32[3,3,2,3] convolution(x, g), window={size=7x7 pad=1_1x1_1},"
      " dim_labels=f01b_i01o->01bf",
      // grouped (depthwise-style): 4 input features, 2 groups
      "x = f32[2,5,5,4] parameter(0)\n w = f32[3,3,2,6] parameter(1)\n"
      " ROOT c = f32[2,3,3,6] convolution(x, w), window={size=3x3},"
      " dim_labels=b01f_01io->b01f, feature_group_count=2",
      // 1-d, f64
      "x = f64[3,10,2] parameter(0)\n w = f64[4,2,5] parameter(1)\n"
      " ROOT c = f64[3,7,5] convolution(x, w), window={size=4}, dim_labels=b0f_0io->b0f",
  };
  for (const char* body : cases) {
    SCOPED_TRACE(body);
    std::unique_ptr<CpuExecutable> e =
        ExpectMatchesInterpreter(std::string("HloModule m\nENTRY e {\n ") + body + "\n}\n");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->stats().blas_op_count, 1);
  }
}

TEST(CpuExecutableTest, WhileLoopThatSwapsItsState) {
  // The body swaps two leaves and bumps a counter: the state copy must not
  // overwrite a leaf before it is read.
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(R"(HloModule m
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  a = f32[4] get-tuple-element(p), index=1
  b = f32[4] get-tuple-element(p), index=2
  s = f32[4] add(a, b)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, b, s)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, y)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  ROOT out = (f32[4], (s32[], f32[4], f32[4])) tuple(r, w)
}
)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().control_flow_count, 1);
  EXPECT_EQ(e->output_leaf_count(), 4);
}

TEST(CpuExecutableTest, AWhileWhoseCountIsNotFixedRunsItsCondition) {
  // The bound is state, not a constant: StaticTripCount has no count and
  // the condition runs every trip (5 of them).
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(R"(HloModule m
cond {
  p = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  a = f32[4] get-tuple-element(p), index=2
  twice = f32[4] add(a, a)
  ROOT t = (s32[], s32[], f32[4]) tuple(next, n, twice)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  five = s32[] constant(5)
  init = (s32[], s32[], f32[4]) tuple(zero, five, x)
  ROOT w = (s32[], s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().control_flow_count, 1);
}

TEST(CpuExecutableTest, ConditionalAndCall) {
  const std::string branches = R"(HloModule m
neg {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
same {
  ROOT p = f32[3] parameter(0)
}
twice {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  ROOT s = f32[3] add(p, q)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  k = pred[] parameter(2)
  c = f32[3] conditional(k, x, y), true_computation=neg, false_computation=same
  ROOT r = f32[3] call(c, x), to_apply=twice
}
)";
  // The formula input of pred parameter 2 is (0 + 2) % 3 == 0, false.
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(branches);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().control_flow_count, 2);

  // An s32 selector, out of range: XLA runs the last branch.
  ExpectMatchesInterpreter(R"(HloModule m
b0 {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
b1 {
  p = f32[3] parameter(0)
  ROOT n = f32[3] exponential(p)
}
ENTRY e {
  x = f32[3] parameter(0)
  k = s32[] constant(7)
  ROOT c = f32[3] conditional(k, x, x), branch_computations={b0, b1}
}
)");
}

TEST(CpuExecutableTest, AliasesRunNoCodeAndOutputsMayBeParametersAndConstants) {
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = f32[2,6] parameter(0)
  r = f32[3,4] reshape(x)
  b = f32[12] bitcast(r)
  c = f32[2] constant({1.5, -2})
  t = (f32[12], f32[2]) tuple(b, c)
  g = f32[12] get-tuple-element(t), index=0
  ROOT o = (f32[12], f32[2], f32[2,6]) tuple(g, c, x)
}
)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().kernel_count, 0);
  EXPECT_EQ(e->stats().constant_bytes, 8);
}

TEST(CpuExecutableTest, KernelCountIsFusionsPlusUnfusedInstructions) {
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(R"(HloModule m
fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  ROOT m = f32[8] multiply(a, p0)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  f = f32[8] fusion(x, y), kind=kLoop, calls=fused
  n = f32[8] negate(f)
  r = f32[2,4] reshape(n)
  s = f32[4,2] transpose(r), dimensions={1,0}
  ROOT t = (f32[4,2], f32[8]) tuple(s, f)
}
)");
  ASSERT_NE(e, nullptr);
  // fusion, negate and transpose; the reshape and tuple alias.
  EXPECT_EQ(e->stats().kernel_count, 3);
  EXPECT_EQ(e->stats().jit_kernel_count + e->stats().blas_op_count +
                e->stats().interpreter_op_count,
            3);
  EXPECT_EQ(e->stats().jit_fallback_count, 0) << e->stats().first_jit_failure;

  std::vector<Literal> inputs;
  inputs.emplace_back(Shape::Array(PrimitiveType::kF32, {8}));
  inputs.emplace_back(Shape::Array(PrimitiveType::kF32, {8}));
  absl::StatusOr<std::vector<CpuExecutable::StepTime>> profile =
      e->ExecuteProfiled({inputs[0].raw_data(), inputs[1].raw_data()});
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_EQ(profile->size(), 3u);
  EXPECT_EQ((*profile)[0].instruction, "f");
  EXPECT_EQ((*profile)[2].instruction, "s");
}

TEST(CpuExecutableTest, TemporariesShareTheArena) {
  // A chain: each value dies when the next is made, so two buffers suffice.
  std::string text = "HloModule m\nENTRY e {\n x0 = f32[1024] parameter(0)\n";
  for (int i = 1; i <= 8; ++i) {
    text += " x" + std::to_string(i) + " = f32[1024] negate(x" + std::to_string(i - 1) + ")\n";
  }
  text += " ROOT r = f32[1024] exponential(x8)\n}\n";
  std::unique_ptr<CpuExecutable> e = ExpectMatchesInterpreter(text);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->stats().unshared_bytes, 9 * 4096);
  EXPECT_EQ(e->stats().arena_bytes, 2 * 4096);
}

TEST(CpuExecutableTest, ExecuteDoesNotAllocateForKernelsDotsAndConvolutions) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = f32[2,8,8,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  r = f32[128,4] reshape(c)
  t = f32[4,128] transpose(r), dimensions={1,0}
  d = f32[4,4] dot(t, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[4,4] tanh(d)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->stats().interpreter_op_count, 0);
  const std::vector<Literal> inputs = FormulaInputs(*module);
  const std::vector<const void*> leaves = {inputs[0].raw_data(), inputs[1].raw_data()};
  ASSERT_TRUE((*e)->Execute(leaves).ok());  // warms up TBB's and OpenBLAS's pools
  // A TBB worker that joins for the first time on a later run sets itself up
  // once, so one window of runs may see that; an executable that allocates per
  // run fails every window.
  bool clean_window = false;
  for (int window = 0; window < 5 && !clean_window; ++window) {
    const size_t in_use_before = mallinfo2().uordblks;
    const long allocations_before = HeapAllocationCount();
    for (int i = 0; i < 20; ++i) ASSERT_TRUE((*e)->Execute(leaves).ok());
    clean_window = mallinfo2().uordblks == in_use_before;
    clean_window = clean_window && HeapAllocationCount() == allocations_before;
  }
  EXPECT_TRUE(clean_window) << "every window of 20 runs allocated";
}

TEST(CpuExecutableTest, HostOpsFromTheInterpreter) {
  ExpectMatchesInterpreter(R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  s = f32[4,6] sort(x), dimensions={1}, to_apply=less
  ninf = f32[] constant(-inf)
  w = f32[2,3] reduce-window(s, ninf), window={size=2x2 stride=2x2}, to_apply=max
  ROOT t = (f32[4,6], f32[2,3]) tuple(s, w)
}
)");
}

TEST(CpuExecutableTest, UnsupportedOpIsAnErrorNamingIt) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="my_kernel"
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "not supported: custom-call target `my_kernel` in instruction `c` (the CPU backend "
            "has no kernel for it)");

  module = Parse(R"(HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  ROOT c = f32[4,4] cholesky(x), lower=true
}
)");
  ASSERT_NE(module, nullptr);
  e = CpuExecutable::Compile(*module, Compiler());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(),
            "not supported: cholesky in instruction `c` (the CPU backend has no kernel for it)");
}

TEST(CpuExecutableTest, ExecuteChecksItsArguments) {
  std::unique_ptr<Module> module =
      Parse("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n ROOT n = f32[4] negate(x)\n}\n");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->Execute({}).message(), "the executable takes 1 parameter leaves, got 0");
  std::vector<Literal> wrong;
  wrong.emplace_back(Shape::Array(PrimitiveType::kF32, {5}));
  EXPECT_EQ((*e)->Run(wrong).status().message(),
            "argument leaf 0 has shape f32[5] but the parameter leaf is f32[4]");
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// The fault-injection custom-call (backend/host_ops.h) compiles to a host op
// that fails as asked; "error" is the one a test can run in this process.
TEST(CpuExecutableFaultInjectionTest, ErrorFailsTheRunAndUnknownKindsNameTheChoices) {
  auto faulty = [](const std::string& config) {
    return Parse("HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT c = f32[8] "
                 "custom-call(x), custom_call_target=\"hlogym.inject_fault\"" +
                 (config.empty() ? "" : ", backend_config=\"" + config + "\"") + "\n}\n");
  };
  std::unique_ptr<Module> module = faulty("error");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<std::vector<Literal>> run = (*e)->Run(FormulaInputs(*module));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(run.status().message(), "injected fault in `c`");
  for (const std::string& config : {std::string("nope"), std::string()}) {
    std::unique_ptr<Module> bad = faulty(config);
    ASSERT_NE(bad, nullptr);
    EXPECT_EQ(CpuExecutable::Compile(*bad, Compiler()).status().message(),
              "custom-call `c` to hlogym.inject_fault needs backend_config=\"segfault\", "
              "\"illegal_address\", \"hang\" or \"error\", got `" +
                  (config.empty() ? std::string("(none)") : config) + "`");
  }
}

}  // namespace
}  // namespace hlogym

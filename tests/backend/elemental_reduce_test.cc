// reduce inside fusions (row, column, full and variadic reductions, reducers
// with NaN semantics, bf16 sums) and multi-output fusions, compiled for the
// CPU and compared exactly with the reference interpreter.
#include <string>
#include <vector>

#include "core/eval/formula_inputs.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::ExpectExact;


constexpr char kAddF32[] = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(ElementalReduceTest, RowColumnAndFullSums) {
  for (const char* dims : {"{1}", "{0}", "{0,1}"}) {
    const std::string out = std::string(dims) == "{1}" ? "f32[37]"
                            : std::string(dims) == "{0}" ? "f32[53]" : "f32[]";
    ExpectExact(absl::StrCat("HloModule m\n", kAddF32, R"(
fused {
  p0 = f32[37,53] parameter(0)
  z = f32[] constant(0)
  e = f32[37,53] multiply(p0, p0)
  ROOT r = )", out, " reduce(e, z), dimensions=", dims, R"(, to_apply=add
}
ENTRY e {
  a = f32[37,53] parameter(0)
  ROOT f = )", out, R"( fusion(a), kind=kInput, calls=fused
})"));
  }
}

TEST(ElementalReduceTest, MaxWithNaNAndBf16Sum) {
  ExpectExact(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
fused {
  p0 = f32[16,33] parameter(0)
  l = f32[16,33] log(p0)
  z = f32[] constant(-inf)
  ROOT r = f32[16] reduce(l, z), dimensions={1}, to_apply=max
}
ENTRY e {
  a = f32[16,33] parameter(0)
  ROOT f = f32[16] fusion(a), kind=kInput, calls=fused
})");
  ExpectExact(R"(HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
fused {
  p0 = bf16[8,4,300] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[4] reduce(p0, z), dimensions={0,2}, to_apply=add
}
ENTRY e {
  a = bf16[8,4,300] parameter(0)
  ROOT f = bf16[4] fusion(a), kind=kInput, calls=fused
})");
}

TEST(ElementalReduceTest, VariadicArgmax) {
  ExpectExact(R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, v0, v1)
  i = s32[] select(keep, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fused {
  p0 = f32[12,40] parameter(0)
  io = s32[12,40] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[12], s32[12]) reduce(p0, io, ninf, zero), dimensions={1}, to_apply=argmax
}
ENTRY e {
  a = f32[12,40] parameter(0)
  ROOT f = (f32[12], s32[12]) fusion(a), kind=kInput, calls=fused
})");
}

TEST(ElementalReduceTest, MultiOutputFusionOfMixedShapes) {
  ExpectExact(absl::StrCat("HloModule m\n", kAddF32, R"(
fused {
  p0 = f32[24,70] parameter(0)
  z = f32[] constant(0)
  m = f32[24,70] multiply(p0, p0)
  r = f32[24] reduce(m, z), dimensions={1}, to_apply=add
  n = f32[24,70] negate(p0)
  ROOT t = (f32[24], f32[24,70], f32[24,70]) tuple(r, m, n)
}
ENTRY e {
  a = f32[24,70] parameter(0)
  ROOT f = (f32[24], f32[24,70], f32[24,70]) fusion(a), kind=kInput, calls=fused
})"));
}

TEST(ElementalReduceTest, ReduceFeedingElementwise) {
  // A softmax-like fusion: the row max is recomputed per element.
  ExpectExact(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
fused {
  p0 = f32[9,31] parameter(0)
  z = f32[] constant(-inf)
  r = f32[9] reduce(p0, z), dimensions={1}, to_apply=max
  b = f32[9,31] broadcast(r), dimensions={0}
  ROOT s = f32[9,31] subtract(p0, b)
}
ENTRY e {
  a = f32[9,31] parameter(0)
  ROOT f = f32[9,31] fusion(a), kind=kLoop, calls=fused
})");
}

TEST(ElementalReduceTest, UnfusedReduce) {
  ExpectExact(absl::StrCat("HloModule m\n", kAddF32, R"(
ENTRY e {
  a = f32[5,6,7] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[6] reduce(a, z), dimensions={0,2}, to_apply=add
})"));
}

TEST(ElementalReduceTest, ReduceWindowWithPaddingStridesAndDilations) {
  ExpectExact(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
fused {
  p0 = f32[2,9,11] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,5,6] reduce-window(p0, z), window={size=1x3x2 stride=1x2x2 pad=0_0x1_1x0_1}, to_apply=max
}
ENTRY e {
  a = f32[2,9,11] parameter(0)
  ROOT f = f32[2,5,6] fusion(a), kind=kLoop, calls=fused
})");
  ExpectExact(absl::StrCat("HloModule m\n", kAddF32, R"(
ENTRY e {
  a = f32[7,6] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[7,5] reduce-window(a, z), window={size=3x2 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=1x3}, to_apply=add
})"));
}

TEST(ElementalReduceTest, TupleParameterIsNotSupported) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(R"(HloModule m
fused {
  p0 = (f32[4], f32[4]) parameter(0)
  ROOT g = f32[4] get-tuple-element(p0), index=1
}
ENTRY e {
  a = (f32[4], f32[4]) parameter(0)
  ROOT f = f32[4] fusion(a), kind=kLoop, calls=fused
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const Instruction& fusion = *(*module)->entry()->root();
  EXPECT_FALSE(CpuKernelCompiler::CanCompile(fusion));
  absl::StatusOr<CpuKernel> kernel = kernel_test::Compiler().Compile(fusion);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().message(), "not supported: parameter (p0) of tuple shape");
}

}  // namespace
}  // namespace hlogym

// Loops split where a concatenate or pad changes operand
// (backend/index_breakpoints.h): the breakpoints found, and kernels whose
// output or reduction loops run in segments, compared exactly with the
// reference interpreter. RunKernel splits each kernel's range in three, so
// task boundaries fall inside segments.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/index_breakpoints.h"
#include "core/eval/formula_inputs.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::CompareRoot;
using kernel_test::ExpectExact;
using kernel_test::Parse;

// The breakpoints of the fused root of `text`'s entry root along `dim`.
std::vector<int64_t> RootBreakpoints(const std::string& text, int64_t dim) {
  std::unique_ptr<Module> module = Parse(text);
  if (module == nullptr) return {-1};
  const Instruction& fusion = *module->entry()->root();
  return IndexBreakpoints(*fusion.fused_computation()->root(), dim);
}

// The concatenate-rooted fusion of three operands of different sizes.
constexpr char kConcat3[] = R"(HloModule m
fused {
  p0 = f32[5,3] parameter(0)
  p1 = f32[5,7] parameter(1)
  p2 = f32[5,2] parameter(2)
  n = f32[5,3] negate(p0)
  m = f32[5,7] multiply(p1, p1)
  c = f32[] constant(0.5)
  cb = f32[5,2] broadcast(c), dimensions={}
  a = f32[5,2] add(p2, cb)
  ROOT r = f32[5,12] concatenate(n, m, a), dimensions={1}
}
ENTRY e {
  x = f32[5,3] parameter(0)
  y = f32[5,7] parameter(1)
  z = f32[5,2] parameter(2)
  ROOT f = f32[5,12] fusion(x, y, z), kind=kLoop, calls=fused
})";

// A roll along the minor dimension (concatenate of two slices) feeding an
// elementwise op, a sum and a max over rows.
constexpr char kRollReduce[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
fused {
  p0 = f32[6,40] parameter(0)
  s1 = f32[6,1] slice(p0), slice={[0:6], [39:40]}
  s2 = f32[6,39] slice(p0), slice={[0:6], [0:39]}
  r = f32[6,40] concatenate(s1, s2), dimensions={1}
  e = f32[6,40] multiply(r, p0)
  z = f32[] constant(0)
  sum = f32[6] reduce(e, z), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  mx = f32[6] reduce(r, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[6], f32[6], f32[6,40]) tuple(sum, mx, e)
}
ENTRY e {
  x = f32[6,40] parameter(0)
  ROOT f = (f32[6], f32[6], f32[6,40]) fusion(x), kind=kInput, calls=fused
})";

// The roll's gradient: the two sides of a split, each padded back.
constexpr char kPadPair[] = R"(HloModule m
fused {
  p0 = bf16[4,10] parameter(0)
  z = bf16[] constant(0)
  a = bf16[4,9] slice(p0), slice={[0:4], [1:10]}
  pa = bf16[4,10] pad(a, z), padding=0_0x0_1
  b = bf16[4,1] slice(p0), slice={[0:4], [0:1]}
  pb = bf16[4,10] pad(b, z), padding=0_0x9_0
  ROOT r = bf16[4,10] add(pa, pb)
}
ENTRY e {
  x = bf16[4,10] parameter(0)
  ROOT f = bf16[4,10] fusion(x), kind=kLoop, calls=fused
})";

TEST(IndexBreakpointsTest, ConcatenateOperandBoundaries) {
  EXPECT_EQ(RootBreakpoints(kConcat3, 1), (std::vector<int64_t>{3, 10}));
  // Along the other dimension nothing changes.
  EXPECT_EQ(RootBreakpoints(kConcat3, 0), std::vector<int64_t>{});
}

TEST(IndexBreakpointsTest, PadEdgesThroughSlices) {
  EXPECT_EQ(RootBreakpoints(kPadPair, 1), (std::vector<int64_t>{9}));
}

TEST(IndexBreakpointsTest, ThroughReverseStridedSliceAndReduce) {
  // reverse(concat(6, 4)) along d: the boundary 6 lands at 10 - 6 = 4; a
  // slice of stride 2 from 1 reads 1, 3, 5, ...: positions >= 6 from p = 3.
  const std::string text = R"(HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fused {
  p0 = s32[3,6] parameter(0)
  p1 = s32[3,4] parameter(1)
  c = s32[3,10] concatenate(p0, p1), dimensions={1}
  r = s32[3,10] reverse(c), dimensions={1}
  s = s32[3,5] slice(c), slice={[0:3], [1:10:2]}
  t = s32[5,3] transpose(s), dimensions={1,0}
  z = s32[] constant(0)
  sum = s32[5] reduce(t, z), dimensions={1}, to_apply=add
  rs = s32[3] reduce(r, z), dimensions={1}, to_apply=add
  ROOT out = (s32[3,10], s32[5], s32[3]) tuple(r, sum, rs)
}
ENTRY e {
  x = s32[3,6] parameter(0)
  y = s32[3,4] parameter(1)
  ROOT f = (s32[3,10], s32[5], s32[3]) fusion(x, y), kind=kInput, calls=fused
})";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  const Instruction& root = *module->entry()->root()->fused_computation()->root();
  EXPECT_EQ(IndexBreakpoints(*root.operand(0), 1), (std::vector<int64_t>{4}));
  EXPECT_EQ(IndexBreakpoints(*root.operand(1), 0), (std::vector<int64_t>{3}));
  // The sum over rows reads the concatenate along its reduced dimension:
  // nothing along its kept one.
  EXPECT_EQ(IndexBreakpoints(*root.operand(2), 0), std::vector<int64_t>{});
  EXPECT_EQ(IndexBreakpoints(*root.operand(2)->operand(0), 1), (std::vector<int64_t>{4}));
  ExpectExact(text);
}

TEST(IndexBreakpointsTest, TooManyOperandsGiveNone) {
  std::string params, names, entry_params, args;
  for (int k = 0; k < kMaxLoopSegments + 1; ++k) {
    absl::StrAppend(&params, "  p", k, " = f32[2,3] parameter(", k, ")\n");
    absl::StrAppend(&entry_params, "  x", k, " = f32[2,3] parameter(", k, ")\n");
    absl::StrAppend(&names, k ? ", " : "", "p", k);
    absl::StrAppend(&args, k ? ", " : "", "x", k);
  }
  const int64_t n = 3 * (kMaxLoopSegments + 1);
  const std::string text = absl::StrCat("HloModule m\nfused {\n", params, "  ROOT r = f32[2,", n,
                                        "] concatenate(", names, "), dimensions={1}\n}\n",
                                        "ENTRY e {\n", entry_params, "  ROOT f = f32[2,", n,
                                        "] fusion(", args, "), kind=kLoop, calls=fused\n}\n");
  EXPECT_EQ(RootBreakpoints(text, 1), std::vector<int64_t>{});
  // Still correct as one loop of selects.
  ExpectExact(text);
}

TEST(ElementalSegmentsTest, ConcatenateRootThreeOperandsOfDifferentSizes) {
  ExpectExact(kConcat3);
}

TEST(ElementalSegmentsTest, ConcatenateRootAlongTheMajorDimension) {
  ExpectExact(R"(HloModule m
fused {
  p0 = s8[2,5] parameter(0)
  p1 = s8[3,5] parameter(1)
  n = s8[2,5] negate(p0)
  ROOT r = s8[5,5] concatenate(n, p1), dimensions={0}
}
ENTRY e {
  x = s8[2,5] parameter(0)
  y = s8[3,5] parameter(1)
  ROOT f = s8[5,5] fusion(x, y), kind=kLoop, calls=fused
})");
}

TEST(ElementalSegmentsTest, ConcatenateRootOfVectorsAndF64) {
  ExpectExact(R"(HloModule m
fused {
  p0 = f64[17] parameter(0)
  p1 = f64[1] parameter(1)
  p2 = f64[30] parameter(2)
  e = f64[17] multiply(p0, p0)
  ROOT r = f64[48] concatenate(e, p1, p2), dimensions={0}
}
ENTRY e {
  x = f64[17] parameter(0)
  y = f64[1] parameter(1)
  z = f64[30] parameter(2)
  ROOT f = f64[48] fusion(x, y, z), kind=kLoop, calls=fused
})");
}

TEST(ElementalSegmentsTest, RollFeedingElementwiseSumAndMax) {
  ExpectExact(kRollReduce);
}

TEST(ElementalSegmentsTest, PaddedSplitPairBf16) { ExpectExact(kPadPair); }

TEST(ElementalSegmentsTest, PadWithInteriorAndNegativePaddingInFusion) {
  ExpectExact(R"(HloModule m
fused {
  p0 = f16[3,4] parameter(0)
  v = f16[] parameter(1)
  a = f16[3,9] pad(p0, v), padding=0_0x2_0_1
  b = f16[3,9] pad(p0, v), padding=0_0x-1_6
  ROOT r = f16[3,9] add(a, b)
}
ENTRY e {
  x = f16[3,4] parameter(0)
  y = f16[] parameter(1)
  ROOT f = f16[3,9] fusion(x, y), kind=kLoop, calls=fused
})");
}

TEST(ElementalSegmentsTest, IntegerRollWithPartialReducer) {
  // An integer max folds with partial accumulators (not split); the rolled
  // output is split.
  ExpectExact(R"(HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}
fused {
  p0 = s32[4,33] parameter(0)
  s1 = s32[4,3] slice(p0), slice={[0:4], [30:33]}
  s2 = s32[4,30] slice(p0), slice={[0:4], [0:30]}
  r = s32[4,33] concatenate(s1, s2), dimensions={1}
  m = s32[] constant(-2147483648)
  mx = s32[4] reduce(r, m), dimensions={1}, to_apply=max
  ROOT t = (s32[4], s32[4,33]) tuple(mx, r)
}
ENTRY e {
  x = s32[4,33] parameter(0)
  ROOT f = (s32[4], s32[4,33]) fusion(x), kind=kInput, calls=fused
})");
}

TEST(ElementalSegmentsTest, RangesAcrossManyTaskSplits) {
  // Every split of the range into 1..7 tasks.
  std::unique_ptr<Module> module = Parse(kConcat3);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> args = FormulaInputs(*module);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(*module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const Instruction& root = *module->entry()->root();
  for (int pieces = 1; pieces <= 7; ++pieces) {
    absl::StatusOr<std::vector<Literal>> actual =
        kernel_test::RunKernel(root, {&args[0], &args[1], &args[2]}, pieces);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(kernel_test::Mismatch((*expected)[0], (*actual)[0], 0), "") << pieces;
  }
}

}  // namespace
}  // namespace hlogym

// Shape inference of contractions, reductions, control flow, collectives
// and numeric library ops: what each infers, and rejections with messages.
#include "core/ir/shape_inference.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/shape_inference_test_util.h"

namespace hlogym {
namespace {

using ::hlogym::testing_util::InferRoot;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kAddF32[] =
    "add_f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n";

// ---- Contractions ---------------------------------------------------------

TEST(DotInferenceTest, MatmulAndBatchMatmul) {
  EXPECT_EQ(InferRoot("a = f32[8,16] parameter(0)\nb = f32[16,4] parameter(1)\n"
                      "ROOT r = f32[8,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
            "f32[8,4]");
  EXPECT_EQ(InferRoot("a = f32[2,8,16] parameter(0)\nb = f32[2,4,16] parameter(1)\n"
                      "ROOT r = f32[2,8,4] dot(a, b), lhs_batch_dims={0}, "
                      "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"),
            "f32[2,8,4]");
  // No dimension numbers: an outer product.
  EXPECT_EQ(InferRoot("a = f32[3] parameter(0)\nb = f32[5] parameter(1)\nROOT r = f32[3,5] dot(a, b)"),
            "f32[3,5]");
}

TEST(DotInferenceTest, PreferredElementType) {
  EXPECT_EQ(InferRoot("a = bf16[8,16] parameter(0)\nb = bf16[16,4] parameter(1)\n"
                      "ROOT r = f32[8,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
            "f32[8,4]");
  EXPECT_EQ(InferRoot("a = s8[8,16] parameter(0)\nb = s8[16,4] parameter(1)\n"
                      "ROOT r = s32[8,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
            "s32[8,4]");
  EXPECT_EQ(InferRoot("a = s32[8,16] parameter(0)\nb = s32[16,4] parameter(1)\n"
                      "ROOT r = s8[8,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
            "error: dot cannot produce s8 from s32 and s32 operands");
}

TEST(DotInferenceTest, RejectsContractingSizeMismatch) {
  EXPECT_EQ(InferRoot("a = f32[8,16] parameter(0)\nb = f32[15,4] parameter(1)\n"
                      "ROOT r = f32[8,4] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),
            "error: dot contracting dimensions differ in size: lhs dimension 1 of f32[8,16] and "
            "rhs dimension 0 of f32[15,4]");
  EXPECT_EQ(InferRoot("a = f32[8,16] parameter(0)\nb = f32[16,4] parameter(1)\n"
                      "ROOT r = f32[8,4] dot(a, b), lhs_contracting_dims={2}, "
                      "rhs_contracting_dims={0}"),
            "error: dot lhs batch and contracting dims {2}: dimension 2 is out of range [0, 2)");
}

TEST(ConvolutionInferenceTest, NhwcWithPaddingStrideAndGroups) {
  EXPECT_EQ(InferRoot("x = f32[8,32,32,3] parameter(0)\nk = f32[3,3,3,16] parameter(1)\n"
                      "ROOT r = f32[8,16,16,16] convolution(x, k), "
                      "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
            "f32[8,16,16,16]");
  // Depthwise: 16 groups of one input feature each.
  EXPECT_EQ(InferRoot("x = f32[1,16,10,10] parameter(0)\nk = f32[16,1,3,3] parameter(1)\n"
                      "ROOT r = f32[1,16,8,8] convolution(x, k), window={size=3x3}, "
                      "dim_labels=bf01_oi01->bf01, feature_group_count=16"),
            "f32[1,16,8,8]");
  // Dilated input (a transposed convolution's gradient form).
  EXPECT_EQ(InferRoot("x = f32[1,4,1] parameter(0)\nk = f32[3,1,1] parameter(1)\n"
                      "ROOT r = f32[1,9,1] convolution(x, k), "
                      "window={size=3 pad=2_2 lhs_dilate=2}, dim_labels=b0f_0io->b0f"),
            "f32[1,9,1]");
}

TEST(ConvolutionInferenceTest, RejectsFeatureMismatch) {
  EXPECT_EQ(InferRoot("x = f32[8,32,32,3] parameter(0)\nk = f32[3,3,4,16] parameter(1)\n"
                      "ROOT r = f32[8,30,30,16] convolution(x, k), window={size=3x3}, "
                      "dim_labels=b01f_01io->b01f"),
            "error: convolution input features (3 in f32[8,32,32,3]) divided by "
            "feature_group_count 1 must equal the kernel's input features (4 in f32[3,3,4,16])");
}

// ---- Reductions -----------------------------------------------------------

TEST(ReduceInferenceTest, SingleAndVariadic) {
  EXPECT_EQ(InferRoot("p = f32[8,4,2] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[4] reduce(p, z), dimensions={0,2}, to_apply=add_f",
                      kAddF32),
            "f32[4]");
  const char* kArgmax =
      "argmax {\n a = f32[] parameter(0)\n i = s32[] parameter(1)\n b = f32[] parameter(2)\n"
      " j = s32[] parameter(3)\n c = pred[] compare(a, b), direction=GE\n"
      " m = f32[] select(c, a, b)\n k = s32[] select(c, i, j)\n"
      " ROOT t = (f32[], s32[]) tuple(m, k)\n}\n";
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\nq = s32[8,4] parameter(1)\n"
                      "z = f32[] constant(0)\nw = s32[] constant(0)\n"
                      "ROOT r = (f32[8], s32[8]) reduce(p, q, z, w), dimensions={1}, "
                      "to_apply=argmax",
                      kArgmax),
            "(f32[8], s32[8])");
}

TEST(ReduceInferenceTest, RejectsBadReducersAndDimensions) {
  const char* kThree =
      "three {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = f32[] parameter(2)\n"
      " ROOT s = f32[] add(a, b)\n}\n";
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=three",
                      kThree),
            "error: reducer `three` must take 2 parameters, got 3");
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[] reduce(p, z), dimensions={1}, to_apply=add_f",
                      kAddF32),
            "error: reduce dimensions {1}: dimension 1 is out of range [0, 1)");
  EXPECT_EQ(InferRoot("p = s32[8] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f",
                      kAddF32),
            "error: reducer `add_f` parameter 1 must be a scalar of input 0's type (expected "
            "s32[], got f32[])");
}

TEST(ReduceWindowInferenceTest, PaddingStridesAndDilation) {
  EXPECT_EQ(InferRoot("p = f32[8,32,32,16] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[8,16,16,16] reduce-window(p, z), "
                      "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add_f",
                      kAddF32),
            "f32[8,16,16,16]");
  // A cumulative sum: pad low by size-1.
  EXPECT_EQ(InferRoot("p = f32[10] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[10] reduce-window(p, z), window={size=10 pad=9_0}, "
                      "to_apply=add_f",
                      kAddF32),
            "f32[10]");
  EXPECT_EQ(InferRoot("p = f32[10] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[3] reduce-window(p, z), window={size=2 stride=3 rhs_dilate=3}, "
                      "to_apply=add_f",
                      kAddF32),
            "f32[3]");
  EXPECT_EQ(InferRoot("p = f32[10] parameter(0)\nz = f32[] constant(0)\n"
                      "ROOT r = f32[10] reduce-window(p, z), window={size=2x2}, to_apply=add_f",
                      kAddF32),
            "error: the window has 2 dimensions but the operand f32[10] has rank 1");
}

TEST(SelectAndScatterInferenceTest, MaxPoolGradient) {
  const char* kComputations =
      "ge {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT c = pred[] compare(a, b), direction=GE\n}\n"
      "add_f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n";
  EXPECT_EQ(InferRoot("p = f32[4,4] parameter(0)\ns = f32[2,2] parameter(1)\n"
                      "z = f32[] constant(0)\n"
                      "ROOT r = f32[4,4] select-and-scatter(p, s, z), "
                      "window={size=2x2 stride=2x2}, select=ge, scatter=add_f",
                      kComputations),
            "f32[4,4]");
  EXPECT_EQ(InferRoot("p = f32[4,4] parameter(0)\ns = f32[3,3] parameter(1)\n"
                      "z = f32[] constant(0)\n"
                      "ROOT r = f32[4,4] select-and-scatter(p, s, z), "
                      "window={size=2x2 stride=2x2}, select=ge, scatter=add_f",
                      kComputations),
            "error: select-and-scatter's source must have the windowed operand's shape (expected "
            "f32[2,2], got f32[3,3])");
}

TEST(SortInferenceTest, KeysAndValues) {
  const char* kLess =
      "less {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = s32[] parameter(2)\n"
      " d = s32[] parameter(3)\n ROOT l = pred[] compare(a, b), direction=LT\n}\n";
  EXPECT_EQ(InferRoot("k = f32[4,8] parameter(0)\nv = s32[4,8] parameter(1)\n"
                      "ROOT r = (f32[4,8], s32[4,8]) sort(k, v), dimensions={1}, to_apply=less",
                      kLess),
            "(f32[4,8], s32[4,8])");
  const char* kNotPred =
      "bad {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT l = f32[] add(a, b)\n}\n";
  EXPECT_EQ(InferRoot("k = f32[8] parameter(0)\nROOT r = f32[8] sort(k), dimensions={0}, "
                      "to_apply=bad",
                      kNotPred),
            "error: comparator `bad` must return pred[], got f32[]");
}

TEST(TopKInferenceTest, ValuesAndS32Indices) {
  EXPECT_EQ(InferRoot("p = f32[4,100] parameter(0)\n"
                      "ROOT r = (f32[4,5], s32[4,5]) topk(p), k=5, largest=true"),
            "(f32[4,5], s32[4,5])");
  EXPECT_EQ(InferRoot("p = f32[4,3] parameter(0)\nROOT r = (f32[4,5], s32[4,5]) topk(p), k=5"),
            "error: topk's k=5 must be in [0, 3] for f32[4,3]");
}

TEST(ScanInferenceTest, CumulativeSumWithCarry) {
  const char* kBody =
      "body {\n x = f32[4] parameter(0)\n c = f32[4] parameter(1)\n s = f32[4] add(x, c)\n"
      " ROOT t = (f32[4], f32[4]) tuple(s, s)\n}\n";
  EXPECT_EQ(InferRoot("p = f32[4,10] parameter(0)\ni = f32[4] parameter(1)\n"
                      "ROOT r = (f32[4,10], f32[4]) scan(p, i), dimensions={1}, num_carries=1, "
                      "to_apply=body",
                      kBody),
            "(f32[4,10], f32[4])");
  EXPECT_EQ(InferRoot("p = f32[4,10] parameter(0)\ni = f32[4] parameter(1)\n"
                      "ROOT r = (f32[4,10], f32[4]) scan(p, i), dimensions={0}, num_carries=1, "
                      "to_apply=body",
                      kBody),
            "error: scan body `body` parameter 0 must be f32[10], got f32[4]");
}

// ---- Control flow and structure -------------------------------------------

constexpr char kLoop[] =
    "cond {\n s = (s32[], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " n = s32[] constant(10)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n s = (s32[], f32[4]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " x = f32[4] get-tuple-element(s), index=1\n one = s32[] constant(1)\n"
    " j = s32[] add(i, one)\n y = f32[4] add(x, x)\n ROOT t = (s32[], f32[4]) tuple(j, y)\n}\n";

TEST(ControlInferenceTest, TupleAndGetTupleElement) {
  EXPECT_EQ(InferRoot("a = f32[2] parameter(0)\nb = s32[] parameter(1)\n"
                      "ROOT t = (f32[2], s32[]) tuple(a, b)"),
            "(f32[2], s32[])");
  EXPECT_EQ(InferRoot("a = (f32[2], s32[]) parameter(0)\nROOT g = s32[] get-tuple-element(a), index=1"),
            "s32[]");
  EXPECT_EQ(InferRoot("a = (f32[2], s32[]) parameter(0)\nROOT g = s32[] get-tuple-element(a), index=2"),
            "error: get-tuple-element index 2 is out of range for (f32[2], s32[])");
}

TEST(ControlInferenceTest, WhileLoop) {
  EXPECT_EQ(InferRoot("i = s32[] constant(0)\nx = f32[4] parameter(0)\n"
                      "s = (s32[], f32[4]) tuple(i, x)\n"
                      "ROOT w = (s32[], f32[4]) while(s), condition=cond, body=body",
                      kLoop),
            "(s32[], f32[4])");
  EXPECT_EQ(InferRoot("i = s32[] constant(0)\nx = f32[5] parameter(0)\n"
                      "s = (s32[], f32[5]) tuple(i, x)\n"
                      "ROOT w = (s32[], f32[5]) while(s), condition=cond, body=body",
                      kLoop),
            "error: operand 0 does not match parameter 0 of condition computation `cond` "
            "(expected (s32[], f32[4]), got (s32[], f32[5]))");
}

TEST(ControlInferenceTest, ConditionalWithPredAndIndex) {
  const char* kBranches =
      "neg {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}\n"
      "id {\n p = f32[4] parameter(0)\n ROOT c = f32[4] copy(p)\n}\n"
      "half {\n p = f32[2] parameter(0)\n ROOT c = f32[2] copy(p)\n}\n";
  EXPECT_EQ(InferRoot("c = pred[] parameter(0)\nx = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] conditional(c, x, x), true_computation=neg, "
                      "false_computation=id",
                      kBranches),
            "f32[4]");
  EXPECT_EQ(InferRoot("c = s32[] parameter(0)\nx = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] conditional(c, x, x, x), branch_computations={neg, id, neg}",
                      kBranches),
            "f32[4]");
  EXPECT_EQ(InferRoot("c = s32[] parameter(0)\nx = f32[4] parameter(1)\ny = f32[2] parameter(2)\n"
                      "ROOT r = f32[4] conditional(c, x, y), branch_computations={neg, half}",
                      kBranches),
            "error: conditional branches must return the same shape (expected f32[4] as branch 0, "
            "got f32[2] from branch 1)");
}

TEST(ControlInferenceTest, CallAndFusionReturnTheRoot) {
  const char* kCallee =
      "f {\n a = f32[4] parameter(0)\n ROOT r = f32[4] negate(a)\n}\n"
      "fused {\n a = f32[4] parameter(0)\n ROOT r = pred[4] is-finite(a)\n}\n";
  EXPECT_EQ(InferRoot("x = f32[4] parameter(0)\nROOT c = f32[4] call(x), to_apply=f", kCallee),
            "f32[4]");
  EXPECT_EQ(InferRoot("x = f32[4] parameter(0)\nROOT c = pred[4] fusion(x), kind=kLoop, calls=fused",
                      kCallee),
            "pred[4]");
  EXPECT_EQ(InferRoot("x = f32[5] parameter(0)\nROOT c = f32[4] call(x), to_apply=f", kCallee),
            "error: operand 0 does not match parameter 0 of to_apply computation `f` (expected "
            "f32[4], got f32[5])");
}

TEST(ControlInferenceTest, DeclaredShapesForCustomCallsAndParameters) {
  EXPECT_EQ(InferRoot("a = f32[8,16] parameter(0)\n"
                      "ROOT c = (f32[8,8], s8[1024]) custom-call(a, a), "
                      "custom_call_target=\"__cublas$gemm\""),
            "(f32[8,8], s8[1024])");
  EXPECT_EQ(InferRoot("ROOT c = f32[2] constant({1, 2})"), "f32[2]");
}

TEST(ControlInferenceTest, AlternativesTokensAndAsync) {
  EXPECT_EQ(InferRoot("a = f32[4] parameter(0)\nb = f32[4] negate(a)\n"
                      "ROOT r = f32[4] alternatives(a, b)"),
            "f32[4]");
  EXPECT_EQ(InferRoot("a = f32[4] parameter(0)\nb = f32[5] parameter(1)\n"
                      "ROOT r = f32[4] alternatives(a, b)"),
            "error: alternatives candidate 1 `b` must have the original's shape (expected "
            "f32[4], got f32[5])");
  EXPECT_EQ(InferRoot("a = f32[4] parameter(0)\nt = token[] after-all()\n"
                      "ROOT r = f32[4] add-dependency(a, t)"),
            "f32[4]");
  EXPECT_EQ(InferRoot("a = f32[4] parameter(0)\nROOT r = f32[4] add-dependency(a, a)"),
            "error: add-dependency's second operand must be a token, got f32[4]");
  const char* kFused = "fused {\n a = f32[4] parameter(0)\n ROOT r = f32[4] negate(a)\n}\n";
  EXPECT_EQ(InferRoot("x = f32[4] parameter(0)\n"
                      "s = ((f32[4]), f32[4], u32[]) fusion-start(x), kind=kLoop, calls=fused\n"
                      "ROOT d = f32[4] fusion-done(s)",
                      kFused),
            "f32[4]");
}

// ---- Collectives ----------------------------------------------------------

TEST(CollectiveInferenceTest, AllReduceGatherAndScatter) {
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\n"
                      "ROOT r = f32[8] all-reduce(p), replica_groups={}, to_apply=add_f",
                      kAddF32),
            "f32[8]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\n"
                      "ROOT r = f32[32,4] all-gather(p), dimensions={0}, replica_groups={}"),
            "f32[32,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\n"
                      "ROOT r = f32[2,4] reduce-scatter(p), dimensions={0}, replica_groups={}, "
                      "to_apply=add_f",
                      kAddF32),
            "f32[2,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\n"
                      "ROOT r = f32[12,4] all-gather(p), dimensions={0}, replica_groups={}"),
            "error: all-gather result f32[12,4] must match operand f32[8,4] except for a multiple "
            "of dimension 0");
}

TEST(CollectiveInferenceTest, IdsPermutesAndHostTransfers) {
  EXPECT_EQ(InferRoot("ROOT r = u32[] partition-id()"), "u32[]");
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\n"
                      "ROOT r = f32[8] collective-permute(p), source_target_pairs={{0,1},{1,0}}"),
            "f32[8]");
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\nt = token[] after-all()\n"
                      "ROOT r = token[] outfeed(p, t)"),
            "token[]");
  EXPECT_EQ(InferRoot("p = f32[8] parameter(0)\nROOT r = token[] outfeed(p, p)"),
            "error: outfeed's operand 1 must be a token, got f32[8]");
}

// ---- Numeric library ops --------------------------------------------------

TEST(NumericInferenceTest, BatchNorm) {
  EXPECT_EQ(InferRoot("x = f32[8,4,4,16] parameter(0)\ns = f32[16] parameter(1)\n"
                      "ROOT r = (f32[8,4,4,16], f32[16], f32[16]) batch-norm-training(x, s, s), "
                      "epsilon=0.001, feature_index=3"),
            "(f32[8,4,4,16], f32[16], f32[16])");
  EXPECT_EQ(InferRoot("x = f32[8,16] parameter(0)\ns = f32[16] parameter(1)\n"
                      "ROOT r = f32[8,16] batch-norm-inference(x, s, s, s, s), epsilon=0.001, "
                      "feature_index=1"),
            "f32[8,16]");
  EXPECT_EQ(InferRoot("x = f32[8,16] parameter(0)\ns = f32[8] parameter(1)\n"
                      "ROOT r = f32[8,16] batch-norm-inference(x, s, s, s, s), epsilon=0.001, "
                      "feature_index=1"),
            "error: batch-norm-inference operand 1 must be a vector over the features (expected "
            "f32[16], got f32[8])");
}

TEST(NumericInferenceTest, FftCholeskyTriangularSolve) {
  EXPECT_EQ(InferRoot("x = f32[4,16] parameter(0)\nROOT r = c64[4,9] fft(x), fft_type=RFFT, "
                      "fft_length={16}"),
            "c64[4,9]");
  EXPECT_EQ(InferRoot("x = c64[4,9] parameter(0)\nROOT r = f32[4,16] fft(x), fft_type=IRFFT, "
                      "fft_length={16}"),
            "f32[4,16]");
  EXPECT_EQ(InferRoot("x = f32[4,15] parameter(0)\nROOT r = c64[4,9] fft(x), fft_type=RFFT, "
                      "fft_length={16}"),
            "error: RFFT's fft_length {16} must match the minor dimensions of f32[4,15]");
  EXPECT_EQ(InferRoot("a = f32[2,5,5] parameter(0)\nROOT r = f32[2,5,5] cholesky(a), lower=true"),
            "f32[2,5,5]");
  EXPECT_EQ(InferRoot("a = f32[5,5] parameter(0)\nb = f32[5,3] parameter(1)\n"
                      "ROOT r = f32[5,3] triangular-solve(a, b), left_side=true, lower=true, "
                      "transpose_a=NO_TRANSPOSE"),
            "f32[5,3]");
  EXPECT_EQ(InferRoot("a = f32[5,5] parameter(0)\nb = f32[5,3] parameter(1)\n"
                      "ROOT r = f32[5,3] triangular-solve(a, b), left_side=false, lower=true, "
                      "transpose_a=NO_TRANSPOSE"),
            "error: triangular-solve's a f32[5,5] and b f32[5,3] do not share the column "
            "dimension");
}

TEST(NumericInferenceTest, RandomNumbers) {
  EXPECT_EQ(InferRoot("a = f32[] constant(0)\nb = f32[] constant(1)\n"
                      "ROOT r = f32[3,4] rng(a, b), distribution=rng_uniform"),
            "f32[3,4]");
  EXPECT_EQ(InferRoot("a = s32[] constant(0)\nb = s32[] constant(1)\n"
                      "ROOT r = s32[3,4] rng(a, b), distribution=rng_normal"),
            "error: rng rng_normal does not support s32");
  EXPECT_EQ(InferRoot("s = u64[2] parameter(0)\n"
                      "ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default"),
            "(u64[2], u32[8])");
}

TEST(InferShapeTest, ChecksFixedOperandCounts) {
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseModule(testing_util::ModuleText("ROOT p = f32[4] parameter(0)"));
  ASSERT_TRUE(m.ok()) << m.status();
  Instruction* p = (*m)->entry()->root();
  auto add = Instruction::Create(Opcode::kAdd, p->shape(), {p, p, p});
  absl::StatusOr<Shape> shape = InferShape(*add);
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().message(), "add takes 2 operands, got 3");
  add->DetachOperands();
}

}  // namespace
}  // namespace hlogym

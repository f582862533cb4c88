// Shape inference of elementwise, data-movement, gather and scatter ops:
// what each infers, and a rejection with its message per family.
#include "core/ir/shape_inference.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/shape_inference_test_util.h"

namespace hlogym {
namespace {

using ::hlogym::testing_util::InferRoot;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- Elementwise ----------------------------------------------------------

TEST(ElementwiseInferenceTest, BinaryOpsKeepTheOperandShape) {
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\nROOT r = f32[8,4] add(p, p)"), "f32[8,4]");
  EXPECT_EQ(InferRoot("p = s32[3] parameter(0)\nROOT r = s32[3] shift-left(p, p)"), "s32[3]");
  EXPECT_EQ(InferRoot("p = pred[2] parameter(0)\nROOT r = pred[2] xor(p, p)"), "pred[2]");
}

TEST(ElementwiseInferenceTest, CompareGivesPredAndChecksItsType) {
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nROOT r = pred[4] compare(p, p), direction=LT"),
            "pred[4]");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\n"
                      "ROOT r = pred[4] compare(p, p), direction=LT, type=TOTALORDER"),
            "pred[4]");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\n"
                      "ROOT r = pred[4] compare(p, p), direction=LT, type=SIGNED"),
            "error: compare type SIGNED does not suit f32 operands");
}

TEST(ElementwiseInferenceTest, UnaryTypeRules) {
  EXPECT_EQ(InferRoot("p = f32[2] parameter(0)\nROOT r = pred[2] is-finite(p)"), "pred[2]");
  EXPECT_EQ(InferRoot("p = c64[2] parameter(0)\nROOT r = f32[2] real(p)"), "f32[2]");
  EXPECT_EQ(InferRoot("p = c128[2] parameter(0)\nROOT r = f64[2] abs(p)"), "f64[2]");
  EXPECT_EQ(InferRoot("p = s8[2] parameter(0)\nROOT r = s8[2] abs(p)"), "s8[2]");
  EXPECT_EQ(InferRoot("p = u8[2] parameter(0)\nROOT r = u8[2] abs(p)"),
            "error: abs expects signed or complex operands, got u8[2]");
  EXPECT_EQ(InferRoot("p = s32[2] parameter(0)\nROOT r = s32[2] exponential(p)"),
            "error: exponential expects floating-point or complex operands, got s32[2]");
  EXPECT_EQ(InferRoot("p = u32[2] parameter(0)\nROOT r = u32[2] popcnt(p)"), "u32[2]");
}

TEST(ElementwiseInferenceTest, ConversionsTakeTheDeclaredType) {
  EXPECT_EQ(InferRoot("p = f32[2,3] parameter(0)\nROOT r = bf16[2,3] convert(p)"), "bf16[2,3]");
  EXPECT_EQ(InferRoot("p = f32[2,3] parameter(0)\nROOT r = u32[2,3] bitcast-convert(p)"),
            "u32[2,3]");
  // Narrower types add a minor dimension; wider ones consume it.
  EXPECT_EQ(InferRoot("p = f32[2,3] parameter(0)\nROOT r = u8[2,3,4] bitcast-convert(p)"),
            "u8[2,3,4]");
  EXPECT_EQ(InferRoot("p = u16[5,2] parameter(0)\nROOT r = f32[5] bitcast-convert(p)"), "f32[5]");
  EXPECT_EQ(InferRoot("p = u16[5,3] parameter(0)\nROOT r = f32[5] bitcast-convert(p)"),
            "error: bitcast-convert from u16[5,3] to f32 needs a last dimension of 2");
  EXPECT_EQ(InferRoot("p = f32[2] parameter(0)\nROOT r = f32[2] reduce-precision(p), "
                      "exponent_bits=5, mantissa_bits=10"),
            "f32[2]");
}

TEST(ElementwiseInferenceTest, ComplexBuildsC64FromF32) {
  EXPECT_EQ(InferRoot("p = f32[3] parameter(0)\nROOT r = c64[3] complex(p, p)"), "c64[3]");
  EXPECT_EQ(InferRoot("p = f64[3] parameter(0)\nROOT r = c128[3] complex(p, p)"), "c128[3]");
}

TEST(ElementwiseInferenceTest, SelectTakesAScalarOrFullPredicate) {
  EXPECT_EQ(InferRoot("c = pred[4] parameter(0)\np = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] select(c, p, p)"),
            "f32[4]");
  EXPECT_EQ(InferRoot("c = pred[] parameter(0)\np = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] select(c, p, p)"),
            "f32[4]");
  EXPECT_EQ(InferRoot("c = s32[4] parameter(0)\np = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] select(c, p, p)"),
            "error: select's predicate must be pred, got s32[4]");
  EXPECT_EQ(InferRoot("c = pred[3] parameter(0)\np = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] select(c, p, p)"),
            "error: select's predicate must be a scalar or match the branches (expected pred[4], "
            "got pred[3])");
}

TEST(ElementwiseInferenceTest, ClampAllowsScalarBounds) {
  EXPECT_EQ(InferRoot("lo = f32[] parameter(0)\np = f32[4] parameter(1)\n"
                      "ROOT r = f32[4] clamp(lo, p, lo)"),
            "f32[4]");
  EXPECT_THAT(InferRoot("lo = f32[2] parameter(0)\np = f32[4] parameter(1)\n"
                        "ROOT r = f32[4] clamp(lo, p, lo)"),
              StartsWith("error: clamp's bounds must be scalars or match the operand's shape"));
}

TEST(ElementwiseInferenceTest, RejectsDifferentDimsAndTypes) {
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nq = f32[8] parameter(1)\n"
                      "ROOT r = f32[4] add(p, q)"),
            "error: add operands must have the same dimensions, got f32[4] and f32[8]");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nq = bf16[4] parameter(1)\n"
                      "ROOT r = f32[4] multiply(p, q)"),
            "error: multiply operands must have the same element type, got f32[4] and bf16[4]");
  EXPECT_EQ(InferRoot("p = pred[4] parameter(0)\nROOT r = pred[4] subtract(p, p)"),
            "error: subtract expects numeric operands, got pred[4]");
}

TEST(ElementwiseInferenceTest, MapChecksItsComputation) {
  const char* kAdd = "add_f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
                     " ROOT s = f32[] add(a, b)\n}\n";
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nROOT r = f32[4] map(p, p), dimensions={0}, "
                      "to_apply=add_f",
                      kAdd),
            "f32[4]");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nROOT r = f32[4] map(p), dimensions={0}, "
                      "to_apply=add_f",
                      kAdd),
            "error: map computation `add_f` takes 2 parameters but is given 1 operands");
}

TEST(ElementwiseInferenceTest, ShapesLeftOutOfTheTextAreInferred) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(testing_util::ModuleText(
      "p = f32[2,3] parameter(0)\nc = compare(p, p), direction=GT\nROOT r = select(c, p, p)"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->entry()->root()->shape().ToString(), "f32[2,3]{1,0}");
}

// ---- Data movement --------------------------------------------------------

TEST(DataMovementInferenceTest, BroadcastMapsOperandDims) {
  EXPECT_EQ(InferRoot("p = f32[3] parameter(0)\nROOT r = f32[2,3,4] broadcast(p), dimensions={1}"),
            "f32[2,3,4]");
  EXPECT_EQ(InferRoot("p = f32[] parameter(0)\nROOT r = f32[5] broadcast(p), dimensions={}"),
            "f32[5]");
  EXPECT_EQ(InferRoot("p = f32[3] parameter(0)\nROOT r = f32[2,3] broadcast(p), dimensions={0}"),
            "error: broadcast operand dimension 0 of f32[3] maps to result dimension 0 of "
            "f32[2,3] but their sizes differ");
  EXPECT_EQ(InferRoot("p = f32[3] parameter(0)\nROOT r = f32[3,3] broadcast(p), dimensions={2}"),
            "error: broadcast dimensions {2}: dimension 2 is out of range [0, 2)");
}

TEST(DataMovementInferenceTest, ReshapeKeepsTheElementCount) {
  EXPECT_EQ(InferRoot("p = f32[2,6] parameter(0)\nROOT r = f32[3,4] reshape(p)"), "f32[3,4]");
  EXPECT_EQ(InferRoot("p = f32[2,6] parameter(0)\nROOT r = f32[3,5] reshape(p)"),
            "error: reshape must keep the element count (expected 12 elements as in f32[2,6], "
            "got 15 in f32[3,5])");
}

TEST(DataMovementInferenceTest, TransposePermutes) {
  EXPECT_EQ(InferRoot("p = f32[2,3,4] parameter(0)\n"
                      "ROOT r = f32[4,2,3] transpose(p), dimensions={2,0,1}"),
            "f32[4,2,3]");
  EXPECT_EQ(InferRoot("p = f32[2,3] parameter(0)\nROOT r = f32[3,2] transpose(p), dimensions={0,0}"),
            "error: transpose dimensions {0,0}: dimension 0 appears twice");
}

TEST(DataMovementInferenceTest, SliceWithStrides) {
  EXPECT_EQ(InferRoot("p = f32[10,8] parameter(0)\n"
                      "ROOT r = f32[4,8] slice(p), slice={[1:9:2], [0:8]}"),
            "f32[4,8]");
  EXPECT_EQ(InferRoot("p = f32[10] parameter(0)\nROOT r = f32[3] slice(p), slice={[8:11]}"),
            "error: slice dimension 0 [8:11:1] is out of bounds for f32[10] (needs 0 <= start <= "
            "limit <= size and stride > 0)");
}

TEST(DataMovementInferenceTest, DynamicSliceTakesScalarOrVectorIndices) {
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\ni = s32[] parameter(1)\n"
                      "ROOT r = f32[2,4] dynamic-slice(p, i, i), dynamic_slice_sizes={2,4}"),
            "f32[2,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\nv = s32[2] parameter(1)\n"
                      "ROOT r = f32[2,4] dynamic-slice(p, v), dynamic_slice_sizes={2,4}"),
            "f32[2,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\ni = s32[] parameter(1)\n"
                      "ROOT r = f32[2,5] dynamic-slice(p, i, i), dynamic_slice_sizes={2,5}"),
            "error: dynamic_slice_sizes {2,5}: size 5 does not fit dimension 1 of f32[8,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\ni = f32[] parameter(1)\n"
                      "ROOT r = f32[2,4] dynamic-slice(p, i, i), dynamic_slice_sizes={2,4}"),
            "error: dynamic-slice's start indices must be integer scalars of one type, operand 1 "
            "is f32[]");
}

TEST(DataMovementInferenceTest, DynamicUpdateSliceKeepsTheOperand) {
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\nu = f32[2,4] parameter(1)\n"
                      "i = s32[] parameter(2)\nROOT r = f32[8,4] dynamic-update-slice(p, u, i, i)"),
            "f32[8,4]");
  EXPECT_EQ(InferRoot("p = f32[8,4] parameter(0)\nu = f32[9,4] parameter(1)\n"
                      "i = s32[] parameter(2)\nROOT r = f32[8,4] dynamic-update-slice(p, u, i, i)"),
            "error: dynamic-update-slice's update f32[9,4] does not fit in f32[8,4] along "
            "dimension 0");
}

TEST(DataMovementInferenceTest, ConcatenateSumsOneDimension) {
  EXPECT_EQ(InferRoot("a = f32[2,3] parameter(0)\nb = f32[5,3] parameter(1)\n"
                      "ROOT r = f32[7,3] concatenate(a, b), dimensions={0}"),
            "f32[7,3]");
  EXPECT_EQ(InferRoot("a = f32[2,3] parameter(0)\nb = f32[5,4] parameter(1)\n"
                      "ROOT r = f32[7,3] concatenate(a, b), dimensions={0}"),
            "error: concatenate operands must match except in dimension 0, got f32[2,3] and "
            "f32[5,4]");
}

TEST(DataMovementInferenceTest, PadWithNegativeAndInteriorPadding) {
  EXPECT_EQ(InferRoot("p = f32[4,5] parameter(0)\nz = f32[] parameter(1)\n"
                      "ROOT r = f32[8,4] pad(p, z), padding=1_0_1x-1_0"),
            "f32[8,4]");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nz = s32[] parameter(1)\n"
                      "ROOT r = f32[4] pad(p, z), padding=0_0"),
            "error: pad's padding value must be a scalar of the operand's type (expected f32[], "
            "got s32[])");
  EXPECT_EQ(InferRoot("p = f32[4] parameter(0)\nz = f32[] parameter(1)\n"
                      "ROOT r = f32[4] pad(p, z), padding=-3_-3"),
            "error: pad dimension 0 of f32[4] with padding -3_-3_0 gives a negative or "
            "overflowing size");
}

TEST(DataMovementInferenceTest, ReverseIotaBitcastAndDimensionSizes) {
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\nROOT r = f32[4,2] reverse(p), dimensions={0,1}"),
            "f32[4,2]");
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\nROOT r = f32[4,2] reverse(p), dimensions={1,1}"),
            "error: reverse dimensions {1,1}: dimension 1 appears twice");
  EXPECT_EQ(InferRoot("ROOT r = s32[3,4] iota(), iota_dimension=1"), "s32[3,4]");
  EXPECT_EQ(InferRoot("ROOT r = s32[3,4] iota(), iota_dimension=2"),
            "error: iota_dimension 2 is out of range for s32[3,4]");
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\nROOT r = u32[8]{0} bitcast(p)"), "u32[8]");
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\nROOT r = f16[8] bitcast(p)"),
            "error: bitcast must keep the buffer size (expected 32 bytes as in f32[4,2], got 16 "
            "in f16[8])");
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\nROOT r = s32[] get-dimension-size(p), "
                      "dimensions={1}"),
            "s32[]");
  EXPECT_EQ(InferRoot("p = f32[4,2] parameter(0)\ns = s32[] parameter(1)\n"
                      "ROOT r = f32[<=4,2] set-dimension-size(p, s), dimensions={0}"),
            "f32[<=4,2]");
}

// ---- Gather and scatter ---------------------------------------------------

TEST(GatherInferenceTest, EmbeddingLookup) {
  // Rows of a [1000,64] table at [8,16] indices.
  EXPECT_EQ(InferRoot("t = f32[1000,64] parameter(0)\ni = s32[8,16,1] parameter(1)\n"
                      "ROOT r = f32[8,16,64] gather(t, i), offset_dims={2}, "
                      "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
                      "slice_sizes={1,64}"),
            "f32[8,16,64]");
  // index_vector_dim == rank: each index is a scalar.
  EXPECT_EQ(InferRoot("t = f32[1000,64] parameter(0)\ni = s32[8] parameter(1)\n"
                      "ROOT r = f32[8,64] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}"),
            "f32[8,64]");
}

TEST(GatherInferenceTest, BatchingDimensions) {
  EXPECT_EQ(InferRoot("t = f32[4,100,8] parameter(0)\ni = s32[4,5,1] parameter(1)\n"
                      "ROOT r = f32[4,5,8] gather(t, i), offset_dims={2}, collapsed_slice_dims={1}, "
                      "start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,8}, "
                      "operand_batching_dims={0}, start_indices_batching_dims={0}"),
            "f32[4,5,8]");
}

TEST(GatherInferenceTest, RejectsBadSliceSizes) {
  EXPECT_EQ(InferRoot("t = f32[10,64] parameter(0)\ni = s32[8,1] parameter(1)\n"
                      "ROOT r = f32[8,65] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,65}"),
            "error: slice_sizes {1,65}: size 65 does not fit dimension 1 of f32[10,64]");
  EXPECT_EQ(InferRoot("t = f32[10,64] parameter(0)\ni = f32[8,1] parameter(1)\n"
                      "ROOT r = f32[8,64] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}"),
            "error: the indices must be integers, got f32[8,1]");
}

constexpr char kAddF32[] =
    "add_f {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n";

TEST(ScatterInferenceTest, ScatterAddRows) {
  EXPECT_EQ(InferRoot("t = f32[100,64] parameter(0)\ni = s32[8,1] parameter(1)\n"
                      "u = f32[8,64] parameter(2)\n"
                      "ROOT r = f32[100,64] scatter(t, i, u), update_window_dims={1}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=add_f",
                      kAddF32),
            "f32[100,64]");
}

TEST(ScatterInferenceTest, VariadicScatterGivesATuple) {
  const char* kPair =
      "pair {\n a = f32[] parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n"
      " d = s32[] parameter(3)\n ROOT t = (f32[], s32[]) tuple(c, d)\n}\n";
  EXPECT_EQ(InferRoot("t = f32[10] parameter(0)\ns = s32[10] parameter(1)\n"
                      "i = s32[3,1] parameter(2)\nu = f32[3] parameter(3)\nv = s32[3] parameter(4)\n"
                      "ROOT r = (f32[10], s32[10]) scatter(t, s, i, u, v), update_window_dims={}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=pair",
                      kPair),
            "(f32[10], s32[10])");
}

TEST(ScatterInferenceTest, RejectsAReducerOfTheWrongType) {
  const char* kAddS32 =
      "add_s {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n";
  EXPECT_EQ(InferRoot("t = f32[100,64] parameter(0)\ni = s32[8,1] parameter(1)\n"
                      "u = f32[8,64] parameter(2)\n"
                      "ROOT r = f32[100,64] scatter(t, i, u), update_window_dims={1}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=add_s",
                      kAddS32),
            "error: reducer `add_s` result 0 must match init value 0 (expected f32[], got s32[])");
  EXPECT_EQ(InferRoot("t = f32[100,64] parameter(0)\ni = s32[8,1] parameter(1)\n"
                      "u = f32[9,64] parameter(2)\n"
                      "ROOT r = f32[100,64] scatter(t, i, u), update_window_dims={1}, "
                      "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                      "index_vector_dim=1, to_apply=add_f",
                      kAddF32),
            "error: scatter update dimension 0 of f32[9,64] must match indices dimension 0 (8)");
}

}  // namespace
}  // namespace hlogym

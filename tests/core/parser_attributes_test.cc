// One small module per attribute form, asserting where each attribute lands
// in the typed IR (attributes.h, dimensions(), index, called computations).
#include <string>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::FindInstruction;
using testing_util::RawValue;

// A module with scalar reducers `add` and `lt`, parameters declared by
// `params` (one per line) and `body` as the rest of the entry computation.
std::string Module(const std::string& params, const std::string& body) {
  return R"(HloModule attrs
add {
  add_lhs = f32[] parameter(0)
  add_rhs = f32[] parameter(1)
  ROOT add_sum = f32[] add(add_lhs, add_rhs)
}
lt {
  lt_lhs = f32[] parameter(0)
  lt_rhs = f32[] parameter(1)
  ROOT lt_less = pred[] compare(lt_lhs, lt_rhs), direction=LT
}
ENTRY e {
)" + params +
         "\n" + body + "\n}\n";
}

TEST(ParserAttributesTest, IotaDimension) {
  HLOGYM_PARSE_OR_FAIL(m, Module("", "ROOT i = s32[4,8]{1,0} iota(), iota_dimension=1"));
  EXPECT_EQ(m->entry()->root()->iota_dimension(), 1);
  EXPECT_EQ(m->entry()->root()->operand_count(), 0);
}

TEST(ParserAttributesTest, CompareDirectionTypeAndOrder) {
  HLOGYM_PARSE_OR_FAIL(m, Module("x = f32[4]{0} parameter(0)\ny = f32[4]{0} parameter(1)",
                                 "c1 = pred[4]{0} compare(x, y), direction=GE\n"
                                 "c2 = pred[4]{0} compare(x, y), direction=NE, type=TOTALORDER\n"
                                 "ROOT c3 = pred[4]{0} compare(x, y), direction=LT, order=TOTAL"));
  const Instruction* c1 = FindInstruction(*m, "c1");
  EXPECT_EQ(c1->comparison_direction(), ComparisonDirection::kGe);
  EXPECT_EQ(c1->attrs<CompareAttrs>().type, ComparisonType::kDefault);
  const Instruction* c2 = FindInstruction(*m, "c2");
  EXPECT_EQ(c2->comparison_direction(), ComparisonDirection::kNe);
  EXPECT_EQ(c2->attrs<CompareAttrs>().type, ComparisonType::kTotalOrder);
  const Instruction* c3 = FindInstruction(*m, "c3");
  EXPECT_EQ(c3->attrs<CompareAttrs>().type, ComparisonType::kTotalOrder);
  EXPECT_EQ(RawValue(*c3, "order"), "TOTAL");  // kept so it prints back
}

TEST(ParserAttributesTest, DimensionsOnShapeOps) {
  HLOGYM_PARSE_OR_FAIL(m,
                       Module("x = f32[2,3]{1,0} parameter(0)\ns = f32[] parameter(1)",
                              "b = f32[4,2,3]{2,1,0} broadcast(x), dimensions={1,2}\n"
                              "bs = f32[5]{0} broadcast(s)\n"
                              "t = f32[3,2]{1,0} transpose(x), dimensions={1,0}\n"
                              "r = f32[2,3]{1,0} reverse(x), dimensions={0}\n"
                              "c = f32[4,3]{1,0} concatenate(x, x), dimensions={0}\n"
                              "g = s32[] get-dimension-size(x), dimensions={1}\n"
                              "ROOT red = f32[2]{0} reduce(x, s), dimensions={1}, to_apply=add"));
  EXPECT_EQ(FindInstruction(*m, "b")->dimensions(), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(FindInstruction(*m, "bs")->dimensions().empty());
  EXPECT_EQ(FindInstruction(*m, "t")->dimensions(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(FindInstruction(*m, "r")->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(FindInstruction(*m, "c")->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(FindInstruction(*m, "g")->dimensions(), (std::vector<int64_t>{1}));
  const Instruction* red = m->entry()->root();
  EXPECT_EQ(red->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(red->to_apply()->name(), "add");
}

TEST(ParserAttributesTest, SliceDynamicSliceAndPad) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[8,9]{1,0} parameter(0)\ni = s32[] parameter(1)\nz = f32[] parameter(2)",
                "s = f32[4,3]{1,0} slice(x), slice={[0:8:2], [1:7:2]}\n"
                "s1 = f32[2,9]{1,0} slice(x), slice={[2:4], [0:9]}\n"
                "d = f32[2,3]{1,0} dynamic-slice(x, i, i), dynamic_slice_sizes={2,3}\n"
                "ROOT p = f32[10,16]{1,0} pad(x, z), padding=1_1x-1_0_1"));
  const SliceAttrs& s = FindInstruction(*m, "s")->attrs<SliceAttrs>();
  EXPECT_EQ(s.starts, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(s.limits, (std::vector<int64_t>{8, 7}));
  EXPECT_EQ(s.strides, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(FindInstruction(*m, "s1")->attrs<SliceAttrs>().strides, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(FindInstruction(*m, "d")->attrs<DynamicSliceAttrs>().sizes,
            (std::vector<int64_t>{2, 3}));
  const PadAttrs& p = m->entry()->root()->attrs<PadAttrs>();
  ASSERT_EQ(p.padding.size(), 2u);
  EXPECT_EQ(p.padding[0], (PaddingDimension{1, 1, 0}));
  EXPECT_EQ(p.padding[1], (PaddingDimension{-1, 0, 1}));
}

TEST(ParserAttributesTest, ReduceWindowWithEveryWindowField) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[8,8]{1,0} parameter(0)\nz = f32[] parameter(1)",
                "ROOT rw = f32[4,9]{1,0} reduce-window(x, z), window={size=2x3 stride=2x1 "
                "pad=0_1x-1_2 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}, to_apply=add"));
  const Instruction* rw = m->entry()->root();
  const Window& w = rw->attrs<WindowAttrs>().window;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], (WindowDimension{2, 2, 0, 1, 1, 3, false}));
  EXPECT_EQ(w[1], (WindowDimension{3, 1, -1, 2, 2, 1, true}));
  EXPECT_EQ(rw->to_apply()->name(), "add");
}

TEST(ParserAttributesTest, SelectAndScatterCallsSelectThenScatter) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4]{0} parameter(0)\nsrc = f32[2]{0} parameter(1)\nz = f32[] parameter(2)",
                "ROOT ss = f32[4]{0} select-and-scatter(x, src, z), window={size=2 stride=2}, "
                "scatter=add, select=lt"));
  const Instruction* ss = m->entry()->root();
  ASSERT_EQ(ss->called_computations().size(), 2u);
  EXPECT_EQ(ss->called_computations()[0]->name(), "lt");
  EXPECT_EQ(ss->called_computations()[1]->name(), "add");
  EXPECT_EQ(ss->attrs<WindowAttrs>().window[0].stride, 2);
}

TEST(ParserAttributesTest, DotDimensionsPrecisionAndAlgorithm) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("a = f32[2,3,4]{2,1,0} parameter(0)\nb = f32[2,4,5]{2,1,0} parameter(1)",
                "ROOT d = f32[2,3,5]{2,1,0} dot(a, b), lhs_batch_dims={0}, "
                "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
                "operand_precision={highest,DEFAULT}, algorithm=dot_bf16_bf16_f32"));
  const DotAttrs& d = m->entry()->root()->attrs<DotAttrs>();
  EXPECT_EQ(d.dims.lhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.dims.lhs_contracting, (std::vector<int64_t>{2}));
  EXPECT_EQ(d.dims.rhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(d.dims.rhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(d.precision, (std::vector<Precision>{Precision::kHighest, Precision::kDefault}));
  EXPECT_EQ(d.algorithm, "dot_bf16_bf16_f32");
}

TEST(ParserAttributesTest, ConvolutionDimLabelsAndGroups) {
  HLOGYM_PARSE_OR_FAIL(
      m,
      Module("x = f32[2,16,10,10]{3,2,1,0} parameter(0)\nk = f32[3,3,8,32]{3,2,1,0} parameter(1)",
             "ROOT c = f32[2,32,5,5]{3,2,1,0} convolution(x, k), window={size=3x3 "
             "stride=2x2 pad=1_1x1_1}, dim_labels=bf01_01io->bf10, feature_group_count=2, "
             "batch_group_count=1, operand_precision={high,high}"));
  const ConvolutionAttrs& c = m->entry()->root()->attrs<ConvolutionAttrs>();
  EXPECT_EQ(c.dims.input_batch, 0);
  EXPECT_EQ(c.dims.input_feature, 1);
  EXPECT_EQ(c.dims.input_spatial, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.dims.kernel_input_feature, 2);
  EXPECT_EQ(c.dims.kernel_output_feature, 3);
  EXPECT_EQ(c.dims.kernel_spatial, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c.dims.output_batch, 0);
  EXPECT_EQ(c.dims.output_feature, 1);
  EXPECT_EQ(c.dims.output_spatial, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(c.feature_group_count, 2);
  EXPECT_EQ(c.batch_group_count, 1);
  ASSERT_EQ(c.window.size(), 2u);
  EXPECT_EQ(c.window[1], (WindowDimension{3, 2, 1, 1, 1, 1, false}));
  EXPECT_EQ(c.precision, (std::vector<Precision>{Precision::kHigh, Precision::kHigh}));
}

TEST(ParserAttributesTest, GatherDimensions) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4,5,6]{2,1,0} parameter(0)\ni = s32[4,3,1]{2,1,0} parameter(1)",
                "ROOT g = f32[4,3,6]{2,1,0} gather(x, i), offset_dims={2}, "
                "collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
                "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,6}, "
                "indices_are_sorted=true"));
  const GatherAttrs& g = m->entry()->root()->attrs<GatherAttrs>();
  EXPECT_EQ(g.dims.offset_dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.dims.collapsed_slice_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.dims.start_index_map, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.dims.operand_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.dims.start_indices_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.dims.index_vector_dim, 2);
  EXPECT_EQ(g.slice_sizes, (std::vector<int64_t>{1, 1, 6}));
  EXPECT_TRUE(g.indices_are_sorted);
}

TEST(ParserAttributesTest, ScatterDimensions) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4,5]{1,0} parameter(0)\ni = s32[4,2,1]{2,1,0} parameter(1)\n"
                "u = f32[4,2]{1,0} parameter(2)",
                "ROOT s = f32[4,5]{1,0} scatter(x, i, u), update_window_dims={}, "
                "inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
                "input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                "index_vector_dim=2, indices_are_sorted=true, unique_indices=true, to_apply=add"));
  const Instruction* s = m->entry()->root();
  const ScatterAttrs& a = s->attrs<ScatterAttrs>();
  EXPECT_TRUE(a.dims.update_window_dims.empty());
  EXPECT_EQ(a.dims.inserted_window_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(a.dims.scatter_dims_to_operand_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(a.dims.input_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(a.dims.scatter_indices_batching_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(a.dims.index_vector_dim, 2);
  EXPECT_TRUE(a.indices_are_sorted);
  EXPECT_TRUE(a.unique_indices);
  EXPECT_EQ(s->to_apply()->name(), "add");
}

TEST(ParserAttributesTest, SortTopKMapAndScan) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4,8]{1,0} parameter(0)\ny = f32[4,8]{1,0} parameter(1)\n"
                "init = f32[4]{0} parameter(2)",
                "s = f32[4,8]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt\n"
                "t = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(x), k=2, largest=false\n"
                "mp = f32[4,8]{1,0} map(x, y), dimensions={0,1}, to_apply=add\n"
                "ROOT sc = (f32[4,8]{1,0}, f32[4]{0}) scan(x, init), dimensions={1}, "
                "num_carries=1, is_reverse=true, is_associative=true, to_apply=add"));
  const Instruction* s = FindInstruction(*m, "s");
  EXPECT_EQ(s->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_TRUE(s->attrs<SortAttrs>().is_stable);
  EXPECT_EQ(s->to_apply()->name(), "lt");
  const TopKAttrs& t = FindInstruction(*m, "t")->attrs<TopKAttrs>();
  EXPECT_EQ(t.k, 2);
  EXPECT_FALSE(t.largest);
  const Instruction* mp = FindInstruction(*m, "mp");
  EXPECT_EQ(mp->dimensions(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(mp->to_apply()->name(), "add");
  const Instruction* sc = m->entry()->root();
  EXPECT_EQ(sc->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(sc->attrs<ScanAttrs>(), (ScanAttrs{1, true, true}));
}

TEST(ParserAttributesTest, TopKDefaultsToLargestAndKeepsOtherAttrsRaw) {
  HLOGYM_PARSE_OR_FAIL(m, Module("x = f32[16]{0} parameter(0)",
                                 "ROOT t = (f32[4]{0}, s32[4]{0}) topk(x), k=4, is_stable=true"));
  EXPECT_TRUE(m->entry()->root()->attrs<TopKAttrs>().largest);
  EXPECT_EQ(RawValue(*m->entry()->root(), "is_stable"), "true");
}

TEST(ParserAttributesTest, GetTupleElementIndexAndParameterNumber) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("p = (f32[], s32[]) parameter(0)", "ROOT g = s32[] get-tuple-element(p), index=1"));
  EXPECT_EQ(m->entry()->root()->tuple_index(), 1);
  EXPECT_EQ(m->entry()->parameter(0)->parameter_number(), 0);
}

TEST(ParserAttributesTest, WhileConditionThenBody) {
  HLOGYM_PARSE_OR_FAIL(m, R"(HloModule w
cond {
  s = (f32[], f32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT s = (f32[], f32[]) parameter(0)
}
ENTRY e {
  st = (f32[], f32[]) parameter(0)
  x = f32[] get-tuple-element(st), index=0
  c = f32[] call(x), to_apply={
    ROOT q = f32[] parameter(0)
  }, is_composite=true
  ROOT w = (f32[], f32[]) while(st), body=body, condition=cond
})");
  const Instruction* w = m->entry()->root();
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  const Instruction* c = FindInstruction(*m, "c");
  EXPECT_EQ(c->to_apply()->name(), "c.to_apply");
  EXPECT_EQ(RawValue(*c, "is_composite"), "true");
}

TEST(ParserAttributesTest, FusionKindCallsAndFusedComputation) {
  HLOGYM_PARSE_OR_FAIL(m, R"(HloModule f
fused {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT m = f32[4]{0} multiply(p0, p1)
}
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  ROOT f = f32[4]{0} fusion(a, b), kind=kOutput, calls=fused, output_to_operand_aliasing={{}: (0, {})}
})");
  const Instruction* f = m->entry()->root();
  EXPECT_EQ(f->fusion_kind(), FusionKind::kOutput);
  EXPECT_EQ(f->fused_computation()->name(), "fused");
  EXPECT_TRUE(f->fused_computation()->IsFusionComputation());
  EXPECT_EQ(f->fused_computation()->fusion_instruction(), f);
  EXPECT_EQ(RawValue(*f, "output_to_operand_aliasing"), "{{}: (0, {})}");
}

TEST(ParserAttributesTest, CustomCallTargetAndCalledComputations) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4]{0} parameter(0)",
                "c1 = f32[4]{0} custom-call(x), custom_call_target=\"foo\\tbar\", "
                "called_computations={add, lt}, api_version=API_VERSION_TYPED_FFI\n"
                "ROOT c2 = f32[] custom-call(x), custom_call_target=\"reduce\", to_apply=add, "
                "window={size=2}, dim_labels=b0f_0io->b0f, literal=s32[2]{0} {1, 2}"));
  const Instruction* c1 = FindInstruction(*m, "c1");
  EXPECT_EQ(c1->custom_call_target(), "foo\tbar");
  ASSERT_EQ(c1->called_computations().size(), 2u);
  EXPECT_EQ(c1->called_computations()[1]->name(), "lt");
  EXPECT_EQ(RawValue(*c1, "api_version"), "API_VERSION_TYPED_FFI");
  const Instruction* c2 = m->entry()->root();
  EXPECT_EQ(c2->to_apply()->name(), "add");
  // Custom-call's window/dim_labels/literal are kept verbatim.
  EXPECT_EQ(RawValue(*c2, "window"), "{size=2}");
  EXPECT_EQ(RawValue(*c2, "dim_labels"), "b0f_0io->b0f");
  EXPECT_EQ(RawValue(*c2, "literal"), "s32[2]{0} {1, 2}");
}

TEST(ParserAttributesTest, BatchNormFftReducePrecisionRng) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[2,4]{1,0} parameter(0)\ns = f32[4]{0} parameter(1)\n"
                "c = c64[8]{0} parameter(2)\nlo = f32[] parameter(3)\n"
                "st = u32[4]{0} parameter(4)",
                "bn = (f32[2,4]{1,0}, f32[4]{0}, f32[4]{0}) batch-norm-training(x, s, s), "
                "epsilon=0.001, feature_index=1\n"
                "ft = c64[8]{0} fft(c), fft_type=IFFT, fft_length={8}\n"
                "rp = f32[2,4]{1,0} reduce-precision(x), exponent_bits=5, mantissa_bits=10\n"
                "r = f32[3]{0} rng(lo, lo), distribution=rng_normal\n"
                "rb = (u32[4]{0}, u32[8]{0}) rng-bit-generator(st), algorithm=rng_three_fry\n"
                "ROOT rs = u64[] rng-get-and-update-state(), delta=4"));
  const BatchNormAttrs& bn = FindInstruction(*m, "bn")->attrs<BatchNormAttrs>();
  EXPECT_DOUBLE_EQ(bn.epsilon, 0.001);
  EXPECT_EQ(bn.feature_index, 1);
  const FftAttrs& ft = FindInstruction(*m, "ft")->attrs<FftAttrs>();
  EXPECT_EQ(ft.type, FftType::kIfft);
  EXPECT_EQ(ft.length, (std::vector<int64_t>{8}));
  EXPECT_EQ(FindInstruction(*m, "rp")->attrs<ReducePrecisionAttrs>(),
            (ReducePrecisionAttrs{5, 10}));
  EXPECT_EQ(FindInstruction(*m, "r")->attrs<RngAttrs>().distribution, RngDistribution::kNormal);
  EXPECT_EQ(FindInstruction(*m, "rb")->attrs<RngBitGeneratorAttrs>().algorithm,
            RngAlgorithm::kThreeFry);
  EXPECT_EQ(RawValue(*m->entry()->root(), "delta"), "4");
}

TEST(ParserAttributesTest, Collectives) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[8]{0} parameter(0)",
                "rs = f32[2]{0} reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0}, "
                "to_apply=add\n"
                "ag = f32[32]{0} all-gather(x), replica_groups={}, dimensions={0}, "
                "constrain_layout=true\n"
                "a2a = f32[8]{0} all-to-all(x), replica_groups={{0,1}}, dimensions={0}\n"
                "ROOT ar = f32[8]{0} all-reduce(x), to_apply=add"));
  const Instruction* rs = FindInstruction(*m, "rs");
  EXPECT_EQ(rs->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(rs->to_apply()->name(), "add");
  EXPECT_EQ(RawValue(*rs, "replica_groups"), "{{0,1,2,3}}");
  const Instruction* ag = FindInstruction(*m, "ag");
  EXPECT_EQ(ag->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(RawValue(*ag, "constrain_layout"), "true");
  // all-to-all's split dimension is not modeled: verbatim.
  const Instruction* a2a = FindInstruction(*m, "a2a");
  EXPECT_TRUE(a2a->dimensions().empty());
  EXPECT_EQ(RawValue(*a2a, "dimensions"), "{0}");
  EXPECT_EQ(m->entry()->root()->to_apply()->name(), "add");
}

TEST(ParserAttributesTest, TriangularSolveAndCholeskyOptionsStayRaw) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("a = f32[4,4]{1,0} parameter(0)\nb = f32[4,2]{1,0} parameter(1)",
                "t = f32[4,2]{1,0} triangular-solve(a, b), left_side=true, lower=true, "
                "unit_diagonal=false, transpose_a=NO_TRANSPOSE\n"
                "ROOT c = f32[4,4]{1,0} cholesky(a), lower=true"));
  const auto& raw = FindInstruction(*m, "t")->raw_attributes();
  ASSERT_EQ(raw.size(), 4u);
  EXPECT_EQ(raw[3], (RawAttribute{"transpose_a", "NO_TRANSPOSE"}));
  EXPECT_EQ(RawValue(*m->entry()->root(), "lower"), "true");
}

TEST(ParserAttributesTest, DomainAndReshapeAttributesStayRaw) {
  HLOGYM_PARSE_OR_FAIL(
      m, Module("x = f32[4]{0} parameter(0)",
                "d = f32[4]{0} domain(x), domain={kind=\"sharding\", entry={maximal device=0}, "
                "exit={replicated}}\n"
                "ROOT r = f32[2,2]{1,0} reshape(d), inferred_dimension=0"));
  EXPECT_EQ(RawValue(*FindInstruction(*m, "d"), "domain"),
            R"({kind="sharding", entry={maximal device=0}, exit={replicated}})");
  EXPECT_EQ(RawValue(*m->entry()->root(), "inferred_dimension"), "0");
}

}  // namespace
}  // namespace hlogym

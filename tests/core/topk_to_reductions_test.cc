// topk-to-reductions: every topk it lowers computes what it computed
// (reference interpreter, whose topk orders floats in total order with NaN
// above +inf and ties to the lower index): the corpus's topk, and
// hand-written ones with ties, NaNs, signed zeros, smallest-first, integers,
// narrow floats, more than two dimensions and k equal to the row; the ones
// it leaves say why.

#include "core/passes/topk_to_reductions.h"

#include "core/eval/equivalence.h"
#include "core/rewrite/pass.h"
#include "gtest/gtest.h"
#include "tests/core/lowering_test_util.h"
#include "tests/core/simplification_test_util.h"

namespace hlogym {
namespace {

using lowering_test::LoadSmallTwin;
using lowering_test::LowerAndCompare;
using simplification_test::CountOpcode;
using simplification_test::EntryModule;
using simplification_test::Parse;

// "" when every topk of `original` was lowered and the result computes
// exactly what `original` computes (a pick copies its element).
std::string LowerAndCheck(const Module& original) {
  TopKToReductionsPass pass;
  EquivalenceOptions exact;
  exact.rtol = exact.atol = exact.narrow_tolerance = 0;
  std::unique_ptr<Module> module;
  const std::string why = LowerAndCompare(pass, original, &module, exact);
  if (!why.empty()) return why;
  return CountOpcode(*module, Opcode::kTopK) == 0 ? "" : "a topk is left";
}

TEST(TopKToReductionsTest, TheCorpusTopKComputesWhatItDid) {
  std::unique_ptr<Module> module = LoadSmallTwin("topk_sort_1024x4096_small.hlo");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(LowerAndCheck(*module), "");
}

struct TopKCase {
  const char* name;
  const char* body;  // the entry's instructions; ROOT is the topk
};

class TopKCaseTest : public ::testing::TestWithParam<TopKCase> {};

TEST_P(TopKCaseTest, ComputesWhatItDid) {
  std::unique_ptr<Module> module = Parse(EntryModule(GetParam().body));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TopKRefusal(*module->entry()->root()), "");
  EXPECT_EQ(LowerAndCheck(*module), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TopKCaseTest,
    ::testing::Values(TopKCase{"largest", R"(  x = f32[6,40] parameter(0)
  ROOT t = (f32[6,5], s32[6,5]) topk(x), k=5, largest=true)"},
                      TopKCase{"smallest", R"(  x = f32[6,40] parameter(0)
  ROOT t = (f32[6,5], s32[6,5]) topk(x), k=5, largest=false)"},
                      TopKCase{"ties_to_the_lower_index", R"(  p = f32[4,30] parameter(0)
  three = f32[] constant(3)
  b = f32[4,30] broadcast(three), dimensions={}
  m = f32[4,30] multiply(p, b)
  x = f32[4,30] floor(m)
  ROOT t = (f32[4,30], s32[4,30]) topk(x), k=30, largest=true)"},
                      TopKCase{"nans_and_signed_zeros", R"(  p = f32[3,12] parameter(0)
  i = s32[3,12] iota(), iota_dimension=1
  zero = f32[] constant(0)
  z = f32[3,12] broadcast(zero), dimensions={}
  nan = f32[3,12] divide(z, z)
  nz = f32[3,12] negate(z)
  two = s32[] constant(2)
  five = s32[] constant(5)
  c2 = s32[3,12] broadcast(two), dimensions={}
  c5 = s32[3,12] broadcast(five), dimensions={}
  first = pred[3,12] compare(i, c2), direction=LT
  next = pred[3,12] compare(i, c5), direction=LT
  at5 = pred[3,12] compare(i, c5), direction=EQ
  s5 = f32[3,12] select(at5, z, p)
  s2 = f32[3,12] select(next, nz, s5)
  x = f32[3,12] select(first, nan, s2)
  ROOT t = (f32[3,8], s32[3,8]) topk(x), k=8, largest=false)"},
                      TopKCase{"integers", R"(  p = f32[5,17] parameter(0)
  ten = f32[] constant(10)
  tens = f32[5,17] broadcast(ten), dimensions={}
  m = f32[5,17] multiply(p, tens)
  x = s32[5,17] convert(m)
  ROOT t = (s32[5,3], s32[5,3]) topk(x), k=3, largest=true)"},
                      TopKCase{"bf16_three_dims", R"(  p = bf16[2,3,16] parameter(0)
  ROOT t = (bf16[2,3,4], s32[2,3,4]) topk(p), k=4, largest=true)"},
                      TopKCase{"one_row_one_pick", R"(  x = f64[50] parameter(0)
  ROOT t = (f64[1], s64[1]) topk(x), k=1, largest=true)"}),
    [](const ::testing::TestParamInfo<TopKCase>& info) { return std::string(info.param.name); });

TEST(TopKToReductionsTest, LeavesWhatItCannotLowerAndSaysWhy) {
  std::unique_ptr<Module> module = Parse(EntryModule(R"(  x = f32[2,100] parameter(0)
  ROOT t = (f32[2,40], s32[2,40]) topk(x), k=40, largest=true)"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(TopKRefusal(*module->entry()->root()), "k = 40 is above 32");
  TopKToReductionsPass pass;
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOpcode(*module, Opcode::kTopK), 1);
}

TEST(TopKToReductionsTest, DryModeIsAnError) {
  std::unique_ptr<Module> module = Parse(EntryModule(R"(  x = f32[2,10] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true)"));
  ASSERT_NE(module, nullptr);
  TopKToReductionsPass pass;
  absl::StatusOr<int64_t> offered = RunDryPass(pass, *module);
  ASSERT_FALSE(offered.ok());
  EXPECT_NE(offered.status().message().find("not supported: topk-to-reductions"),
            std::string::npos);
  EXPECT_EQ(CountOpcode(*module, Opcode::kTopK), 1);
}

}  // namespace
}  // namespace hlogym

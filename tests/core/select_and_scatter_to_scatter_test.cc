// select-and-scatter-to-scatter: every select-and-scatter it lowers
// computes what it computed (reference interpreter): the corpus's max-pool
// gradient, and hand-written ones covering overlapping and padded windows,
// windows wholly in the padding, ties, other select and scatter
// computations and types; the ones it leaves say why.

#include "core/passes/select_and_scatter_to_scatter.h"

#include "core/eval/equivalence.h"
#include "core/rewrite/pass.h"
#include "gtest/gtest.h"
#include "tests/core/lowering_test_util.h"
#include "tests/core/simplification_test_util.h"

namespace hlogym {
namespace {

using lowering_test::CaseName;
using lowering_test::LoadSmallTwin;
using lowering_test::LowerAndCompare;
using lowering_test::NamedModule;
using simplification_test::CountOpcode;
using simplification_test::Parse;

// Lowers `original`'s select-and-scatters; "" when every one was lowered and
// the result verifies and computes what `original` computes.
std::string LowerAndCheck(const Module& original) {
  SelectAndScatterToScatterPass pass;
  std::unique_ptr<Module> module;
  const std::string why = LowerAndCompare(pass, original, &module);
  if (!why.empty()) return why;
  return CountOpcode(*module, Opcode::kSelectAndScatter) == 0 ? "" : "a select-and-scatter is left";
}

// A module whose entry applies select-and-scatter with the given window to
// `operand` (a parameter, or `operand_expr` over parameter x) and `source`.
std::string SasModule(const std::string& type, const std::string& operand_shape,
                      const std::string& source_shape, const std::string& window,
                      const std::string& select_dir = "GE", const std::string& scatter_op = "add",
                      const std::string& operand_expr = "") {
  const std::string t = type;
  std::string text = "HloModule m\n\nsel {\n  a = " + t + "[] parameter(0)\n  b = " + t +
                     "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + select_dir +
                     "\n}\n\nscat {\n  a = " + t + "[] parameter(0)\n  b = " + t +
                     "[] parameter(1)\n  ROOT c = " + t + "[] " + scatter_op +
                     "(a, b)\n}\n\nENTRY main {\n";
  if (operand_expr.empty()) {
    text += "  x = " + t + operand_shape + " parameter(0)\n";
  } else {
    text += operand_expr;
  }
  text += "  s = " + t + source_shape + " parameter(1)\n  z = " + t +
          "[] constant(0)\n  ROOT r = " + t + operand_shape +
          " select-and-scatter(x, s, z), window={" + window + "}, select=sel, scatter=scat\n}\n";
  return text;
}

TEST(SelectAndScatterToScatterTest, TheCorpusMaxPoolGradientComputesWhatItDid) {
  std::unique_ptr<Module> module = LoadSmallTwin("cnn_mnist_train_128_small.hlo");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(CountOpcode(*module, Opcode::kSelectAndScatter), 1);
  EXPECT_EQ(LowerAndCheck(*module), "");
}

class SelectAndScatterCaseTest : public ::testing::TestWithParam<NamedModule> {};

TEST_P(SelectAndScatterCaseTest, ComputesWhatItDid) {
  std::unique_ptr<Module> module = Parse(GetParam().text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SelectAndScatterRefusal(*module->entry()->root()), "");
  EXPECT_EQ(LowerAndCheck(*module), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SelectAndScatterCaseTest,
    ::testing::Values(
        NamedModule{"max_pool_2x2",
                    SasModule("f32", "[2,6,6,3]", "[2,3,3,3]", "size=1x2x2x1 stride=1x2x2x1")},
        NamedModule{"overlapping_same_padding",
                    SasModule("f32", "[2,7,7,2]", "[2,4,4,2]",
                              "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0")},
        NamedModule{
            "windows_wholly_in_the_padding",
            SasModule("f32", "[1,4,1]", "[1,4,1]", "size=1x2x1 stride=1x2x1 pad=0_0x2_2x0_0")},
        NamedModule{"min_pool_multiply",
                    SasModule("f64", "[5,8]", "[5,7]", "size=1x2", "LE", "multiply")},
        NamedModule{"ties_keep_the_first",
                    SasModule("f32", "[2,4,4]", "[2,2,2]", "size=1x2x2 stride=1x2x2", "GE", "add",
                              "  p = f32[2,4,4] parameter(0)\n  one = f32[] constant(1)\n"
                              "  b = f32[2,4,4] broadcast(one), dimensions={}\n"
                              "  x = f32[2,4,4] minimum(p, b)\n")},
        NamedModule{"integers_max",
                    SasModule("s32", "[3,9]", "[3,3]", "size=1x3 stride=1x3", "GT", "maximum")},
        NamedModule{"one_dimensional", SasModule("f32", "[10]", "[5]", "size=3 stride=2 pad=0_1")}),
    CaseName);

TEST(SelectAndScatterToScatterTest, LeavesWhatItCannotLowerAndSaysWhy) {
  std::unique_ptr<Module> module =
      Parse(SasModule("f32", "[9]", "[3]", "size=3 stride=2 rhs_dilate=2"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SelectAndScatterRefusal(*module->entry()->root()),
            "a window with dilation, reversal or a stride below 1");
  SelectAndScatterToScatterPass pass;
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOpcode(*module, Opcode::kSelectAndScatter), 1);
}

TEST(SelectAndScatterToScatterTest, LowersOnlyWhatTheBackendWants) {
  std::unique_ptr<Module> module =
      Parse(SasModule("f32", "[2,6,6,3]", "[2,3,3,3]", "size=1x2x2x1 stride=1x2x2x1"));
  ASSERT_NE(module, nullptr);
  SelectAndScatterToScatterPass pass([](const Instruction&) { return false; });
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(SelectAndScatterToScatterTest, DryModeIsAnError) {
  std::unique_ptr<Module> module =
      Parse(SasModule("f32", "[2,6,6,3]", "[2,3,3,3]", "size=1x2x2x1 stride=1x2x2x1"));
  ASSERT_NE(module, nullptr);
  SelectAndScatterToScatterPass pass;
  absl::StatusOr<int64_t> offered = RunDryPass(pass, *module);
  ASSERT_FALSE(offered.ok());
  EXPECT_NE(offered.status().message().find("not supported: select-and-scatter-to-scatter"),
            std::string::npos);
  EXPECT_EQ(CountOpcode(*module, Opcode::kSelectAndScatter), 1);
}

}  // namespace
}  // namespace hlogym

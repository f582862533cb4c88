// select-and-scatter-to-scatter: every select-and-scatter it lowers
// computes what it computed (reference interpreter): the corpus's max-pool
// gradient, and hand-written ones covering overlapping and padded windows,
// windows wholly in the padding, ties, other select and scatter
// computations and types; the ones it leaves say why.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/eval/equivalence.h"
#include "core/ir/verifier.h"
#include "core/passes/select_and_scatter_to_scatter.h"
#include "core/rewrite/pass.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/simplification_test_util.h"

namespace hlogym {
namespace {

using simplification_test::Parse;

int64_t CountOpcode(const Module& module, Opcode opcode) {
  int64_t n = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) n += inst->opcode() == opcode;
  }
  return n;
}

// Lowers `original`'s select-and-scatters; "" when every one was lowered and
// the result verifies and computes what `original` computes.
std::string LowerAndCheck(const Module& original) {
  std::unique_ptr<Module> module = original.Clone();
  SelectAndScatterToScatterPass pass;
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  if (!changed.ok()) return "run: " + std::string(changed.status().message());
  if (!*changed) return "nothing lowered";
  if (CountOpcode(*module, Opcode::kSelectAndScatter) != 0) return "a select-and-scatter is left";
  if (absl::Status s = Verify(*module); !s.ok()) return "verify: " + std::string(s.message());
  absl::StatusOr<EquivalenceReport> report = Equivalent(original, *module);
  if (!report.ok()) return "evaluate: " + std::string(report.status().message());
  return report->equivalent ? "" : report->message;
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
  const std::filesystem::path path = std::filesystem::path(HLOGYM_SOURCE_DIR) /
                                     "data/corpus/small/hlo/cnn_mnist_train_128_small.hlo";
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::unique_ptr<Module> module = Parse(text.str());
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(CountOpcode(*module, Opcode::kSelectAndScatter), 1);
  EXPECT_EQ(LowerAndCheck(*module), "");
}

struct SasCase {
  const char* name;
  std::string text;
};

class SelectAndScatterCaseTest : public ::testing::TestWithParam<SasCase> {};

TEST_P(SelectAndScatterCaseTest, ComputesWhatItDid) {
  std::unique_ptr<Module> module = Parse(GetParam().text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(SelectAndScatterRefusal(*module->entry()->root()), "");
  EXPECT_EQ(LowerAndCheck(*module), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SelectAndScatterCaseTest,
    ::testing::Values(
        SasCase{"max_pool_2x2", SasModule("f32", "[2,6,6,3]", "[2,3,3,3]",
                                          "size=1x2x2x1 stride=1x2x2x1")},
        SasCase{"overlapping_same_padding",
                SasModule("f32", "[2,7,7,2]", "[2,4,4,2]",
                          "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0")},
        SasCase{"windows_wholly_in_the_padding",
                SasModule("f32", "[1,4,1]", "[1,4,1]", "size=1x2x1 stride=1x2x1 pad=0_0x2_2x0_0")},
        SasCase{"min_pool_multiply", SasModule("f64", "[5,8]", "[5,7]", "size=1x2", "LE",
                                               "multiply")},
        SasCase{"ties_keep_the_first",
                SasModule("f32", "[2,4,4]", "[2,2,2]", "size=1x2x2 stride=1x2x2", "GE", "add",
                          "  p = f32[2,4,4] parameter(0)\n  one = f32[] constant(1)\n"
                          "  b = f32[2,4,4] broadcast(one), dimensions={}\n"
                          "  x = f32[2,4,4] minimum(p, b)\n")},
        SasCase{"integers_max", SasModule("s32", "[3,9]", "[3,3]", "size=1x3 stride=1x3", "GT",
                                          "maximum")},
        SasCase{"one_dimensional", SasModule("f32", "[10]", "[5]", "size=3 stride=2 pad=0_1")}),
    [](const ::testing::TestParamInfo<SasCase>& info) { return std::string(info.param.name); });

TEST(SelectAndScatterToScatterTest, LeavesWhatItCannotLowerAndSaysWhy) {
  std::unique_ptr<Module> module = Parse(
      SasModule("f32", "[9]", "[3]", "size=3 stride=2 rhs_dilate=2"));
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

// scan-blocking: every scan it lowers computes what it computed (reference
// interpreter, within rounding: sums are grouped by block): the corpus's
// cumsum, and hand-written cumulative sums, products, maxima and minima,
// forward and reverse, over any dimension; the ones it leaves say why.

#include "core/passes/scan_blocking.h"

#include "absl/strings/str_cat.h"
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

// "" when the pass lowered every scan of `original` into two and the result
// verifies and computes what `original` computes.
std::string LowerAndCheck(const Module& original) {
  ScanBlockingPass pass;
  std::unique_ptr<Module> module;
  const std::string why = LowerAndCompare(pass, original, &module);
  if (!why.empty()) return why;
  return CountOpcode(*module, Opcode::kScan) == 2 * CountOpcode(original, Opcode::kScan)
             ? ""
             : "not every scan was lowered";
}

// A module scanning parameter 0 (`x_shape`) along `dim` with `op`.
std::string ScanModule(const std::string& type, const std::string& x_shape,
                       const std::string& slice_shape, int dim, const std::string& op,
                       const std::string& init, bool reverse = false, bool associative = true) {
  return absl::StrCat(
      "HloModule m\n\nbody {\n  x = ", type, slice_shape, " parameter(0)\n  c = ", type,
      slice_shape, " parameter(1)\n  y = ", type, slice_shape, " ", op, "(x, c)\n  ROOT t = (",
      type, slice_shape, ", ", type, slice_shape, ") tuple(y, y)\n}\n\nENTRY main {\n  x = ", type,
      x_shape, " parameter(0)\n  z = ", type, "[] constant(", init, ")\n  c = ", type, slice_shape,
      " broadcast(z), dimensions={}\n  ROOT s = (", type, x_shape, ", ", type, slice_shape,
      ") scan(x, c), dimensions={", dim, "}, num_carries=1", reverse ? ", is_reverse=true" : "",
      associative ? ", is_associative=true" : "", ", to_apply=body\n}\n");
}

TEST(ScanBlockingTest, TheCorpusCumsumComputesWhatItDid) {
  std::unique_ptr<Module> module = LoadSmallTwin("cumsum_argmax_4096x4096_small.hlo");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(LowerAndCheck(*module), "");
}

class ScanBlockingCaseTest : public ::testing::TestWithParam<NamedModule> {};

TEST_P(ScanBlockingCaseTest, ComputesWhatItDid) {
  std::unique_ptr<Module> module = Parse(GetParam().text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ScanBlockingRefusal(*module->entry()->root()), "");
  EXPECT_EQ(LowerAndCheck(*module), "");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ScanBlockingCaseTest,
    ::testing::Values(
        NamedModule{"cumsum_rows", ScanModule("f32", "[8,1024]", "[8]", 1, "add", "0")},
        NamedModule{"reverse_cumsum", ScanModule("f32", "[4,512]", "[4]", 1, "add", "0.5", true)},
        NamedModule{"cumprod", ScanModule("f64", "[3,300]", "[3]", 1, "multiply", "1")},
        NamedModule{"cummax", ScanModule("f32", "[5,640]", "[5]", 1, "maximum", "-1")},
        NamedModule{"reverse_cummin_integers",
                    ScanModule("s32", "[6,400]", "[6]", 1, "minimum", "7", true)},
        NamedModule{"first_dimension", ScanModule("f32", "[2048,3]", "[3]", 0, "add", "0")},
        NamedModule{"middle_dimension", ScanModule("f32", "[2,768,3]", "[2,3]", 1, "add", "0")}),
    CaseName);

TEST(ScanBlockingTest, LeavesWhatItCannotLowerAndSaysWhy) {
  struct Refused {
    std::string text;
    std::string why;
  };
  for (const Refused& r : std::vector<Refused>{
           {ScanModule("f32", "[8,257]", "[8]", 1, "add", "0"),
            "rows of 257 with no divisor in [16, 128]"},
           {ScanModule("f32", "[8,100]", "[8]", 1, "add", "0"), "rows of 100, shorter than 256"},
           {ScanModule("f32", "[8,512]", "[8]", 1, "add", "0", false, false),
            "not marked is_associative"},
           {ScanModule("f32", "[8,512]", "[8]", 1, "subtract", "0"),
            "a body other than (x, c) -> (y, y), y = x op c with op add, multiply, max or min"}}) {
    std::unique_ptr<Module> module = Parse(r.text);
    ASSERT_NE(module, nullptr);
    EXPECT_EQ(ScanBlockingRefusal(*module->entry()->root()), r.why);
    ScanBlockingPass pass;
    absl::StatusOr<bool> changed = RunPass(pass, *module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << r.why;
  }
}

TEST(ScanBlockingTest, DryModeIsAnError) {
  std::unique_ptr<Module> module = Parse(ScanModule("f32", "[8,1024]", "[8]", 1, "add", "0"));
  ASSERT_NE(module, nullptr);
  ScanBlockingPass pass;
  absl::StatusOr<int64_t> offered = RunDryPass(pass, *module);
  ASSERT_FALSE(offered.ok());
  EXPECT_NE(offered.status().message().find("not supported: scan-blocking"), std::string::npos);
  EXPECT_EQ(CountOpcode(*module, Opcode::kScan), 1);
}

}  // namespace
}  // namespace hlogym

// The elemental convolution (the GPU target's convolution) compiled for the
// CPU, against the interpreter: every dim_labels arrangement,
// strides, padding, lhs/rhs dilation, window reversal, feature and batch
// groups, and narrow types.
#include <string>

#include "absl/strings/str_cat.h"
#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::RunKernel;

void ExpectExact(const std::string& lhs, const std::string& rhs, const std::string& out,
                 const std::string& attributes) {
  const std::string text = absl::StrCat(R"(HloModule m
ENTRY e {
  x = )", lhs, R"( parameter(0)
  w = )", rhs, R"( parameter(1)
  ROOT c = )", out, " convolution(x, w), ", attributes, "\n}\n");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << text;
  ASSERT_TRUE(Verify(**module).ok()) << Verify(**module) << "\n" << text;
  // The kernel sums in double; the interpreter's convolution may use float
  // GEMMs. So the comparison is the project's float tolerance (rtol 1e-4,
  // atol 1e-5), not bit equality.
  const std::vector<Literal> args = FormulaInputs(**module);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const Instruction& root = *(*module)->entry()->root();
  absl::StatusOr<std::vector<Literal>> actual = RunKernel(root, {&args[0], &args[1]});
  ASSERT_TRUE(actual.ok()) << actual.status() << "\n" << text;
  const EquivalenceReport report = CompareLiterals(*expected, *actual);
  EXPECT_TRUE(report.equivalent) << report.message << "\n" << text;
}

TEST(ElementalConvolutionTest, NhwcSamePaddingStridesAndDilations) {
  ExpectExact("f32[2,9,9,3]", "f32[3,3,3,4]", "f32[2,9,9,4]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  ExpectExact("f32[2,9,9,3]", "f32[3,3,3,4]", "f32[2,4,4,4]",
              "window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f");
  ExpectExact("f32[2,9,9,3]", "f32[3,3,3,4]", "f32[2,5,5,4]",
              "window={size=3x3 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f");
  ExpectExact("f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,11,11,4]",
              "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f");
}

TEST(ElementalConvolutionTest, NchwReversalAndGroups) {
  ExpectExact("f32[2,4,7,7]", "f32[6,4,3,3]", "f32[2,6,5,5]",
              "window={size=3x3 rhs_reversal=1x1}, dim_labels=bf01_oi01->bf01");
  ExpectExact("f32[2,4,7,7]", "f32[6,2,3,3]", "f32[2,6,5,5]",
              "window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2");
  // A weight gradient: batch groups, as the training steps' backward passes have.
  ExpectExact("f32[4,5,5,3]", "f32[3,3,3,2]", "f32[2,3,3,2]",
              "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2");
}

TEST(ElementalConvolutionTest, OneDimensionalAndNarrowTypes) {
  ExpectExact("f32[3,17,5]", "f32[4,5,6]", "f32[3,14,6]",
              "window={size=4}, dim_labels=b0f_0io->b0f");
  ExpectExact("bf16[2,6,6,3]", "bf16[3,3,3,4]", "bf16[2,6,6,4]",
              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
}

}  // namespace
}  // namespace hlogym

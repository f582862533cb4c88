// Malformed inputs give "line L, column C: <message>" errors that say what
// was expected and what was found.
#include <ostream>
#include <string>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

struct ErrorCase {
  const char* name;
  std::string text;
  std::string message;  // the whole status message
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

std::string Entry(const std::string& body) { return "HloModule m\nENTRY e {\n" + body + "\n}"; }

std::string DeepTuple(int depth) {
  std::string text = "HloModule m\nENTRY e {\n  ROOT x = ";
  text += std::string(depth, '(') + "f32[]" + std::string(depth, ')');
  return text + " parameter(0)\n}";
}

class ParserErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, ReportsLineColumnAndWhat) {
  const ErrorCase& c = GetParam();
  auto module = ParseModule(c.text);
  ASSERT_FALSE(module.ok()) << c.name << " parsed";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(module.status().message()), c.message) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParserErrorTest,
    ::testing::Values(
        ErrorCase{"empty", "", "line 1, column 1: expected a computation, found end of input"},
        ErrorCase{"missing_equal", Entry("  x f32[] parameter(0)"),
                  "line 3, column 5: expected '=' after instruction name 'x', found 'f32'"},
        ErrorCase{"unknown_opcode", Entry("  x = f32[] frobnicate(0)"),
                  "line 3, column 13: unknown opcode 'frobnicate'"},
        ErrorCase{"unknown_element_type", Entry("  ROOT x = f31[2] parameter(0)"),
                  "line 3, column 12: unknown element type 'f31'"},
        ErrorCase{"use_before_definition",
                  Entry("  x = f32[] parameter(0)\n  ROOT y = f32[] add(x, z)"),
                  "line 4, column 25: unknown instruction 'z' in computation 'e' "
                  "(instructions must be defined before they are used)"},
        ErrorCase{"unknown_computation",
                  Entry("  x = f32[2]{0} parameter(0)\n  z = f32[] constant(0)\n"
                        "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=sum"),
                  "line 5, column 57: unknown computation 'sum' (computations must be "
                  "defined before they are called)"},
        ErrorCase{"missing_required_attribute",
                  Entry("  x = f32[] parameter(0)\n  ROOT c = pred[] compare(x, x)"),
                  "line 4, column 8: 'c' (compare) is missing required attribute "
                  "'direction'"},
        ErrorCase{"missing_fusion_calls",
                  Entry("  x = f32[] parameter(0)\n  ROOT f = f32[] fusion(x), kind=kLoop"),
                  "line 4, column 8: 'f' (fusion) is missing required attribute 'calls'"},
        ErrorCase{"duplicate_attribute",
                  Entry("  x = f32[2]{0} parameter(0)\n"
                        "  ROOT b = f32[2]{0} transpose(x), dimensions={0}, dimensions={0}"),
                  "line 4, column 52: duplicate attribute 'dimensions'"},
        ErrorCase{"duplicate_instruction", Entry("  x = f32[] parameter(0)\n  x = f32[] negate(x)"),
                  "line 4, column 3: duplicate instruction name 'x' in computation 'e'"},
        ErrorCase{"parameter_gap",
                  Entry("  x = f32[] parameter(0)\n  y = f32[] parameter(2)\n"
                        "  ROOT a = f32[] add(x, y)"),
                  "line 4, column 3: parameter(2) leaves a gap: computation 'e' has no "
                  "parameter 1 (parameters must be numbered 0..n-1)"},
        ErrorCase{"duplicate_parameter",
                  Entry("  x = f32[] parameter(0)\n  y = f32[] parameter(0)\n"
                        "  ROOT a = f32[] add(x, y)"),
                  "line 4, column 3: duplicate parameter number 0 in computation 'e'"},
        ErrorCase{"operand_count", Entry("  x = f32[] parameter(0)\n  ROOT a = f32[] add(x)"),
                  "line 4, column 21: 'add' takes 2 operands, found 1"},
        ErrorCase{"unterminated_string",
                  Entry("  ROOT c = s32[] custom-call(), custom_call_target=\"abc"),
                  "line 3, column 52: unterminated string"},
        ErrorCase{"unterminated_comment", Entry("  ROOT x = f32[] parameter(0) /* never closed"),
                  "line 3, column 31: unterminated comment ('/*' without '*/')"},
        ErrorCase{"truncated",
                  "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n"
                  "  ROOT y = f32[] negate(x)",
                  "line 4, column 27: expected '}' to close computation 'e' (opened at "
                  "line 2), found end of input"},
        ErrorCase{"truncated_mid_instruction", "HloModule m\nENTRY e {\n  x = f32[2]{0",
                  "line 3, column 15: expected ',' or '}' in the layout, found end of input"},
        ErrorCase{"layout_rank", Entry("  ROOT x = f32[2,3]{0} parameter(0)"),
                  "line 3, column 20: layout has 1 dimensions but the shape has rank 2"},
        ErrorCase{"layout_repeats", Entry("  ROOT x = f32[2,3]{1,1} parameter(0)"),
                  "line 3, column 23: layout dimension 1 repeats"},
        ErrorCase{"huge_integer", Entry("  ROOT x = f32[99999999999999999999] parameter(0)"),
                  "line 3, column 16: integer 99999999999999999999 is out of range for int64"},
        ErrorCase{"shape_too_large", Entry("  ROOT x = f32[4611686018427387904,4] parameter(0)"),
                  "line 3, column 12: shape f32[4611686018427387904,4] is too large (its "
                  "byte size overflows int64)"},
        ErrorCase{"operand_shape_mismatch",
                  Entry("  x = f32[2]{0} parameter(0)\n  ROOT y = f32[2]{0} negate(f32[3]{0} x)"),
                  "line 4, column 29: operand 'x' is written as f32[3] but is f32[2]"},
        ErrorCase{"second_root", Entry("  ROOT x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)"),
                  "line 4, column 3: second ROOT 'y' in computation 'e' (root is 'x')"},
        ErrorCase{"second_entry",
                  "HloModule m\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\n"
                  "ENTRY b {\n  ROOT y = f32[] parameter(0)\n}",
                  "line 5, column 1: second ENTRY computation 'b' (entry is 'a')"},
        ErrorCase{"shape_needed", Entry("  ROOT x = parameter(0)"),
                  "line 3, column 12: the shape of 'parameter' cannot be inferred: write it "
                  "before the opcode"},
        ErrorCase{"bad_enum",
                  Entry("  x = f32[] parameter(0)\n  ROOT c = pred[] compare(x, x), direction=XX"),
                  "line 4, column 34: unknown direction 'XX' (expected EQ, NE, GE, GT, LE or "
                  "LT)"},
        ErrorCase{"literal_count", Entry("  ROOT c = s32[3]{0} constant({1, 2})"),
                  "line 3, column 36: dimension 0 of s32[3] has 3 elements but the literal "
                  "gives 2"},
        ErrorCase{"literal_range", Entry("  ROOT c = f16[] constant(1e6)"),
                  "line 3, column 27: value 1e6 is out of range for f16"},
        ErrorCase{"stray_character", Entry("  ROOT x = f32[] parameter(0) @"),
                  "line 3, column 31: expected an instruction name or '}', found '@'"},
        ErrorCase{"binary_garbage", std::string("HloModule m\n\x01\xff\x7f", 15),
                  "line 2, column 1: expected a computation name, found '\\x01'"},
        ErrorCase{"signature_mismatch",
                  "HloModule m\nENTRY e (a: f32[2]) -> f32[3] {\n"
                  "  ROOT a = f32[2]{0} parameter(0)\n}",
                  "line 2, column 9: signature of 'e' returns f32[3] but its root 'a' is "
                  "f32[2]"},
        ErrorCase{"mismatched_bracket_in_raw_value",
                  Entry("  ROOT x = f32[] parameter(0), sharding={devices=[2]0,1)"),
                  "line 3, column 56: mismatched ')' in attribute value (expected '}')"},
        ErrorCase{"slice_range",
                  Entry("  x = f32[4]{0} parameter(0)\n"
                        "  ROOT s = f32[2]{0} slice(x), slice={[0:2}"),
                  "line 4, column 43: expected ']' to end a slice range, found '}'"},
        ErrorCase{"window_rank",
                  Entry("  x = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n"
                        "  ROOT s = f32[3]{0} reduce-window(x, z), window={size=2 stride=1x1}"),
                  "line 5, column 50: window field 'stride' has 2 dimensions but size= has 1"},
        ErrorCase{"second_header",
                  "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\nHloModule again",
                  "line 5, column 1: a second 'HloModule' header (one module per text)"},
        ErrorCase{"empty_computation", "HloModule m\nENTRY e {\n}",
                  "line 3, column 1: computation 'e' has no instructions"},
        ErrorCase{"duplicate_computation",
                  "HloModule m\nc {\n  ROOT x = f32[] parameter(0)\n}\n"
                  "c {\n  ROOT x = f32[] parameter(0)\n}",
                  "line 5, column 1: duplicate computation name 'c'"},
        ErrorCase{"dim_labels",
                  Entry("  x = f32[1,4,4,1]{3,2,1,0} parameter(0)\n"
                        "  ROOT c = f32[1,4,4,1]{3,2,1,0} convolution(x, x), "
                        "dim_labels=b01f_01oo->b01f"),
                  "line 4, column 64: dim labels '01oo' repeat 'o'"},
        ErrorCase{"deep_nesting", DeepTuple(300),
                  "line 3, column 267: nesting deeper than 256 levels"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ParserErrorTest, ParseShapeErrors) {
  auto shape = ParseShape("f32[2");
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(std::string(shape.status().message()),
            "line 1, column 6: expected ',' or ']' in the dimensions, found end of input");
  shape = ParseShape("f32[2] trailing");
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(std::string(shape.status().message()),
            "line 1, column 8: expected end of the shape, found 'trailing'");
  shape = ParseShape("token[1]");
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(std::string(shape.status().message()),
            "line 1, column 7: expected ']': token[] has no dimensions, found '1'");
}

// Ill-typed text fails verification; the error points at the definition.
TEST(ParserErrorTest, VerifyErrorsGiveTheLineAndColumnOfTheInstruction) {
  const std::string text =
      "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
      "    y = s32[2] negate(x)\n  ROOT r = f32[2] exponential(x)\n}";
  auto module = ParseAndVerifyModule(text);
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(IsVerifyError(module.status()));
  EXPECT_EQ(std::string(module.status().message()),
            "line 11, column 5: computation `e`, instruction `y`: negate's shape does not match "
            "its operands and attributes (expected f32[2], got s32[2])");

  // Parse errors stay parse errors; errors about a whole computation have no
  // instruction to point at.
  auto unparsable = ParseAndVerifyModule("HloModule m\nENTRY e {\n  ROOT x = f32[ parameter(0)\n}");
  ASSERT_FALSE(unparsable.ok());
  EXPECT_FALSE(IsVerifyError(unparsable.status()));
  auto module_wide = ParseModule(text);
  ASSERT_TRUE(module_wide.ok());
  absl::Status status = Verify(**module_wide);
  ASSERT_FALSE(status.ok());
  const Instruction* failing = FindFailingInstruction(status, **module_wide);
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(failing->name(), "y");
  EXPECT_EQ(FindFailingInstruction(absl::InvalidArgumentError("other"), **module_wide), nullptr);
  EXPECT_TRUE(ParseAndVerifyModule(Entry("  ROOT x = f32[2] parameter(0)")).ok());
}

TEST(ParserErrorTest, DeepButAllowedNestingParses) {
  EXPECT_TRUE(ParseModule(DeepTuple(200)).ok());
}

}  // namespace
}  // namespace hlogym

// The interpreter's control-flow corner cases (conditional's out-of-range
// branch index, alternatives), its errors for what it cannot run (each names
// the instruction, never a wrong value), and equivalence's mismatch report.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/eval/equivalence.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

absl::StatusOr<Literal> RunHlo(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

Literal S32(int64_t v) {
  Literal l(Shape::Scalar(PrimitiveType::kS32));
  l.SetFromInt64(0, v);
  return l;
}

Literal F32s(const std::vector<double>& values) {
  Literal l(Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

constexpr char kConditional[] = R"(HloModule m

b0 {
  x = f32[2] parameter(0)
  ROOT r = f32[2] negate(x)
}

b1 {
  x = f32[2] parameter(0)
  ROOT r = f32[2] abs(x)
}

b2 {
  x = f32[2] parameter(0)
  ROOT r = f32[2] add(x, x)
}

ENTRY e {
  i = s32[] parameter(0)
  x = f32[2] parameter(1)
  ROOT c = f32[2] conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
)";

TEST(InterpreterControl, ConditionalRunsTheIndexedBranchAndTheLastOutOfRange) {
  const Literal x = F32s({-1.5, 2});
  // XLA: an index outside [0, branches) runs the last branch.
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, "{1.5, -2}"}, {1, "{1.5, 2}"}, {2, "{-3, 4}"}, {3, "{-3, 4}"}, {-1, "{-3, 4}"}};
  for (const auto& [index, want] : cases) {
    absl::StatusOr<Literal> out = RunHlo(kConditional, {S32(index), x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->ToString(), want) << "branch index " << index;
  }
}

TEST(InterpreterControl, AlternativesEvaluateOperandZero) {
  absl::StatusOr<Literal> out = RunHlo(R"(HloModule m

ENTRY e {
  x = f32[2] parameter(0)
  a = f32[2] negate(x)
  b = f32[2] abs(x)
  ROOT alt = f32[2] alternatives(a, b)
}
)",
                                       {F32s({-1.5, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "{1.5, -2}");
}

// A loop whose condition never turns false is an error once it has taken
// kMaxWhileTrips trips (it hung validations before); one that ends a trip
// short of the limit runs.
TEST(InterpreterControl, WhileStopsWithAnErrorAtTheTripLimit) {
  auto loop = [](const std::string& condition) {
    return absl::StrCat(R"(HloModule m

cond {
  i = s32[] parameter(0)
  )", condition, R"(
}

body {
  i = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(i, one)
}

ENTRY main {
  zero = s32[] constant(0)
  ROOT spin = s32[] while(zero), condition=cond, body=body
})");
  };
  absl::StatusOr<Literal> forever = RunHlo(loop("ROOT t = pred[] constant(true)"), {});
  ASSERT_FALSE(forever.ok());
  EXPECT_EQ(forever.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(forever.status().message().find(absl::StrCat(
                "while `spin` did not end within ", kMaxWhileTrips, " trips")),
            std::string::npos)
      << forever.status();
  absl::StatusOr<Literal> longest = RunHlo(
      loop(absl::StrCat("limit = s32[] constant(", kMaxWhileTrips - 1,
                        ")\n  ROOT t = pred[] compare(i, limit), direction=LT")),
      {});
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->GetAsInt64(0), kMaxWhileTrips - 1);
}

TEST(InterpreterErrors, UnknownCustomCallNamesTheInstruction) {
  absl::StatusOr<Literal> out = RunHlo(R"(HloModule m

ENTRY e {
  x = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(x), custom_call_target="my_kernel"
}
)",
                                       {F32s({1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(out.status().message(),
            "not supported: custom-call target `my_kernel` in instruction `cc`");
}

TEST(InterpreterErrors, ElidedConstantsAndUnsupportedOpcodesNameTheInstruction) {
  absl::StatusOr<Literal> out = RunHlo(R"(HloModule m

ENTRY e {
  ROOT k = f32[3] constant({...})
}
)",
                                       {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "not supported: a constant whose values were elided as {...} in instruction `k`");
  out = RunHlo(R"(HloModule m

ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT ch = f32[2,2] cholesky(a), lower=true
}
)",
               {Literal(Shape::Array(PrimitiveType::kF32, {2, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "not supported: cholesky in instruction `ch`");
}

TEST(InterpreterEquivalence, ReportsTheFirstMismatchOfAnyOutput) {
  // Two outputs; the modules agree on output 0 and part at element 2 of
  // output 1.
  const std::string base = R"(HloModule m

ENTRY e {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  k = f32[4] constant({0, 0, OTHER, 0})
  d = f32[4] add(x, k)
  ROOT t = (f32[4], f32[4]) tuple(n, d)
}
)";
  auto module = [&](const std::string& other) {
    std::string text = base;
    text.replace(text.find("OTHER"), 5, other);
    return ParseModule(text);
  };
  absl::StatusOr<std::unique_ptr<Module>> a = module("0"), b = module("0.5"), c = module("1e-9");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  absl::StatusOr<EquivalenceReport> same = Equivalent(**a, **c);  // within tolerance
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->equivalent) << same->message;
  absl::StatusOr<EquivalenceReport> report = Equivalent(**a, **b);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->equivalent);
  EXPECT_EQ(report->output_index, 1);
  EXPECT_EQ(report->element_index, 2);
  EXPECT_EQ(report->message, absl::StrCat("output 1, element 2: expected ", report->expected,
                                          ", got ", report->actual));
  // The formula input of element 2 is sin(0.5 * 2 + 0.3); b adds 0.5 to it.
  EXPECT_EQ(report->expected, "0.963558");
  EXPECT_EQ(report->actual, "1.46356");
}

TEST(InterpreterEquivalence, NansMatchNansAndInfinitiesMatchExactly) {
  std::vector<Literal> x, y;
  x.push_back(F32s({NAN, INFINITY, -0.0, 1}));
  y.push_back(F32s({NAN, INFINITY, 0.0, 1}));
  EXPECT_TRUE(CompareLiterals(x, y).equivalent);
  y[0] = F32s({NAN, -INFINITY, 0.0, 1});
  const EquivalenceReport r = CompareLiterals(x, y);
  EXPECT_FALSE(r.equivalent);
  EXPECT_EQ(r.element_index, 1);
  EXPECT_EQ(r.message, "output 0, element 1: expected inf, got -inf");
  y[0] = F32s({1, INFINITY, 0.0, 1});
  EXPECT_EQ(CompareLiterals(x, y).message, "output 0, element 0: expected nan, got 1");
}

}  // namespace
}  // namespace hlogym

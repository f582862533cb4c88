// The interpreter's fast array kernels against plain definitions: float
// elementwise ops against the scalar semantics (ApplyUnary/ApplyBinary/
// Compare), bf16/f16 rounding against the IR's conversions, data movement,
// reduce, dot and convolution against naive loops written here.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/eval/float_codec.h"
#include "core/eval/interpreter.h"
#include "core/eval/scalar.h"
#include "core/ir/float_formats.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

Literal Make(PrimitiveType t, std::vector<int64_t> dims, const std::function<double(int64_t)>& f) {
  Literal l(Shape::Array(t, std::move(dims)));
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (IsFloat(t)) {
      l.SetFromDouble(i, f(i));
    } else {
      l.SetFromInt64(i, static_cast<int64_t>(f(i)));
    }
  }
  return l;
}

absl::StatusOr<Literal> RunHlo(const std::string& body, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModule(absl::StrCat("HloModule m\n\n", body));
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

std::string Type(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }
std::string ShapeText(PrimitiveType t, const std::vector<int64_t>& dims) {
  return absl::StrCat(Type(t), "[", absl::StrJoin(dims, ","), "]");
}

bool SameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         (a == b && std::signbit(a) == std::signbit(b));
}

// Special and ordinary values, including subnormals of the narrow types.
std::vector<double> TestValues() {
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.75, 1e-3, 65504.0, 65520.0,
                           1e-7, 6e-8, 1e30, -1e30, 3.4e38, 1e-40, 1e-45,
                           INFINITY, -INFINITY, NAN, 0.1, 0.7, -0.3, 3.14159, 100.5};
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  for (int i = 0; i < 40; ++i) v.push_back(normal(rng));
  return v;
}

TEST(InterpreterKernels, NarrowFloatRoundingMatchesTheIrConversions) {
  std::mt19937_64 rng(1);
  std::vector<double> values = TestValues();
  // Midpoints between neighbouring bf16/f16 values, and one double ulp
  // either side: the cases a double rounding would get wrong.
  for (uint32_t b = 0; b < 0x7f80; b += 7) {
    const double lo = DecodeNarrowFloat(PrimitiveType::kBF16, b);
    const double hi = DecodeNarrowFloat(PrimitiveType::kBF16, b + 1);
    const double mid = (lo + hi) / 2;
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), -mid}) {
      values.push_back(x);
    }
  }
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const double lo = DecodeNarrowFloat(PrimitiveType::kF16, b);
    const double hi = DecodeNarrowFloat(PrimitiveType::kF16, b + 1);
    const double mid = (lo + hi) / 2;
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), -mid}) {
      values.push_back(x);
    }
  }
  std::uniform_int_distribution<uint64_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint64_t b = bits(rng);
    // Exponents near the narrow types' ranges.
    b = (b & 0x800fffffffffffffull) | (static_cast<uint64_t>(1023 - 150 + (b >> 52) % 300) << 52);
    double d;
    std::memcpy(&d, &b, 8);
    values.push_back(d);
  }
  for (double d : values) {
    ASSERT_EQ(DoubleToBF16(d), EncodeNarrowFloat(PrimitiveType::kBF16, d)) << d;
    ASSERT_EQ(DoubleToF16(d), EncodeNarrowFloat(PrimitiveType::kF16, d)) << d;
  }
  for (uint32_t b = 0; b < 65536; ++b) {
    ASSERT_TRUE(SameValue(F16ToDouble(b), DecodeNarrowFloat(PrimitiveType::kF16, b))) << b;
    ASSERT_TRUE(SameValue(BF16ToDouble(b), DecodeNarrowFloat(PrimitiveType::kBF16, b))) << b;
  }
}

const PrimitiveType kFloatTypes[] = {PrimitiveType::kF32, PrimitiveType::kF64,
                                     PrimitiveType::kBF16, PrimitiveType::kF16};

TEST(InterpreterKernels, FloatElementwiseMatchesScalarSemantics) {
  const std::vector<double> values = TestValues();
  const int64_t n = static_cast<int64_t>(values.size());
  const std::vector<Opcode> unary = {
      Opcode::kAbs, Opcode::kNegate, Opcode::kSign, Opcode::kExp, Opcode::kExpm1, Opcode::kLog,
      Opcode::kLog1p, Opcode::kLogistic, Opcode::kTanh, Opcode::kSqrt, Opcode::kRsqrt,
      Opcode::kCbrt, Opcode::kSin, Opcode::kCos, Opcode::kTan, Opcode::kErf, Opcode::kAtan,
      Opcode::kFloor, Opcode::kCeil, Opcode::kRoundNearestAfz, Opcode::kRoundNearestEven};
  const std::vector<Opcode> binary = {Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply,
                                      Opcode::kDivide, Opcode::kMaximum, Opcode::kMinimum,
                                      Opcode::kPower, Opcode::kRemainder, Opcode::kAtan2};
  int64_t checked = 0;
  for (PrimitiveType t : kFloatTypes) {
    const Literal x = Make(t, {n}, [&](int64_t i) { return values[i]; });
    const Literal y = Make(t, {n}, [&](int64_t i) { return values[(i * 7 + 3) % n]; });
    const std::string s = ShapeText(t, {n});
    auto check = [&](const std::string& what, const Literal& out, auto expected) {
      for (int64_t i = 0; i < n; ++i) {
        const double want = expected(i);
        ASSERT_TRUE(SameValue(out.GetAsDouble(i), want))
            << what << " on " << Type(t) << " element " << i << ": got " << out.GetAsDouble(i)
            << ", scalar semantics " << want;
      }
      ++checked;
    };
    for (Opcode op : unary) {
      const std::string name(OpcodeName(op));
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  ROOT r = ", s, " ",
                                  name, "(x)\n}\n"), {x});
      ASSERT_TRUE(out.ok()) << name << ": " << out.status();
      check(name, *out, [&](int64_t i) {
        return ApplyUnary(op, t, t, LoadScalar(x, i))->f;
      });
    }
    for (Opcode op : binary) {
      const std::string name(OpcodeName(op));
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  y = ", s,
                                  " parameter(1)\n  ROOT r = ", s, " ", name, "(x, y)\n}\n"),
                     {x, y});
      ASSERT_TRUE(out.ok()) << name << ": " << out.status();
      check(name, *out, [&](int64_t i) {
        return ApplyBinary(op, t, t, LoadScalar(x, i), LoadScalar(y, i))->f;
      });
    }
    for (const char* type : {"FLOAT", "TOTALORDER"}) {
      for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
        auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  y = ", s,
                                    " parameter(1)\n  ROOT r = ", ShapeText(PrimitiveType::kPred, {n}),
                                    " compare(x, y), direction=", dir, ", type=", type, "\n}\n"),
                       {x, y});
        ASSERT_TRUE(out.ok()) << out.status();
        const auto& attrs = std::string(type) == "FLOAT" ? ComparisonType::kFloat
                                                         : ComparisonType::kTotalOrder;
        const ComparisonDirection d =
            std::string(dir) == "EQ"   ? ComparisonDirection::kEq
            : std::string(dir) == "NE" ? ComparisonDirection::kNe
            : std::string(dir) == "LT" ? ComparisonDirection::kLt
            : std::string(dir) == "LE" ? ComparisonDirection::kLe
            : std::string(dir) == "GT" ? ComparisonDirection::kGt
                                       : ComparisonDirection::kGe;
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(out->GetAsInt64(i),
                    Compare(d, attrs, t, LoadScalar(x, i), LoadScalar(y, i)) ? 1 : 0)
              << dir << " " << type << " on " << Type(t) << " element " << i;
        }
      }
    }
    // select with a broadcast scalar bound clamp, and convert to every type.
    for (PrimitiveType to : kFloatTypes) {
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  ROOT r = ",
                                  ShapeText(to, {n}), " convert(x)\n}\n"), {x});
      ASSERT_TRUE(out.ok()) << out.status();
      check("convert to " + Type(to), *out,
            [&](int64_t i) { return ConvertScalar(t, to, LoadScalar(x, i)).f; });
    }
    auto clamped = RunHlo(absl::StrCat("ENTRY e {\n  lo = ", Type(t), "[] constant(-1)\n  x = ", s,
                                    " parameter(0)\n  hi = ", Type(t), "[] constant(2)\n  ROOT r = ",
                                    s, " clamp(lo, x, hi)\n}\n"), {x});
    ASSERT_TRUE(clamped.ok()) << clamped.status();
    check("clamp", *clamped, [&](int64_t i) {
      const double v = values[i];
      return std::isnan(v) ? NAN : std::min(2.0, std::max(-1.0, x.GetAsDouble(i)));
    });
  }
  EXPECT_EQ(checked, 4 * (21 + 9 + 4 + 1));
}

TEST(InterpreterKernels, IntegerElementwiseMatchesScalarSemantics) {
  std::vector<int64_t> values = {0, 1, -1, 2, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, -128, 255,
                                 32767, -32768, 65535, 2147483647, -2147483647 - 1, 4294967295LL,
                                 INT64_MAX, INT64_MIN, -3, 70};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) values.push_back(static_cast<int64_t>(rng()));
  const int64_t n = static_cast<int64_t>(values.size());
  const std::vector<Opcode> ops = {Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply, Opcode::kAnd,
                                   Opcode::kOr, Opcode::kXor, Opcode::kMaximum, Opcode::kMinimum,
                                   Opcode::kShiftLeft, Opcode::kShiftRightLogical,
                                   Opcode::kShiftRightArithmetic};
  for (PrimitiveType t : {PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32, PrimitiveType::kS64,
                          PrimitiveType::kU8, PrimitiveType::kU16, PrimitiveType::kU32, PrimitiveType::kU64}) {
    Literal x(Shape::Array(t, {n})), y(Shape::Array(t, {n}));
    for (int64_t i = 0; i < n; ++i) {
      x.SetFromInt64(i, values[i]);
      y.SetFromInt64(i, values[(i * 5 + 2) % n]);
    }
    const std::string s = ShapeText(t, {n});
    for (Opcode op : ops) {
      const std::string name(OpcodeName(op));
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  y = ", s,
                                     " parameter(1)\n  ROOT r = ", s, " ", name, "(x, y)\n}\n"), {x, y});
      ASSERT_TRUE(out.ok()) << name << ": " << out.status();
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out->GetAsInt64(i), ApplyBinary(op, t, t, LoadScalar(x, i), LoadScalar(y, i))->i)
            << name << " on " << Type(t) << " element " << i;
      }
    }
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  y = ", s,
                                     " parameter(1)\n  ROOT r = ", ShapeText(PrimitiveType::kPred, {n}),
                                     " compare(x, y), direction=", dir, "\n}\n"), {x, y});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::string d(dir);
      const ComparisonDirection cd = d == "EQ" ? ComparisonDirection::kEq : d == "NE" ? ComparisonDirection::kNe
                                   : d == "LT" ? ComparisonDirection::kLt : d == "LE" ? ComparisonDirection::kLe
                                   : d == "GT" ? ComparisonDirection::kGt : ComparisonDirection::kGe;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out->GetAsInt64(i),
                  Compare(cd, ComparisonType::kDefault, t, LoadScalar(x, i), LoadScalar(y, i)) ? 1 : 0)
            << dir << " on " << Type(t) << " element " << i;
      }
    }
  }
}

// topk: the first k of a stable sort of each row, floats in total order
// (NaN above +inf, -0 below +0), ties to the lower index.
TEST(InterpreterKernels, TopKIsTheHeadOfAStableSort) {
  const std::vector<double> row = {1, NAN, -0.0, 3, 0.0, 3, -INFINITY, 2, 3, INFINITY, -1, 1};
  const int64_t n = static_cast<int64_t>(row.size());
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16, PrimitiveType::kS32,
                          PrimitiveType::kU8}) {
    const bool is_float = IsFloat(t);
    const Literal x = Make(t, {2, n}, [&](int64_t i) {
      const double v = row[i % n] * (i >= n ? -1 : 1);
      return is_float ? v : (std::isfinite(v) ? v + 5 : 0);
    });
    for (bool largest : {true, false}) {
      auto out = RunHlo(absl::StrCat("ENTRY e {\n  x = ", ShapeText(t, {2, n}),
                                     " parameter(0)\n  ROOT r = (", ShapeText(t, {2, 5}), ", s32[2,5]) topk(x), k=5, largest=",
                                     largest ? "true" : "false", "\n}\n"), {x});
      ASSERT_TRUE(out.ok()) << out.status();
      for (int64_t r = 0; r < 2; ++r) {
        std::vector<int64_t> order(n);
        for (int64_t j = 0; j < n; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          const Scalar sa = LoadScalar(x, r * n + a), sb = LoadScalar(x, r * n + b);
          return Compare(largest ? ComparisonDirection::kGt : ComparisonDirection::kLt,
                         is_float ? ComparisonType::kTotalOrder : ComparisonType::kDefault, t, sa, sb);
        });
        for (int64_t j = 0; j < 5; ++j) {
          EXPECT_EQ(out->tuple_elements()[1].GetAsInt64(r * 5 + j), order[j])
              << Type(t) << (largest ? " largest" : " smallest") << " row " << r << " rank " << j;
          EXPECT_TRUE(SameValue(out->tuple_elements()[0].GetAsDouble(r * 5 + j),
                                x.GetAsDouble(r * n + order[j])));
        }
      }
    }
  }
}

// Values are shared, not copied, through get-tuple-element and moved out of
// a computation when nothing else holds them: the caller's arguments and the
// module's constants must never change.
TEST(InterpreterKernels, WhileLoopsLeaveArgumentsAndConstantsIntact) {
  const std::string text =
      "HloModule m\n\ncond {\n  s = (s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
      "  n = s32[] constant(4)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
      "body {\n  s = (s32[], f32[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
      "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[3] get-tuple-element(s), index=1\n"
      "  w = f32[3] add(v, v)\n  ROOT t = (s32[], f32[3]) tuple(j, w)\n}\n\n"
      "ENTRY e {\n  x = f32[3] parameter(0)\n  c = f32[3] constant({1, 2, 3})\n  y = f32[3] add(x, c)\n"
      "  zero = s32[] constant(0)\n  t = (s32[], f32[3]) tuple(zero, y)\n"
      "  w = (s32[], f32[3]) while(t), condition=cond, body=body\n"
      "  r = f32[3] get-tuple-element(w), index=1\n  ROOT out = (f32[3], f32[3], f32[3]) tuple(r, x, c)\n}\n";
  auto module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const Literal x = Make(PrimitiveType::kF32, {3}, [](int64_t i) { return 0.5 * static_cast<double>(i); });
  for (int run = 0; run < 2; ++run) {
    auto out = EvaluateFlat(**module, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ((*out)[0].GetAsDouble(i), 16 * (0.5 * static_cast<double>(i) + static_cast<double>(i + 1)));
      EXPECT_EQ((*out)[1].GetAsDouble(i), 0.5 * static_cast<double>(i));
      EXPECT_EQ((*out)[2].GetAsDouble(i), static_cast<double>(i + 1));
      EXPECT_EQ(x.GetAsDouble(i), 0.5 * static_cast<double>(i));
    }
  }
}

}  // namespace
}  // namespace hlogym

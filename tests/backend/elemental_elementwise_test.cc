// The elemental emitter's elementwise ops, compiled for the CPU and compared
// element by element with the reference interpreter on edge values (NaN,
// +-inf, -0, denormals, integer extremes): exact for exact ops, a few ulps
// for libm functions.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::CompareRoot;

const std::vector<double>& FloatValues() {
  static const std::vector<double> v = {
      0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 0.1, 1e-3, 7.0, -7.0, 100.0,
      -100.0, 1e10, -1e10, 1e30, 1e-40, -1e-40, 65504.0, 70000.0, 3.0e38,
      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(), 0.7853981633974483, 12.34, -0.999, 2.0};
  return v;
}

const std::vector<int64_t>& IntValues() {
  static const std::vector<int64_t> v = {
      0, 1, -1, 2, -2, 3, 5, 7, -7, 8, 15, 16, 31, 32, 63, 64, 100, -100, 127, -128, 255,
      32767, -32768, 65535, 2147483647, -2147483647 - 1, 4294967295LL,
      std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 123456789,
      -987654321, 0x5555};
  return v;
}

// A rank-1 literal cycling through the values; with `stride` the position
// advances every `stride` elements (so two operands cover all pairs).
Literal Values(PrimitiveType type, int64_t n, int64_t stride = 1) {
  Literal l(Shape::Array(type, {n}));
  for (int64_t i = 0; i < n; ++i) {
    if (IsFloat(type)) {
      const auto& v = FloatValues();
      l.SetFromDouble(i, v[(i / stride) % v.size()]);
    } else {
      const auto& v = IntValues();
      l.SetFromInt64(i,
                     type == PrimitiveType::kPred ? (i / stride) % 2 : v[(i / stride) % v.size()]);
    }
  }
  return l;
}

std::string Name(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

std::string UnaryModule(PrimitiveType in, PrimitiveType out, const std::string& op, int64_t n) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", Name(in), "[", n, "] parameter(0)\n",
                      "  ROOT r = ", Name(out), "[", n, "] ", op, "(p0)\n}\n");
}

std::string BinaryModule(PrimitiveType in, PrimitiveType out, const std::string& op,
                         const std::string& attrs, int64_t n) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", Name(in), "[", n, "] parameter(0)\n",
                      "  p1 = ", Name(in), "[", n, "] parameter(1)\n  ROOT r = ", Name(out), "[",
                      n, "] ", op, "(p0, p1)", attrs, "\n}\n");
}

void ExpectMatch(const std::string& text, const std::vector<Literal>& args, int64_t ulps) {
  absl::StatusOr<std::string> m = CompareRoot(text, args, ulps);
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
  EXPECT_EQ(*m, "") << text;
}

constexpr PrimitiveType kFloats[] = {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kF16,
                                     PrimitiveType::kBF16};

TEST(ElementalElementwiseTest, FloatUnaryExact) {
  for (PrimitiveType t : kFloats) {
    for (const char* op : {"abs", "negate", "sign", "sqrt", "floor", "ceil",
                           "round-nearest-afz", "round-nearest-even", "copy"}) {
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(UnaryModule(t, t, op, 64), {Values(t, 64)}, 0);
    }
    ExpectMatch(UnaryModule(t, PrimitiveType::kPred, "is-finite", 64), {Values(t, 64)}, 0);
  }
}

TEST(ElementalElementwiseTest, FloatUnaryLibm) {
  for (PrimitiveType t : kFloats) {
    // rsqrt: the interpreter rounds 1/sqrt once in double, the kernel twice.
    for (const char* op : {"rsqrt", "exponential", "exponential-minus-one", "log", "log-plus-one",
                           "logistic", "tanh", "cbrt", "sine", "cosine", "tan", "erf", "atan",
                           "cosh", "sinh", "asin", "acos", "asinh", "acosh", "atanh"}) {
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(UnaryModule(t, t, op, 64), {Values(t, 64)}, 4);
    }
  }
}

TEST(ElementalElementwiseTest, InlineExpTanhLogisticAreWithinAnUlpOnADenseRange) {
  // The inline f32 versions (elemental_math.cc) over [-120, 120] and near 0.
  const int64_t n = 40000;
  Literal x(Shape::Array(PrimitiveType::kF32, {n}));
  for (int64_t i = 0; i < n / 2; ++i) x.SetFromDouble(i, -120.0 + 240.0 * i / (n / 2));
  for (int64_t i = n / 2; i < n; ++i)
    x.SetFromDouble(i, std::ldexp(1.0, -40) * (i - 3 * n / 4) * 1e7);
  for (const char* op : {"exponential", "tanh", "logistic"}) {
    SCOPED_TRACE(op);
    std::vector<Literal> args;
    args.push_back(x);
    ExpectMatch(UnaryModule(PrimitiveType::kF32, PrimitiveType::kF32, op, n), args, 1);
  }
}

// Dense f32 values for the libm ops: [-1, 1] and +-[1, 1e4] on a log scale
// (NaN outside an op's domain, on both sides).
Literal DenseFloats(int64_t n) {
  Literal x(Shape::Array(PrimitiveType::kF32, {n}));
  for (int64_t i = 0; i < n / 2; ++i) x.SetFromDouble(i, -1.0 + 2.0 * i / (n / 2));
  for (int64_t i = n / 2; i < n; ++i) {
    const double magnitude = std::pow(1e4, static_cast<double>(i - n / 2) / (n / 2));
    x.SetFromDouble(i, i % 2 == 0 ? magnitude : -magnitude);
  }
  return x;
}

TEST(ElementalElementwiseTest, VectorizedLibmIsWithinAnUlpOnADenseRange) {
  // f32 libm ops run in double (libmvec's vector functions where the loop
  // vectorizes) and are rounded once, as the interpreter computes them.
  const int64_t n = 20000;
  for (const char* op : {"sine", "cosine", "tan", "log", "log-plus-one", "exponential-minus-one",
                         "erf", "atan", "asin", "acos", "asinh", "acosh", "atanh", "sinh",
                         "cosh", "cbrt"}) {
    SCOPED_TRACE(op);
    std::vector<Literal> args;
    args.push_back(DenseFloats(n));
    ExpectMatch(UnaryModule(PrimitiveType::kF32, PrimitiveType::kF32, op, n), args, 1);
  }
  for (const char* op : {"power", "atan2"}) {
    SCOPED_TRACE(op);
    std::vector<Literal> args;
    args.push_back(DenseFloats(n));
    Literal y(Shape::Array(PrimitiveType::kF32, {n}));
    for (int64_t i = 0; i < n; ++i) y.SetFromDouble(i, -8.0 + 16.0 * ((i * 7919) % n) / n);
    args.push_back(std::move(y));
    ExpectMatch(BinaryModule(PrimitiveType::kF32, PrimitiveType::kF32, op, "", n), args, 1);
  }
}

TEST(ElementalElementwiseTest, FloatBinary) {
  const int64_t n = 32 * 32;
  for (PrimitiveType t : kFloats) {
    std::vector<Literal> args;
    args.push_back(Values(t, n));
    args.push_back(Values(t, n, 32));
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum",
                           "remainder"}) {
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(BinaryModule(t, t, op, "", n), args, 0);
    }
    for (const char* op : {"power", "atan2"}) {
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(BinaryModule(t, t, op, "", n), args, 4);
    }
    for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
      for (const char* type : {"", ", type=TOTALORDER"}) {
        SCOPED_TRACE(absl::StrCat(Name(t), " compare ", dir, type));
        ExpectMatch(BinaryModule(t, PrimitiveType::kPred, "compare",
                                 absl::StrCat(", direction=", dir, type), n),
                    args, 0);
      }
    }
  }
}

constexpr PrimitiveType kInts[] = {PrimitiveType::kS8,  PrimitiveType::kS16, PrimitiveType::kS32,
                                   PrimitiveType::kS64, PrimitiveType::kU8,  PrimitiveType::kU16,
                                   PrimitiveType::kU32, PrimitiveType::kU64, PrimitiveType::kS4,
                                   PrimitiveType::kU4};

TEST(ElementalElementwiseTest, IntegerUnary) {
  for (PrimitiveType t : kInts) {
    for (const char* op : {"not", "negate", "abs", "sign", "popcnt", "count-leading-zeros"}) {
      if (IsUnsignedInteger(t) && (std::string(op) == "abs" || std::string(op) == "sign")) {
        continue;  // the interpreter reads u64's top bit as a sign here
      }
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(UnaryModule(t, t, op, 64), {Values(t, 64)}, 0);
    }
  }
  ExpectMatch(UnaryModule(PrimitiveType::kPred, PrimitiveType::kPred, "not", 8),
              {Values(PrimitiveType::kPred, 8)}, 0);
}

TEST(ElementalElementwiseTest, IntegerBinary) {
  const int64_t n = 32 * 32;
  for (PrimitiveType t : kInts) {
    std::vector<Literal> args;
    args.push_back(Values(t, n));
    args.push_back(Values(t, n, 32));
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                           "minimum", "and", "or", "xor", "shift-left", "shift-right-logical",
                           "shift-right-arithmetic", "power"}) {
      // The interpreter reads a u64 exponent with its top bit set as
      // negative (and answers 0); the kernel raises to the unsigned power.
      if (t == PrimitiveType::kU64 && std::string(op) == "power") continue;
      SCOPED_TRACE(absl::StrCat(Name(t), " ", op));
      ExpectMatch(BinaryModule(t, t, op, "", n), args, 0);
    }
    for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
      SCOPED_TRACE(absl::StrCat(Name(t), " compare ", dir));
      ExpectMatch(BinaryModule(t, PrimitiveType::kPred, "compare",
                               absl::StrCat(", direction=", dir), n),
                  args, 0);
    }
  }
  std::vector<Literal> preds;
  preds.push_back(Values(PrimitiveType::kPred, 16));
  preds.push_back(Values(PrimitiveType::kPred, 16, 2));
  for (const char* op : {"and", "or", "xor", "maximum", "minimum"}) {
    ExpectMatch(BinaryModule(PrimitiveType::kPred, PrimitiveType::kPred, op, "", 16), preds, 0);
  }
}

TEST(ElementalElementwiseTest, ConvertBetweenAllTypes) {
  const PrimitiveType types[] = {
      PrimitiveType::kPred, PrimitiveType::kS8,  PrimitiveType::kS16, PrimitiveType::kS32,
      PrimitiveType::kS64,  PrimitiveType::kU8,  PrimitiveType::kU16, PrimitiveType::kU32,
      PrimitiveType::kU64,  PrimitiveType::kS4,  PrimitiveType::kF16, PrimitiveType::kBF16,
      PrimitiveType::kF32,  PrimitiveType::kF64};
  for (PrimitiveType from : types) {
    for (PrimitiveType to : types) {
      // s64/u64 values beyond 2^53 to f32: the interpreter rounds through
      // double first (two roundings); the kernel rounds once.
      const bool wide_int_to_f32 = (from == PrimitiveType::kS64 || from == PrimitiveType::kU64) &&
                                   to == PrimitiveType::kF32;
      SCOPED_TRACE(absl::StrCat(Name(from), " -> ", Name(to)));
      const int64_t n = wide_int_to_f32 ? 28 : 64;  // the first 28 values are small
      ExpectMatch(UnaryModule(from, to, "convert", n), {Values(from, n)}, 0);
    }
  }
}

TEST(ElementalElementwiseTest, BitcastConvertSameWidth) {
  const std::pair<PrimitiveType, PrimitiveType> pairs[] = {
      {PrimitiveType::kF32, PrimitiveType::kS32}, {PrimitiveType::kS32, PrimitiveType::kF32},
      {PrimitiveType::kF16, PrimitiveType::kU16}, {PrimitiveType::kBF16, PrimitiveType::kS16},
      {PrimitiveType::kF64, PrimitiveType::kU64}, {PrimitiveType::kU32, PrimitiveType::kF32}};
  for (auto [from, to] : pairs) {
    SCOPED_TRACE(absl::StrCat(Name(from), " -> ", Name(to)));
    ExpectMatch(UnaryModule(from, to, "bitcast-convert", 64), {Values(from, 64)}, 0);
  }
}

TEST(ElementalElementwiseTest, SelectAndClampWithScalarOperands) {
  const std::string select = R"(HloModule m
ENTRY e {
  p = pred[] parameter(0)
  a = f32[64] parameter(1)
  b = f32[64] parameter(2)
  ROOT r = f32[64] select(p, a, b)
})";
  Literal p(Shape::Scalar(PrimitiveType::kPred));
  p.SetFromInt64(0, 1);
  std::vector<Literal> args;
  args.push_back(std::move(p));
  args.push_back(Values(PrimitiveType::kF32, 64));
  args.push_back(Values(PrimitiveType::kF32, 64, 2));
  ExpectMatch(select, args, 0);

  const std::string clamp = R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[64] parameter(1)
  hi = f32[] parameter(2)
  ROOT r = f32[64] clamp(lo, x, hi)
})";
  std::vector<Literal> clamp_args;
  clamp_args.emplace_back(Shape::Scalar(PrimitiveType::kF32));
  clamp_args[0].SetFromDouble(0, -2.0);
  clamp_args.push_back(Values(PrimitiveType::kF32, 64));
  clamp_args.emplace_back(Shape::Scalar(PrimitiveType::kF32));
  clamp_args[2].SetFromDouble(0, 5.0);
  ExpectMatch(clamp, clamp_args, 0);

  const std::string select_array = R"(HloModule m
ENTRY e {
  p = pred[64] parameter(0)
  a = s32[64] parameter(1)
  b = s32[64] parameter(2)
  ROOT r = s32[64] select(p, a, b)
})";
  std::vector<Literal> select_args;
  select_args.push_back(Values(PrimitiveType::kPred, 64));
  select_args.push_back(Values(PrimitiveType::kS32, 64));
  select_args.push_back(Values(PrimitiveType::kS32, 64, 3));
  ExpectMatch(select_array, select_args, 0);
}

}  // namespace
}  // namespace hlogym

// Constant literals: every element type, special floats and NaN payloads,
// narrow floats, complex values, nesting, tuples, elided and empty arrays,
// and the range errors.
#include <cmath>
#include <cstring>
#include <string>

#include "core/ir/float_formats.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

// Parses `ROOT c = <shape> constant(<value>)` and returns its literal.
absl::StatusOr<Literal> ParseConstant(const std::string& shape, const std::string& value) {
  auto module =
      ParseModule("HloModule m\nENTRY e {\n  ROOT c = " + shape + " constant(" + value + ")\n}\n");
  if (!module.ok()) return module.status();
  return (*module)->entry()->root()->literal();
}

#define HLOGYM_CONSTANT_OR_FAIL(var, shape_text, value_text) \
  auto var##_or = ParseConstant(shape_text, value_text);     \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status();           \
  const Literal var = std::move(var##_or).value()

template <typename T>
T Bits(const Literal& literal, int64_t i) {
  return literal.data<T>()[i];
}

TEST(ParserLiteralTest, IntegersOfEveryWidth) {
  HLOGYM_CONSTANT_OR_FAIL(s8, "s8[3]{0}", "{-128, 0, 127}");
  EXPECT_EQ(s8.GetAsInt64(0), -128);
  EXPECT_EQ(s8.GetAsInt64(2), 127);
  HLOGYM_CONSTANT_OR_FAIL(u8, "u8[2]{0}", "{0, 255}");
  EXPECT_EQ(u8.GetAsInt64(1), 255);
  HLOGYM_CONSTANT_OR_FAIL(s4, "s4[2]{0}", "{-8, 7}");
  EXPECT_EQ(s4.GetAsInt64(0), -8);
  HLOGYM_CONSTANT_OR_FAIL(u4, "u4[]", "15");
  EXPECT_EQ(u4.GetAsInt64(0), 15);
  HLOGYM_CONSTANT_OR_FAIL(s16, "s16[]", "-32768");
  EXPECT_EQ(s16.GetAsInt64(0), -32768);
  HLOGYM_CONSTANT_OR_FAIL(u32, "u32[]", "4294967295");
  EXPECT_EQ(Bits<uint32_t>(u32, 0), 4294967295u);
  HLOGYM_CONSTANT_OR_FAIL(s64, "s64[2]{0}", "{-9223372036854775808, 9223372036854775807}");
  EXPECT_EQ(s64.GetAsInt64(0), INT64_MIN);
  EXPECT_EQ(s64.GetAsInt64(1), INT64_MAX);
  HLOGYM_CONSTANT_OR_FAIL(u64, "u64[]", "18446744073709551615");
  EXPECT_EQ(Bits<uint64_t>(u64, 0), UINT64_MAX);
  HLOGYM_CONSTANT_OR_FAIL(pred, "pred[4]{0}", "{true, false, 1, 0}");
  EXPECT_EQ(pred.GetAsInt64(0), 1);
  EXPECT_EQ(pred.GetAsInt64(1), 0);
  EXPECT_EQ(pred.GetAsInt64(2), 1);
}

TEST(ParserLiteralTest, IntegersOutOfRangeAreErrors) {
  struct Case {
    const char* shape;
    const char* value;
  };
  for (const Case& c :
       {Case{"s8[]", "128"}, Case{"s8[]", "-129"}, Case{"u8[]", "256"}, Case{"u8[]", "-1"},
        Case{"s4[]", "8"}, Case{"u1[]", "2"}, Case{"s64[]", "9223372036854775808"},
        Case{"u64[]", "18446744073709551616"}, Case{"s32[]", "99999999999999999999999999"}}) {
    auto literal = ParseConstant(c.shape, c.value);
    ASSERT_FALSE(literal.ok()) << c.shape << " " << c.value;
    EXPECT_NE(literal.status().message().find("out of range"), std::string::npos)
        << literal.status();
  }
}

TEST(ParserLiteralTest, FloatsIncludingSpecialValues) {
  HLOGYM_CONSTANT_OR_FAIL(f, "f32[8]{0}", "{0.5, -2, 1e-08, 3.40282347e+38, inf, -inf, nan, -nan}");
  EXPECT_EQ(f.data<float>()[0], 0.5f);
  EXPECT_EQ(f.data<float>()[1], -2.0f);
  EXPECT_EQ(f.data<float>()[2], 1e-08f);
  EXPECT_EQ(f.data<float>()[3], 3.40282347e+38f);
  EXPECT_TRUE(std::isinf(f.data<float>()[4]) && f.data<float>()[4] > 0);
  EXPECT_TRUE(std::isinf(f.data<float>()[5]) && f.data<float>()[5] < 0);
  EXPECT_TRUE(std::isnan(f.data<float>()[6]) && !std::signbit(f.data<float>()[6]));
  EXPECT_TRUE(std::isnan(f.data<float>()[7]) && std::signbit(f.data<float>()[7]));
  HLOGYM_CONSTANT_OR_FAIL(d, "f64[]", "2.2250738585072014e-308");
  EXPECT_EQ(d.data<double>()[0], 2.2250738585072014e-308);
  HLOGYM_CONSTANT_OR_FAIL(tiny, "f32[]", "1e-50");  // underflows to zero
  EXPECT_EQ(tiny.data<float>()[0], 0.0f);
}

TEST(ParserLiteralTest, NanPayloadsAreKept) {
  HLOGYM_CONSTANT_OR_FAIL(f, "f32[2]{0}", "{nan(0x1), -nan(0x7fffff)}");
  EXPECT_EQ(Bits<uint32_t>(f, 0), 0x7f800001u);
  EXPECT_EQ(Bits<uint32_t>(f, 1), 0xffffffffu);
  HLOGYM_CONSTANT_OR_FAIL(d, "f64[]", "nan(0x8000000000001)");
  EXPECT_EQ(Bits<uint64_t>(d, 0), 0x7ff8000000000001u);
  HLOGYM_CONSTANT_OR_FAIL(h, "f16[]", "nan(0x3)");
  EXPECT_EQ(Bits<uint16_t>(h, 0), 0x7c03u);
  HLOGYM_CONSTANT_OR_FAIL(b, "bf16[]", "-nan(0x41)");
  EXPECT_EQ(Bits<uint16_t>(b, 0), 0xffc1u);
  EXPECT_FALSE(ParseConstant("f16[]", "nan(0x400)").ok());  // wider than 10 bits
  EXPECT_FALSE(ParseConstant("f8e4m3fn[]", "nan(0x1)").ok());
}

TEST(ParserLiteralTest, NarrowFloatsAreEncoded) {
  HLOGYM_CONSTANT_OR_FAIL(h, "f16[3]{0}", "{1, -0.5, 65504}");
  EXPECT_EQ(Bits<uint16_t>(h, 0), FloatToHalfBits(1.0f));
  EXPECT_EQ(Bits<uint16_t>(h, 1), FloatToHalfBits(-0.5f));
  EXPECT_EQ(Bits<uint16_t>(h, 2), 0x7bffu);
  HLOGYM_CONSTANT_OR_FAIL(b, "bf16[2]{0}", "{1.5, -inf}");
  EXPECT_EQ(Bits<uint16_t>(b, 0), FloatToBF16Bits(1.5f));
  EXPECT_EQ(Bits<uint16_t>(b, 1), 0xff80u);
  HLOGYM_CONSTANT_OR_FAIL(f8, "f8e4m3fn[2]{0}", "{448, -0.25}");
  EXPECT_EQ(f8.raw_data()[0], EncodeNarrowFloat(PrimitiveType::kF8E4M3FN, 448));
  EXPECT_EQ(f8.GetAsDouble(1), -0.25);
  HLOGYM_CONSTANT_OR_FAIL(f4, "f4e2m1fn[]", "6");
  EXPECT_EQ(f4.GetAsDouble(0), 6.0);
  HLOGYM_CONSTANT_OR_FAIL(e8, "f8e8m0fnu[]", "0.25");
  EXPECT_EQ(e8.GetAsDouble(0), 0.25);
}

TEST(ParserLiteralTest, FloatsOutOfRangeAreErrors) {
  struct Case {
    const char* shape;
    const char* value;
    const char* message;
  };
  for (const Case& c : {Case{"f16[]", "70000", "out of range for f16"},
                        Case{"f32[]", "1e39", "out of range for f32"},
                        Case{"f64[]", "1e400", "out of range for f64"},
                        Case{"f8e4m3fn[]", "1000", "out of range for f8e4m3fn"},
                        Case{"f4e2m1fn[]", "100", "out of range for f4e2m1fn"},
                        Case{"f8e4m3fn[]", "inf", "f8e4m3fn has no infinity"},
                        Case{"f4e2m1fn[]", "nan", "f4e2m1fn has no NaN"},
                        Case{"f32[]", "true", "expected a f32 value"},
                        Case{"s32[]", "1.5", "expected an integer value for s32"}}) {
    auto literal = ParseConstant(c.shape, c.value);
    ASSERT_FALSE(literal.ok()) << c.shape << " " << c.value;
    EXPECT_NE(literal.status().message().find(c.message), std::string::npos) << literal.status();
  }
}

TEST(ParserLiteralTest, ComplexValues) {
  HLOGYM_CONSTANT_OR_FAIL(c, "c64[2]{0}", "{(1, -2.5), (inf, nan)}");
  EXPECT_EQ(c.GetAsComplex(0), std::complex<double>(1, -2.5));
  EXPECT_TRUE(std::isinf(c.GetAsComplex(1).real()));
  EXPECT_TRUE(std::isnan(c.GetAsComplex(1).imag()));
  HLOGYM_CONSTANT_OR_FAIL(z, "c128[]", "(0.1, 0.2)");
  EXPECT_EQ(z.GetAsComplex(0), std::complex<double>(0.1, 0.2));
}

TEST(ParserLiteralTest, NestedBracesFollowTheShape) {
  HLOGYM_CONSTANT_OR_FAIL(m, "s32[2,3]{1,0}", "{ { 1, 2, 3 }, { 4, 5, 6 } }");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m.GetAsInt64(i), i + 1);
  // Values are in logical order whatever the layout.
  HLOGYM_CONSTANT_OR_FAIL(t, "s32[2,2]{0,1}", "{{1, 2}, {3, 4}}");
  EXPECT_EQ(t.GetAsInt64(1), 2);
  HLOGYM_CONSTANT_OR_FAIL(r3, "f32[2,1,2]{2,1,0}", "{{{1, 2}}, {{3, 4}}}");
  EXPECT_EQ(r3.GetAsDouble(3), 4.0);
}

TEST(ParserLiteralTest, CountMismatchesNameTheDimension) {
  auto few = ParseConstant("s32[2,3]{1,0}", "{{1, 2, 3}, {4, 5}}");
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("dimension 1 of s32[2,3] has 3 elements but the "
                                        "literal gives 2"),
            std::string::npos)
      << few.status();
  auto many = ParseConstant("s32[2]{0}", "{1, 2, 3}");
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("has 2 elements but the literal gives more"),
            std::string::npos)
      << many.status();
  auto flat = ParseConstant("s32[2,2]{1,0}", "{1, 2, 3, 4}");
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("expected '{' for dimension 1"), std::string::npos)
      << flat.status();
}

TEST(ParserLiteralTest, TupleLiterals) {
  HLOGYM_CONSTANT_OR_FAIL(t, "(f32[], (s32[2]{0}, pred[]))", "(1.5, ({7, 8}, true))");
  ASSERT_TRUE(t.is_tuple());
  ASSERT_EQ(t.tuple_elements().size(), 2u);
  EXPECT_EQ(t.tuple_elements()[0].GetAsDouble(0), 1.5);
  const Literal& inner = t.tuple_elements()[1];
  EXPECT_EQ(inner.tuple_elements()[0].GetAsInt64(1), 8);
  EXPECT_EQ(inner.tuple_elements()[1].GetAsInt64(0), 1);
  HLOGYM_CONSTANT_OR_FAIL(empty, "()", "()");
  EXPECT_TRUE(empty.tuple_elements().empty());
  HLOGYM_CONSTANT_OR_FAIL(elided, "(f32[], s32[])", "{...}");
  EXPECT_TRUE(elided.is_elided());
}

TEST(ParserLiteralTest, ElidedAndEmptyArrays) {
  HLOGYM_CONSTANT_OR_FAIL(e, "f32[1000,1000]{1,0}", "{...}");
  EXPECT_TRUE(e.is_elided());
  EXPECT_EQ(e.shape().ToString(), "f32[1000,1000]{1,0}");
  EXPECT_EQ(e.raw_size(), 0u);  // no values invented
  HLOGYM_CONSTANT_OR_FAIL(z, "f32[0]{0}", "{}");
  EXPECT_EQ(z.element_count(), 0);
  HLOGYM_CONSTANT_OR_FAIL(z2, "f32[0,3]{1,0}", "{}");
  EXPECT_EQ(z2.element_count(), 0);
  HLOGYM_CONSTANT_OR_FAIL(z3, "f32[2,0]{1,0}", "{ {}, {} }");
  EXPECT_EQ(z3.element_count(), 0);
}

TEST(ParserLiteralTest, HugeElementCountsFailWithoutAllocating) {
  auto huge = ParseConstant("f32[1000000000000]{0}", "{1}");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("needs 1000000000000 values"), std::string::npos)
      << huge.status();
  auto overflow = ParseConstant("f32[4611686018427387904,4]{1,0}", "{...}");
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("too large"), std::string::npos) << overflow.status();
}

}  // namespace
}  // namespace hlogym

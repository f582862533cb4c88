// Constants print as XLA prints them (RoundTripFpToString: f32 with 6 digits
// unless that loses the value, then 9; f64 15 then 17; narrow floats their
// max_digits10), and every printed value parses back to the same bits.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ir/float_formats.h"
#include "core/ir/literal.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::FindInstruction;

std::string F32Text(float v) {
  Literal l(Shape::Scalar(PrimitiveType::kF32));
  std::memcpy(l.raw_data(), &v, sizeof(v));
  return l.ToString();
}

std::string F64Text(double v) {
  Literal l(Shape::Scalar(PrimitiveType::kF64));
  std::memcpy(l.raw_data(), &v, sizeof(v));
  return l.ToString();
}

std::string NarrowText(PrimitiveType type, uint32_t bits) {
  Literal l(Shape::Scalar(type));
  std::memcpy(l.raw_data(), &bits, ByteWidth(type));  // little-endian low bytes
  return l.ToString();
}

TEST(LiteralPrintTest, F32UsesSixDigitsOrNineLikeXla) {
  // Every value here is copied from JAX's text in data/corpus.
  EXPECT_EQ(F32Text(0.797884583f), "0.797884583");
  EXPECT_EQ(F32Text(4096000.0f), "4.096e+06");
  EXPECT_EQ(F32Text(-0.99999994f), "-0.99999994");
  EXPECT_EQ(F32Text(9.53674316e-07f), "9.53674316e-07");
  EXPECT_EQ(F32Text(-3.5233877e-06f), "-3.5233877e-06");
  EXPECT_EQ(F32Text(1e-08f), "1e-08");
  EXPECT_EQ(F32Text(-1e+09f), "-1e+09");
  EXPECT_EQ(F32Text(200704.0f), "200704");
  EXPECT_EQ(F32Text(0.333333343f), "0.333333343");
  EXPECT_EQ(F32Text(0.044715f), "0.044715");
  EXPECT_EQ(F32Text(2.0f), "2");
  EXPECT_EQ(F32Text(-0.0f), "-0");
  EXPECT_EQ(F32Text(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(F32Text(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(F32Text(std::numeric_limits<float>::quiet_NaN()), "nan");
  EXPECT_EQ(F32Text(-std::numeric_limits<float>::quiet_NaN()), "-nan");
  uint32_t payload_nan = 0x7f800001;
  float f;
  std::memcpy(&f, &payload_nan, sizeof(f));
  EXPECT_EQ(F32Text(f), "nan(0x1)");
}

TEST(LiteralPrintTest, F64UsesFifteenDigitsOrSeventeen) {
  EXPECT_EQ(F64Text(0.1), "0.1");
  EXPECT_EQ(F64Text(1.0 / 3.0), "0.33333333333333331");
  EXPECT_EQ(F64Text(1e300), "1e+300");
  EXPECT_EQ(F64Text(123456789012345.0), "123456789012345");
  // Subnormals keep few significant bits: 15 digits already read back.
  EXPECT_EQ(F64Text(std::numeric_limits<double>::denorm_min()), "4.94065645841247e-324");
}

TEST(LiteralPrintTest, NarrowFloatsUseTheirMaxDigits10) {
  EXPECT_EQ(NarrowText(PrimitiveType::kBF16, EncodeNarrowFloat(PrimitiveType::kBF16, 0.1)),
            "0.1001");
  EXPECT_EQ(NarrowText(PrimitiveType::kBF16, EncodeNarrowFloat(PrimitiveType::kBF16, 1.0)), "1");
  EXPECT_EQ(NarrowText(PrimitiveType::kF16, EncodeNarrowFloat(PrimitiveType::kF16, 0.1)),
            "0.099976");
  EXPECT_EQ(NarrowText(PrimitiveType::kF16, EncodeNarrowFloat(PrimitiveType::kF16, 65504)),
            "65504");
  EXPECT_EQ(NarrowText(PrimitiveType::kF8E4M3FN, EncodeNarrowFloat(PrimitiveType::kF8E4M3FN, 448)),
            "448");
  EXPECT_EQ(NarrowText(PrimitiveType::kF8E5M2, EncodeNarrowFloat(PrimitiveType::kF8E5M2, 57344)),
            "5.7e+04");
  EXPECT_EQ(NarrowText(PrimitiveType::kBF16, 0x7fc0), "nan");
  EXPECT_EQ(NarrowText(PrimitiveType::kBF16, 0xff81), "-nan(0x1)");
  EXPECT_EQ(NarrowText(PrimitiveType::kF16, 0x7c01), "nan(0x1)");
  EXPECT_EQ(NarrowText(PrimitiveType::kF16, 0xfc00), "-inf");
  // f8e8m0fnu has no zero: bits 0 are 2^-127.
  EXPECT_EQ(NarrowText(PrimitiveType::kF8E8M0FNU, 0), "5.9e-39");
  EXPECT_EQ(NarrowText(PrimitiveType::kF8E8M0FNU, 127), "1");
}

TEST(LiteralPrintTest, ComplexPartsPrintLikeTheirFloatType) {
  Literal c64(Shape::Scalar(PrimitiveType::kC64));
  c64.SetFromComplex(0, {0.797884583, -2.0});
  EXPECT_EQ(c64.ToString(), "(0.797884583, -2)");
  Literal c128(Shape::Scalar(PrimitiveType::kC128));
  c128.SetFromComplex(0, {0.1, 1.0 / 3.0});
  EXPECT_EQ(c128.ToString(), "(0.1, 0.33333333333333331)");
}

// Parses `c = <shape> constant(<literal.ToString()>)` and fails unless the
// parsed literal holds the same bytes, naming the first element that differs.
void ExpectBitsRoundTrip(const Literal& literal) {
  const std::string text =
      absl::StrCat("HloModule m\n\nENTRY e {\n  ROOT c = ", literal.shape().ToString(),
                   " constant(", literal.ToString(), ")\n}\n");
  HLOGYM_PARSE_OR_FAIL(m, text);
  const Instruction* c = FindInstruction(*m, "c");
  ASSERT_NE(c, nullptr);
  const Literal& back = c->literal();
  ASSERT_EQ(back.raw_size(), literal.raw_size());
  const size_t width = ByteWidth(literal.shape().element_type());
  for (size_t i = 0; i < literal.raw_size() / width; ++i) {
    if (std::memcmp(back.raw_data() + i * width, literal.raw_data() + i * width, width) != 0) {
      Literal one(Shape::Scalar(literal.shape().element_type()));
      std::memcpy(one.raw_data(), literal.raw_data() + i * width, width);
      ADD_FAILURE() << PrimitiveTypeName(literal.shape().element_type()) << " element " << i << " ("
                    << one.ToString() << ") does not read back bit for bit";
      return;
    }
  }
}

// Narrow NaNs without a payload syntax (f8, f4) read back as the type's one
// canonical NaN per sign; everything else must be bit-exact.
bool RoundTripsExactly(PrimitiveType type, uint32_t bits) {
  if (type == PrimitiveType::kF16 || type == PrimitiveType::kBF16) return true;
  return !std::isnan(DecodeNarrowFloat(type, bits));
}

TEST(LiteralPrintTest, EveryNarrowFloatReadsBackBitForBit) {
  for (PrimitiveType type :
       {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3,
        PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E4M3B11FNUZ, PrimitiveType::kF8E5M2FNUZ,
        PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E3M4, PrimitiveType::kF4E2M1FN,
        PrimitiveType::kF8E8M0FNU}) {
    SCOPED_TRACE(PrimitiveTypeName(type));
    const uint32_t count =
        ByteWidth(type) == 2 ? 65536u : (type == PrimitiveType::kF4E2M1FN ? 16u : 256u);
    std::vector<uint32_t> values;
    for (uint32_t bits = 0; bits < count; ++bits) {
      if (RoundTripsExactly(type, bits)) values.push_back(bits);
    }
    Literal l(Shape::Array(type, {static_cast<int64_t>(values.size())}));
    const size_t width = ByteWidth(type);
    for (size_t i = 0; i < values.size(); ++i)
      std::memcpy(l.raw_data() + i * width, &values[i], width);
    ExpectBitsRoundTrip(l);
  }
}

TEST(LiteralPrintTest, RandomF32AndF64ReadBackBitForBit) {
  std::mt19937_64 rng(42);
  constexpr int64_t kCount = 20000;
  Literal f32(Shape::Array(PrimitiveType::kF32, {kCount}));
  Literal f64(Shape::Array(PrimitiveType::kF64, {kCount}));
  for (int64_t i = 0; i < kCount; ++i) {
    const uint64_t bits = rng();
    const uint32_t bits32 = static_cast<uint32_t>(bits >> 32);
    std::memcpy(f32.raw_data() + i * 4, &bits32, 4);
    std::memcpy(f64.raw_data() + i * 8, &bits, 8);
  }
  // The edges first: signed zeros, subnormals, extremes, infinities, NaNs.
  const float f32_edges[] = {-0.0f,
                             0.0f,
                             std::numeric_limits<float>::denorm_min(),
                             -std::numeric_limits<float>::min(),
                             std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::lowest(),
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN(),
                             -std::numeric_limits<float>::quiet_NaN(),
                             16777216.0f,
                             0.1f};
  std::memcpy(f32.raw_data(), f32_edges, sizeof(f32_edges));
  const double f64_edges[] = {-0.0,
                              0.0,
                              std::numeric_limits<double>::denorm_min(),
                              -std::numeric_limits<double>::min(),
                              std::numeric_limits<double>::max(),
                              std::numeric_limits<double>::lowest(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN(),
                              -std::numeric_limits<double>::quiet_NaN(),
                              9007199254740992.0,
                              0.1};
  std::memcpy(f64.raw_data(), f64_edges, sizeof(f64_edges));
  ExpectBitsRoundTrip(f32);
  ExpectBitsRoundTrip(f64);

  Literal c64(Shape::Array(PrimitiveType::kC64, {kCount / 2}));
  std::memcpy(c64.raw_data(), f32.raw_data(), c64.raw_size());
  ExpectBitsRoundTrip(c64);
}

}  // namespace
}  // namespace hlogym

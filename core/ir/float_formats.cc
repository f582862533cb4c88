#include "core/ir/float_formats.h"

#include <cmath>

namespace hlogym {
namespace {

// How a narrow format spends its bit patterns on infinities and NaNs.
enum class Specials {
  kIeee,     // exponent all ones: inf (mantissa 0) or NaN
  kFn,       // no inf; exponent and mantissa all ones: NaN
  kFnuz,     // no inf, no -0; the pattern of -0 (sign only) is the NaN
  kNone,     // no inf, no NaN (f4e2m1fn): overflow saturates
  kE8M0,     // unsigned exponent-only; all ones is NaN
};

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

Format FormatOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return {5, 10, 15, Specials::kIeee};
    case PrimitiveType::kBF16: return {8, 7, 127, Specials::kIeee};
    case PrimitiveType::kF8E5M2: return {5, 2, 15, Specials::kIeee};
    case PrimitiveType::kF8E4M3: return {4, 3, 7, Specials::kIeee};
    case PrimitiveType::kF8E4M3FN: return {4, 3, 7, Specials::kFn};
    case PrimitiveType::kF8E4M3B11FNUZ: return {4, 3, 11, Specials::kFnuz};
    case PrimitiveType::kF8E5M2FNUZ: return {5, 2, 16, Specials::kFnuz};
    case PrimitiveType::kF8E4M3FNUZ: return {4, 3, 8, Specials::kFnuz};
    case PrimitiveType::kF8E3M4: return {3, 4, 3, Specials::kIeee};
    case PrimitiveType::kF4E2M1FN: return {2, 1, 1, Specials::kNone};
    case PrimitiveType::kF8E8M0FNU: return {8, 0, 127, Specials::kE8M0};
    default: return {8, 23, 127, Specials::kIeee};  // not a narrow type
  }
}

}  // namespace

uint32_t EncodeNarrowFloat(PrimitiveType type, double value) {
  const Format f = FormatOf(type);
  const bool has_sign = f.specials != Specials::kE8M0;
  const uint32_t sign_bit = has_sign ? 1u << (f.exponent_bits + f.mantissa_bits) : 0;
  const uint32_t exp_all_ones = (1u << f.exponent_bits) - 1;
  const uint32_t mant_all_ones = (1u << f.mantissa_bits) - 1;

  uint32_t nan_bits = 0;
  uint32_t max_bits = 0;  // largest finite magnitude
  switch (f.specials) {
    case Specials::kIeee:
      nan_bits = (exp_all_ones << f.mantissa_bits) | (1u << (f.mantissa_bits - 1));
      max_bits = ((exp_all_ones - 1) << f.mantissa_bits) | mant_all_ones;
      break;
    case Specials::kFn:
      nan_bits = (exp_all_ones << f.mantissa_bits) | mant_all_ones;
      max_bits = nan_bits - 1;
      break;
    case Specials::kFnuz:
      nan_bits = sign_bit;
      max_bits = (exp_all_ones << f.mantissa_bits) | mant_all_ones;
      break;
    case Specials::kNone:
      nan_bits = (exp_all_ones << f.mantissa_bits) | mant_all_ones;  // saturate
      max_bits = nan_bits;
      break;
    case Specials::kE8M0:
      nan_bits = 0xFF;
      max_bits = 0xFE;
      break;
  }

  if (std::isnan(value)) {
    if (f.specials == Specials::kIeee && std::signbit(value)) return nan_bits | sign_bit;
    return nan_bits;
  }
  const bool negative = std::signbit(value);
  if (negative && f.specials == Specials::kE8M0) return nan_bits;
  const uint32_t sign = negative ? sign_bit : 0;
  double a = std::fabs(value);

  auto overflow = [&]() -> uint32_t {
    switch (f.specials) {
      case Specials::kIeee: return sign | (exp_all_ones << f.mantissa_bits);
      case Specials::kNone: return sign | max_bits;
      default: return nan_bits;  // fn, fnuz and e8m0 have no infinity
    }
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) {
    if (f.specials == Specials::kE8M0) return 0;  // no zero: smallest value
    return f.specials == Specials::kFnuz ? 0 : sign;
  }

  // Scale so that the integer part holds the implicit bit and mantissa; the
  // same formula covers subnormals because the encoding is continuous.
  // Exponent of the smallest normal; e8m0 has no subnormals, and its field 0
  // is the normal 2^-bias.
  const int min_exponent = f.specials == Specials::kE8M0 ? -f.bias : 1 - f.bias;
  int exponent = std::ilogb(a);
  if (exponent < min_exponent) exponent = min_exponent;
  double q = std::nearbyint(std::ldexp(a, f.mantissa_bits - exponent));
  uint64_t significand = static_cast<uint64_t>(q);
  uint64_t bits;
  if (f.specials == Specials::kE8M0) {
    // Value is 2^(field - bias); the significand is 1 or 2 after rounding.
    int64_t field = exponent + f.bias + (significand >= 2 ? 1 : 0);
    if (field < 0) field = 0;
    bits = static_cast<uint64_t>(field);
  } else if (significand < (uint64_t{1} << f.mantissa_bits)) {
    bits = significand;  // subnormal (exponent field 0)
  } else {
    uint64_t field = static_cast<uint64_t>(exponent + f.bias);
    bits = (field << f.mantissa_bits) + (significand - (uint64_t{1} << f.mantissa_bits));
  }
  if (bits > max_bits) return overflow();
  if (bits == 0 && f.specials == Specials::kFnuz) return 0;
  return sign | static_cast<uint32_t>(bits);
}

double DecodeNarrowFloat(PrimitiveType type, uint32_t bits) {
  const Format f = FormatOf(type);
  const uint32_t exp_all_ones = (1u << f.exponent_bits) - 1;
  const uint32_t mant_all_ones = (1u << f.mantissa_bits) - 1;
  if (f.specials == Specials::kE8M0) {
    bits &= 0xFF;
    if (bits == 0xFF) return std::nan("");
    return std::ldexp(1.0, static_cast<int>(bits) - f.bias);
  }
  const uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
  bits &= (sign_bit << 1) - 1;
  const bool negative = bits & sign_bit;
  const uint32_t field = (bits >> f.mantissa_bits) & exp_all_ones;
  const uint32_t mantissa = bits & mant_all_ones;
  switch (f.specials) {
    case Specials::kIeee:
      if (field == exp_all_ones) {
        if (mantissa != 0) return negative ? -std::nan("") : std::nan("");
        return negative ? -HUGE_VAL : HUGE_VAL;
      }
      break;
    case Specials::kFn:
      if (field == exp_all_ones && mantissa == mant_all_ones) {
        return negative ? -std::nan("") : std::nan("");
      }
      break;
    case Specials::kFnuz:
      if (bits == sign_bit) return std::nan("");
      break;
    default:
      break;
  }
  double magnitude;
  if (field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << f.mantissa_bits)),
                           static_cast<int>(field) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace hlogym

// Typed element access for the interpreter's array kernels: real float
// elements read as double and written back with exactly the rounding of
// Literal::SetFromDouble (round to nearest even, straight from double),
// without a switch on the element type per element. f32, f64, bf16 and f16
// have fast paths; the f8/f4 types go through the IR's conversions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/ir/float_formats.h"
#include "core/ir/primitive_type.h"

namespace hlogym {
namespace eval_internal {

inline uint32_t FloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float BitsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// double -> float rounding to odd: truncate, and set the last bit if anything
// was dropped. Rounding that float to a format with at least two fewer
// mantissa bits (bf16, f16) then gives the correctly rounded result, as if
// rounding from double directly.
inline float ToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isnan(d)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) {
    f = std::nextafter(f, 0.0f);
  }
  return BitsFloat(FloatBits(f) | 1u);
}

}  // namespace eval_internal

// bf16 bits <-> double. NaN becomes the quiet NaN 0x7fc0 with its sign.
inline double BF16ToDouble(uint16_t bits) {
  return eval_internal::BitsFloat(static_cast<uint32_t>(bits) << 16);
}
inline uint16_t DoubleToBF16(double d) {
  if (std::isnan(d)) return std::signbit(d) ? 0xffc0 : 0x7fc0;
  const uint32_t b = eval_internal::FloatBits(eval_internal::ToFloatRoundToOdd(d));
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

// f16 bits <-> double. NaN becomes the quiet NaN 0x7e00 with its sign.
double F16ToDouble(uint16_t bits);  // exact, by a table
inline uint16_t DoubleToF16(double d) {
  if (std::isnan(d)) return std::signbit(d) ? 0xfe00 : 0x7e00;
  const float f = eval_internal::ToFloatRoundToOdd(d);
  uint32_t x = eval_internal::FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to infinity
  if (x >= 0x38800000u) {                      // a normal f16 (>= 2^-14)
    const uint32_t rounded = x + 0xfffu + ((x >> 13) & 1u) - (112u << 23);
    return sign | static_cast<uint16_t>(rounded >> 13);
  }
  // Subnormal: units of 2^-24, rounded to nearest even (scaling is exact).
  return sign | static_cast<uint16_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
}

// Element codecs: Load(data, i) -> double, Store(data, i, double), and
// Round(double), the value Store then Load would give.
struct F32Codec {
  double Load(const uint8_t* p, int64_t i) const {
    return reinterpret_cast<const float*>(p)[i];
  }
  void Store(uint8_t* p, int64_t i, double v) const {
    reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
  }
  double Round(double v) const { return static_cast<float>(v); }
};
struct F64Codec {
  double Load(const uint8_t* p, int64_t i) const {
    return reinterpret_cast<const double*>(p)[i];
  }
  void Store(uint8_t* p, int64_t i, double v) const { reinterpret_cast<double*>(p)[i] = v; }
  double Round(double v) const { return v; }
};
struct BF16Codec {
  double Load(const uint8_t* p, int64_t i) const {
    return BF16ToDouble(reinterpret_cast<const uint16_t*>(p)[i]);
  }
  void Store(uint8_t* p, int64_t i, double v) const {
    reinterpret_cast<uint16_t*>(p)[i] = DoubleToBF16(v);
  }
  double Round(double v) const { return BF16ToDouble(DoubleToBF16(v)); }
};
struct F16Codec {
  double Load(const uint8_t* p, int64_t i) const {
    return F16ToDouble(reinterpret_cast<const uint16_t*>(p)[i]);
  }
  void Store(uint8_t* p, int64_t i, double v) const {
    reinterpret_cast<uint16_t*>(p)[i] = DoubleToF16(v);
  }
  double Round(double v) const { return F16ToDouble(DoubleToF16(v)); }
};

// The f8 and f4 types (one byte each), through the IR's own conversions.
struct NarrowCodec {
  PrimitiveType type;
  double Load(const uint8_t* p, int64_t i) const { return DecodeNarrowFloat(type, p[i]); }
  void Store(uint8_t* p, int64_t i, double v) const {
    p[i] = static_cast<uint8_t>(EncodeNarrowFloat(type, v));
  }
  double Round(double v) const { return DecodeNarrowFloat(type, EncodeNarrowFloat(type, v)); }
};

// Every real float type has a codec.
inline bool HasFloatCodec(PrimitiveType t) { return IsFloat(t); }

// Calls f(codec) for a real float type; returns false for other types.
template <typename F>
bool VisitFloatCodec(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kF32: f(F32Codec{}); return true;
    case PrimitiveType::kF64: f(F64Codec{}); return true;
    case PrimitiveType::kBF16: f(BF16Codec{}); return true;
    case PrimitiveType::kF16: f(F16Codec{}); return true;
    default:
      if (!IsFloat(t)) return false;
      f(NarrowCodec{t});
      return true;
  }
}

}  // namespace hlogym

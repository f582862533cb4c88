// Conversions between double and the narrow float formats hlogym stores as
// raw bits (f16, bf16, the f8 and f4 variants), rounding to nearest even with
// each format's own rules for infinity, NaN and negative zero.
#pragma once

#include <cstdint>

#include "core/ir/primitive_type.h"

namespace hlogym {

// `type` must be one of f16, bf16 or an f8/f4 type. The bits are the low
// BitWidth(type) bits of the result.
uint32_t EncodeNarrowFloat(PrimitiveType type, double value);
double DecodeNarrowFloat(PrimitiveType type, uint32_t bits);

inline uint16_t FloatToHalfBits(float v) {
  return static_cast<uint16_t>(EncodeNarrowFloat(PrimitiveType::kF16, v));
}
inline float HalfBitsToFloat(uint16_t b) {
  return static_cast<float>(DecodeNarrowFloat(PrimitiveType::kF16, b));
}
inline uint16_t FloatToBF16Bits(float v) {
  return static_cast<uint16_t>(EncodeNarrowFloat(PrimitiveType::kBF16, v));
}
inline float BF16BitsToFloat(uint16_t b) {
  return static_cast<float>(DecodeNarrowFloat(PrimitiveType::kBF16, b));
}

}  // namespace hlogym

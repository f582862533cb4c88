// Element types of HLO arrays, and facts about each (size, class, name).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlogym {

// V(enum name, text name, bits per element as stored in a Literal).
// Sub-byte integer and float types are stored one element per byte.
#define HLOGYM_PRIMITIVE_TYPE_LIST(V) \
  V(kPred, "pred", 8)                 \
  V(kS1, "s1", 8)                     \
  V(kS2, "s2", 8)                     \
  V(kS4, "s4", 8)                     \
  V(kS8, "s8", 8)                     \
  V(kS16, "s16", 16)                  \
  V(kS32, "s32", 32)                  \
  V(kS64, "s64", 64)                  \
  V(kU1, "u1", 8)                     \
  V(kU2, "u2", 8)                     \
  V(kU4, "u4", 8)                     \
  V(kU8, "u8", 8)                     \
  V(kU16, "u16", 16)                  \
  V(kU32, "u32", 32)                  \
  V(kU64, "u64", 64)                  \
  V(kF16, "f16", 16)                  \
  V(kBF16, "bf16", 16)                \
  V(kF32, "f32", 32)                  \
  V(kF64, "f64", 64)                  \
  V(kF8E5M2, "f8e5m2", 8)             \
  V(kF8E4M3, "f8e4m3", 8)             \
  V(kF8E4M3FN, "f8e4m3fn", 8)         \
  V(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8) \
  V(kF8E5M2FNUZ, "f8e5m2fnuz", 8)     \
  V(kF8E4M3FNUZ, "f8e4m3fnuz", 8)     \
  V(kF8E3M4, "f8e3m4", 8)             \
  V(kF4E2M1FN, "f4e2m1fn", 8)         \
  V(kF8E8M0FNU, "f8e8m0fnu", 8)       \
  V(kC64, "c64", 64)                  \
  V(kC128, "c128", 128)               \
  V(kToken, "token", 0)               \
  V(kOpaque, "opaque", 0)             \
  V(kTuple, "tuple", 0)

enum class PrimitiveType : uint8_t {
#define HLOGYM_PT_ENUM(enum_name, text, bits) enum_name,
  HLOGYM_PRIMITIVE_TYPE_LIST(HLOGYM_PT_ENUM)
#undef HLOGYM_PT_ENUM
};

std::string_view PrimitiveTypeName(PrimitiveType type);
// Parses an element type name as HLO text writes it ("f32", "pred", ...).
// "tuple" is not a name HLO text uses, so it is not accepted.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);

// Bytes per element in hlogym's in-memory storage (Literal, interpreter).
int ByteWidth(PrimitiveType type);
// Bits of the logical type (4 for s4, 16 for bf16, ...).
int BitWidth(PrimitiveType type);

bool IsSignedInteger(PrimitiveType type);
bool IsUnsignedInteger(PrimitiveType type);
inline bool IsInteger(PrimitiveType type) {
  return IsSignedInteger(type) || IsUnsignedInteger(type);
}
bool IsFloat(PrimitiveType type);     // f16, bf16, f32, f64 and the f8/f4 types
bool IsComplex(PrimitiveType type);   // c64, c128
// An array element type (everything except token, opaque and tuple).
bool IsArrayType(PrimitiveType type);

}  // namespace hlogym

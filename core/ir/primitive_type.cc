#include "core/ir/primitive_type.h"

#include <array>

#include "absl/container/flat_hash_map.h"

namespace hlogym {
namespace {

struct TypeInfo {
  std::string_view name;
  int storage_bits;
};

constexpr std::array<TypeInfo, static_cast<int>(PrimitiveType::kTuple) + 1>
    kTypeInfo = {{
#define HLOGYM_PT_INFO(enum_name, text, bits) {text, bits},
        HLOGYM_PRIMITIVE_TYPE_LIST(HLOGYM_PT_INFO)
#undef HLOGYM_PT_INFO
    }};

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  return kTypeInfo[static_cast<int>(type)].name;
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<std::string_view, PrimitiveType>();
    for (int i = 0; i < static_cast<int>(PrimitiveType::kTuple); ++i) {
      map->emplace(kTypeInfo[i].name, static_cast<PrimitiveType>(i));
    }
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

int ByteWidth(PrimitiveType type) {
  return kTypeInfo[static_cast<int>(type)].storage_bits / 8;
}

int BitWidth(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: case PrimitiveType::kS1: case PrimitiveType::kU1:
      return 1;
    case PrimitiveType::kS2: case PrimitiveType::kU2:
      return 2;
    case PrimitiveType::kS4: case PrimitiveType::kU4:
    case PrimitiveType::kF4E2M1FN:
      return 4;
    default:
      return kTypeInfo[static_cast<int>(type)].storage_bits;
  }
}

bool IsSignedInteger(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInteger(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4:
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsFloat(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16:
    case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E3M4: case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

bool IsComplex(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

bool IsArrayType(PrimitiveType type) {
  return type != PrimitiveType::kToken && type != PrimitiveType::kOpaque &&
         type != PrimitiveType::kTuple;
}

}  // namespace hlogym

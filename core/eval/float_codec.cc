#include "core/eval/float_codec.h"

#include <array>

#include "core/ir/float_formats.h"

namespace hlogym {

double F16ToDouble(uint16_t bits) {
  // Every f16 value is exact in float; the table is built by the IR's own
  // decoder, so the two cannot disagree.
  static const std::array<float, 65536>* table = [] {
    auto* t = new std::array<float, 65536>();
    for (uint32_t b = 0; b < 65536; ++b) {
      (*t)[b] = static_cast<float>(DecodeNarrowFloat(PrimitiveType::kF16, b));
    }
    return t;
  }();
  return (*table)[bits];
}

}  // namespace hlogym

#include "core/ir/literal.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "core/ir/float_formats.h"

namespace hlogym {
namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Wraps an integer to the logical width of a (possibly sub-byte) type.
int64_t WrapToWidth(PrimitiveType type, int64_t v) {
  const int bits = BitWidth(type);
  if (bits >= 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (IsSignedInteger(type) && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

// The fewer of XLA's two digit counts that reads back to the same T: XLA's
// RoundTripFpToString tries "%.<digits10>g" and falls back to
// "%.<max_digits10>g" (f32: 6 then 9, f64: 15 then 17). This, not the
// shortest decimal, is what JAX's text holds: 0.797884583, 4.096e+06.
template <typename T>
std::string DigitsThatRoundTrip(T v, int digits10, int max_digits10) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%.*g", digits10, static_cast<double>(v));
  T back{};
  const auto r = std::from_chars(buf, buf + n, back);
  if (r.ec != std::errc() || back != v) {
    n = std::snprintf(buf, sizeof(buf), "%.*g", max_digits10, static_cast<double>(v));
  }
  return std::string(buf, n);
}

// std::numeric_limits<T>::max_digits10 of the narrow float types as
// ml_dtypes defines it, ceil(mantissa digits * log10(2) + 1): XLA prints
// them with exactly this many significant digits.
int NarrowMaxDigits10(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return 5;
    case PrimitiveType::kBF16: return 4;
    case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E4M3FNUZ: return 3;
    default: return 2;  // f8e5m2, f8e5m2fnuz, f4e2m1fn, f8e8m0fnu
  }
}

// XLA appends a NaN's mantissa bits (`payload`) as "(0x..)" when they
// differ from the type's quiet NaN (`quiet`).
std::string NanText(bool negative, uint64_t payload, uint64_t quiet) {
  std::string s = negative ? "-nan" : "nan";
  if (payload != quiet) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), payload, 16);
    absl::StrAppend(&s, "(0x", absl::string_view(buf, r.ptr - buf), ")");
  }
  return s;
}

// The element of real float type `type` stored at `p`, as XLA prints it.
std::string FloatToText(PrimitiveType type, const uint8_t* p) {
  if (type == PrimitiveType::kF32) {
    const float v = Load<float>(p);
    if (std::isnan(v)) return NanText(std::signbit(v), Load<uint32_t>(p) & 0x7fffff, 0x400000);
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return DigitsThatRoundTrip(v, 6, 9);
  }
  if (type == PrimitiveType::kF64) {
    const double v = Load<double>(p);
    if (std::isnan(v)) {
      return NanText(std::signbit(v), Load<uint64_t>(p) & 0xfffffffffffffull, 0x8000000000000ull);
    }
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return DigitsThatRoundTrip(v, 15, 17);
  }
  const uint32_t bits = ByteWidth(type) == 2 ? Load<uint16_t>(p) : *p;
  const double v = DecodeNarrowFloat(type, bits);
  if (std::isnan(v)) {
    // Payloads of the 16-bit types only: the parser keeps no narrower ones.
    if (type == PrimitiveType::kF16) return NanText(std::signbit(v), bits & 0x3ff, 0x200);
    if (type == PrimitiveType::kBF16) return NanText(std::signbit(v), bits & 0x7f, 0x40);
    return NanText(std::signbit(v), 0, 0);
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.*g", NarrowMaxDigits10(type), v);
  return std::string(buf, n);
}

}  // namespace

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    tuple_elements_.reserve(shape.tuple_size());
    for (const Shape& s : shape.tuple_shapes()) tuple_elements_.emplace_back(s);
  } else if (shape.IsArray()) {
    data_.assign(static_cast<size_t>(shape.element_count()) *
                     ByteWidth(shape.element_type()),
                 0);
  }
}

Literal Literal::Elided(const Shape& shape) {
  Literal literal;
  literal.shape_ = shape;
  literal.elided_ = true;
  return literal;
}

Literal Literal::ScalarFromInt64(PrimitiveType type, int64_t value) {
  Literal scalar(Shape::Scalar(type));
  scalar.SetFromInt64(0, value);
  return scalar;
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.tuple_elements_ = std::move(elements);
  return literal;
}

double Literal::GetAsDouble(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  const uint8_t* p = data_.data() + index * ByteWidth(type);
  switch (type) {
    case PrimitiveType::kF32: return Load<float>(p);
    case PrimitiveType::kF64: return Load<double>(p);
    case PrimitiveType::kF16: case PrimitiveType::kBF16:
      return DecodeNarrowFloat(type, Load<uint16_t>(p));
    case PrimitiveType::kC64: return Load<std::complex<float>>(p).real();
    case PrimitiveType::kC128: return Load<std::complex<double>>(p).real();
    default:
      if (IsFloat(type)) return DecodeNarrowFloat(type, *p);
      if (IsUnsignedInteger(type)) {
        return static_cast<double>(static_cast<uint64_t>(GetAsInt64(index)));
      }
      return static_cast<double>(GetAsInt64(index));
  }
}

int64_t Literal::GetAsInt64(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  const uint8_t* p = data_.data() + index * ByteWidth(type);
  switch (type) {
    case PrimitiveType::kPred: return *p != 0;
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8:
      return Load<int8_t>(p);
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4:
    case PrimitiveType::kU8:
      return *p;
    case PrimitiveType::kS16: return Load<int16_t>(p);
    case PrimitiveType::kU16: return Load<uint16_t>(p);
    case PrimitiveType::kS32: return Load<int32_t>(p);
    case PrimitiveType::kU32: return Load<uint32_t>(p);
    case PrimitiveType::kS64: return Load<int64_t>(p);
    case PrimitiveType::kU64: return static_cast<int64_t>(Load<uint64_t>(p));
    default: {
      double d = GetAsDouble(index);
      if (std::isnan(d)) return 0;
      if (d >= 9.2233720368547758e18) return INT64_MAX;
      if (d <= -9.2233720368547758e18) return INT64_MIN;
      return static_cast<int64_t>(d);
    }
  }
}

std::complex<double> Literal::GetAsComplex(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  const uint8_t* p = data_.data() + index * ByteWidth(type);
  if (type == PrimitiveType::kC64) {
    auto c = Load<std::complex<float>>(p);
    return {c.real(), c.imag()};
  }
  if (type == PrimitiveType::kC128) return Load<std::complex<double>>(p);
  return {GetAsDouble(index), 0.0};
}

void Literal::SetFromDouble(int64_t index, double value) {
  const PrimitiveType type = shape_.element_type();
  uint8_t* p = data_.data() + index * ByteWidth(type);
  switch (type) {
    case PrimitiveType::kF32: Store<float>(p, static_cast<float>(value)); return;
    case PrimitiveType::kF64: Store<double>(p, value); return;
    case PrimitiveType::kF16: case PrimitiveType::kBF16:
      Store<uint16_t>(p, static_cast<uint16_t>(EncodeNarrowFloat(type, value)));
      return;
    case PrimitiveType::kC64:
      Store(p, std::complex<float>(static_cast<float>(value), 0.f));
      return;
    case PrimitiveType::kC128: Store(p, std::complex<double>(value, 0.0)); return;
    case PrimitiveType::kPred: *p = value != 0; return;
    default:
      if (IsFloat(type)) {
        *p = static_cast<uint8_t>(EncodeNarrowFloat(type, value));
        return;
      }
      // Integers: XLA's float-to-int conversion saturates, NaN gives 0.
      if (std::isnan(value)) {
        SetFromInt64(index, 0);
      } else if (IsUnsignedInteger(type)) {
        const double max = std::ldexp(1.0, BitWidth(type)) - 1;
        double v = value < 0 ? 0 : (value > max ? max : std::trunc(value));
        SetFromInt64(index, static_cast<int64_t>(static_cast<uint64_t>(v)));
      } else {
        const double max = std::ldexp(1.0, BitWidth(type) - 1);
        if (value >= max) {
          SetFromInt64(index, static_cast<int64_t>(static_cast<uint64_t>(max) - 1));
        } else if (value <= -max) {
          SetFromInt64(index, -static_cast<int64_t>(static_cast<uint64_t>(max) - 1) - 1);
        } else {
          SetFromInt64(index, static_cast<int64_t>(value));
        }
      }
      return;
  }
}

void Literal::SetFromInt64(int64_t index, int64_t value) {
  const PrimitiveType type = shape_.element_type();
  uint8_t* p = data_.data() + index * ByteWidth(type);
  switch (type) {
    case PrimitiveType::kPred: *p = value != 0; return;
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4:
    case PrimitiveType::kS8: case PrimitiveType::kU1: case PrimitiveType::kU2:
    case PrimitiveType::kU4: case PrimitiveType::kU8:
      *p = static_cast<uint8_t>(WrapToWidth(type, value));
      return;
    case PrimitiveType::kS16: case PrimitiveType::kU16:
      Store<uint16_t>(p, static_cast<uint16_t>(value));
      return;
    case PrimitiveType::kS32: case PrimitiveType::kU32:
      Store<uint32_t>(p, static_cast<uint32_t>(value));
      return;
    case PrimitiveType::kS64: case PrimitiveType::kU64:
      Store<uint64_t>(p, static_cast<uint64_t>(value));
      return;
    default:
      SetFromDouble(index, static_cast<double>(value));
      return;
  }
}

void Literal::SetFromComplex(int64_t index, std::complex<double> value) {
  const PrimitiveType type = shape_.element_type();
  uint8_t* p = data_.data() + index * ByteWidth(type);
  if (type == PrimitiveType::kC64) {
    Store(p, std::complex<float>(static_cast<float>(value.real()),
                                 static_cast<float>(value.imag())));
  } else if (type == PrimitiveType::kC128) {
    Store(p, value);
  } else {
    SetFromDouble(index, value.real());
  }
}

bool Literal::operator==(const Literal& o) const {
  if (!shape_.Compatible(o.shape_) || elided_ != o.elided_) return false;
  if (shape_.IsTuple()) return tuple_elements_ == o.tuple_elements_;
  return data_ == o.data_;
}

namespace {

std::string ElementToString(const Literal& literal, int64_t index) {
  const PrimitiveType type = literal.shape().element_type();
  const uint8_t* p = literal.raw_data() + index * ByteWidth(type);
  switch (type) {
    case PrimitiveType::kPred: return *p ? "true" : "false";
    case PrimitiveType::kC64: case PrimitiveType::kC128: {
      const PrimitiveType part =
          type == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
      return absl::StrCat("(", FloatToText(part, p), ", ", FloatToText(part, p + ByteWidth(part)),
                          ")");
    }
    default:
      if (IsFloat(type)) return FloatToText(type, p);
      if (type == PrimitiveType::kU64) {
        return absl::StrCat(static_cast<uint64_t>(literal.GetAsInt64(index)));
      }
      return absl::StrCat(literal.GetAsInt64(index));
  }
}

// Innermost dimension: "{a, b}"; outer dimensions: "{ {a, b}, {c, d} }".
void AppendArray(const Literal& literal, int64_t dim, int64_t* next,
                 std::string* out) {
  const Shape& shape = literal.shape();
  const int64_t size = shape.dim(dim);
  const bool innermost = dim == shape.rank() - 1;
  out->append(innermost ? "{" : "{ ");
  for (int64_t i = 0; i < size; ++i) {
    if (i) out->append(", ");
    if (innermost) {
      out->append(ElementToString(literal, (*next)++));
    } else {
      AppendArray(literal, dim + 1, next, out);
    }
  }
  out->append(innermost ? "}" : " }");
}

}  // namespace

std::string Literal::ToString() const {
  if (elided_) return "{...}";
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_elements_.size(); ++i) {
      if (i) out += ", ";
      out += tuple_elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "";
  if (shape_.rank() == 0) return ElementToString(*this, 0);
  std::string out;
  if (shape_.element_count() == 0) {
    // Zero-sized arrays still print one brace level per dimension.
    for (int64_t d = 0; d < shape_.rank(); ++d) out += "{";
    for (int64_t d = 0; d < shape_.rank(); ++d) out += "}";
    return out;
  }
  int64_t next = 0;
  AppendArray(*this, 0, &next, &out);
  return out;
}

std::vector<const void*> LeafData(absl::Span<const Literal> literals) {
  std::vector<const void*> leaves;
  for (const Literal& literal : literals) {
    if (!literal.is_tuple()) {
      leaves.push_back(literal.raw_data());
      continue;
    }
    for (const void* leaf : LeafData(literal.tuple_elements())) leaves.push_back(leaf);
  }
  return leaves;
}

}  // namespace hlogym

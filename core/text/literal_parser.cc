// Constant literals: scalars, nested braces per dimension (counts checked
// per level), tuples, complex pairs, inf/nan with payloads, and `{...}`
// (elided values: the literal keeps its shape and no data).
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/base/status_macros.h"
#include "core/ir/float_formats.h"
#include "core/text/parser_internal.h"

namespace hlogym::text_internal {
namespace {

template <typename T>
void StoreAs(uint8_t* out, T value) {
  std::memcpy(out, &value, sizeof(T));
}

// Mantissa width of the types whose NaN payloads the parser can keep.
int PayloadBits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
      return 52;
    case PrimitiveType::kF32:
      return 23;
    case PrimitiveType::kF16:
      return 10;
    case PrimitiveType::kBF16:
      return 7;
    default:
      return 0;
  }
}

// The largest finite value of a narrow float type.
double MaxFinite(PrimitiveType type) {
  double best = 0;
  const uint32_t patterns = 1u << BitWidth(type);
  for (uint32_t bits = 0; bits < patterns; ++bits) {
    const double v = DecodeNarrowFloat(type, bits);
    if (std::isfinite(v) && v > best) best = v;
  }
  return best;
}

}  // namespace

absl::Status HloParser::ParseLiteral(const Shape& shape, Literal* literal) {
  if (shape.IsTuple()) {
    if (lexer_.kind() == TokenKind::kLbrace) {
      // Tuple constants print as {...} unless large constants are printed.
      const size_t open = lexer_.peek().offset;
      lexer_.Next();
      if (EatIf(TokenKind::kDots) && EatIf(TokenKind::kRbrace)) {
        *literal = Literal::Elided(shape);
        return absl::OkStatus();
      }
      lexer_.Reset(open);
      return Expected("'(' to start a tuple literal, or {...}");
    }
    return ParseTupleLiteral(shape, literal);
  }
  if (!shape.IsArray()) {
    return Error(Cat("a constant cannot have shape ", shape.ToString()));
  }
  return ParseDenseLiteral(shape, literal);
}

absl::Status HloParser::ParseTupleLiteral(const Shape& shape, Literal* literal) {
  RETURN_IF_ERROR(EnterNesting());
  RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start a tuple literal"));
  std::vector<Literal> elements;
  elements.reserve(shape.tuple_size());
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (i > 0) {
      if (!EatIf(TokenKind::kComma)) {
        return Expected(Cat("',' and ", shape.tuple_size() - i, " more tuple literal elements"));
      }
    }
    Literal element;
    RETURN_IF_ERROR(ParseLiteral(shape.tuple_shape(i), &element));
    elements.push_back(std::move(element));
  }
  if (!EatIf(TokenKind::kRparen)) {
    return Expected(Cat("')' after ", shape.tuple_size(), " tuple literal elements"));
  }
  *literal = Literal::Tuple(std::move(elements));
  LeaveNesting();
  return absl::OkStatus();
}

absl::Status HloParser::ParseDenseLiteral(const Shape& shape, Literal* literal) {
  const PrimitiveType type = shape.element_type();
  if (shape.rank() == 0) {
    Literal scalar(shape);
    RETURN_IF_ERROR(ParseElement(type, scalar.raw_data()));
    *literal = std::move(scalar);
    return absl::OkStatus();
  }
  if (lexer_.kind() != TokenKind::kLbrace) {
    return Expected(Cat("'{' to start the values of ", shape.ToString(false)));
  }
  {
    // {...}: the printer left the values out.
    const size_t open = lexer_.peek().offset;
    lexer_.Next();
    if (EatIf(TokenKind::kDots)) {
      RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' after '...'"));
      *literal = Literal::Elided(shape);
      return absl::OkStatus();
    }
    lexer_.Reset(open);
  }
  if (!shape.is_static()) {
    return Error(Cat("not supported: constant values for dynamic shape ", shape.ToString(false)));
  }
  int64_t count = 1;
  for (int64_t d : shape.dims()) count *= d;  // no overflow: size checked
  if (count == 0) {
    RETURN_IF_ERROR(ParseEmptyArrayLiteral(shape));
    *literal = Literal(shape);
    return absl::OkStatus();
  }
  // Each value takes at least one character, so a count beyond what is left
  // of the text can only be an error; checking first avoids a huge buffer.
  const size_t remaining = lexer_.text().size() - lexer_.peek().offset;
  if (static_cast<uint64_t>(count) > remaining) {
    return Error(Cat("constant of shape ", shape.ToString(false), " needs ", count,
                     " values but only ", remaining, " characters of input remain"));
  }
  Literal dense(shape);
  int64_t next = 0;
  RETURN_IF_ERROR(ParseDenseLevel(shape, 0, &dense, &next));
  *literal = std::move(dense);
  return absl::OkStatus();
}

absl::Status HloParser::ParseDenseLevel(const Shape& shape, int64_t dim, Literal* literal,
                                        int64_t* next) {
  if (!EatIf(TokenKind::kLbrace)) {
    return Expected(Cat("'{' for dimension ", dim, " of ", shape.ToString(false)));
  }
  const int64_t size = shape.dim(dim);
  const bool innermost = dim == shape.rank() - 1;
  const PrimitiveType type = shape.element_type();
  const int width = ByteWidth(type);
  for (int64_t i = 0; i < size; ++i) {
    if (i > 0) {
      if (lexer_.kind() == TokenKind::kRbrace) {
        return Error(Cat("dimension ", dim, " of ", shape.ToString(false), " has ", size,
                         " elements but the literal gives ", i));
      }
      RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between literal values"));
    }
    if (innermost) {
      RETURN_IF_ERROR(ParseElement(type, literal->raw_data() + (*next) * width));
      ++*next;
    } else {
      RETURN_IF_ERROR(ParseDenseLevel(shape, dim + 1, literal, next));
    }
  }
  if (lexer_.kind() == TokenKind::kComma) {
    return Error(Cat("dimension ", dim, " of ", shape.ToString(false), " has ", size,
                     " elements but the literal gives more"));
  }
  if (!EatIf(TokenKind::kRbrace)) return Expected(Cat("'}' to end dimension ", dim));
  return absl::OkStatus();
}

// A zero-element array: braces only, nested no deeper than the rank.
absl::Status HloParser::ParseEmptyArrayLiteral(const Shape& shape) {
  int64_t depth = 0;
  do {
    if (lexer_.kind() == TokenKind::kLbrace) {
      if (++depth > shape.rank()) {
        return Error(Cat("literal nests deeper than the rank of ", shape.ToString(false)));
      }
    } else if (lexer_.kind() == TokenKind::kRbrace) {
      --depth;
    } else if (lexer_.kind() != TokenKind::kComma || depth == 0) {
      return Expected(Cat("no values: ", shape.ToString(false), " has no elements"));
    }
    lexer_.Next();
  } while (depth > 0);
  return absl::OkStatus();
}

absl::Status HloParser::ParseElement(PrimitiveType type, uint8_t* out) {
  const Token& t = lexer_.peek();
  if (type == PrimitiveType::kPred) {
    if (t.kind == TokenKind::kIdent && (t.text == "true" || t.text == "false")) {
      *out = t.text == "true";
    } else if (t.kind == TokenKind::kInt && (t.text == "0" || t.text == "1")) {
      *out = t.text == "1";
    } else {
      return Expected("true or false");
    }
    lexer_.Next();
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    if (t.kind != TokenKind::kInt) {
      return Expected(Cat("an integer value for ", PrimitiveTypeName(type)));
    }
    const int bits = BitWidth(type);
    const int width = ByteWidth(type);
    uint64_t bits_value;
    if (IsUnsignedInteger(type)) {
      uint64_t v;
      if (!ParseUint64Text(t.text, &v) || (bits < 64 && v > (uint64_t{1} << bits) - 1)) {
        return Error(Cat("value ", t.text, " is out of range for ", PrimitiveTypeName(type)));
      }
      bits_value = v;
    } else {
      int64_t v;
      const int64_t max =
          bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
      if (!ParseInt64Text(t.text, &v) || v > max || v < -max - 1) {
        return Error(Cat("value ", t.text, " is out of range for ", PrimitiveTypeName(type)));
      }
      bits_value = static_cast<uint64_t>(v);
    }
    switch (width) {
      case 1:
        StoreAs(out, static_cast<uint8_t>(bits_value));
        break;
      case 2:
        StoreAs(out, static_cast<uint16_t>(bits_value));
        break;
      case 4:
        StoreAs(out, static_cast<uint32_t>(bits_value));
        break;
      default:
        StoreAs(out, bits_value);
        break;
    }
    lexer_.Next();
    return absl::OkStatus();
  }
  if (IsComplex(type)) {
    const PrimitiveType part =
        type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    const int part_width = ByteWidth(part);
    RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start a complex value (re, im)"));
    RETURN_IF_ERROR(ParseElement(part, out));
    RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' between a complex value's parts"));
    RETURN_IF_ERROR(ParseElement(part, out + part_width));
    return Expect(TokenKind::kRparen, "')' to end a complex value");
  }
  if (!IsFloat(type)) {
    return Error(Cat("not supported: literal values of type ", PrimitiveTypeName(type)));
  }

  const size_t offset = t.offset;
  const std::string_view shown = t.text;
  double value;
  uint64_t payload = 0;
  bool is_nan = false;
  RETURN_IF_ERROR(ParseFloatScalar(type, &value, &payload, &is_nan));
  auto out_of_range = [&] {
    return ErrorAt(offset, Cat("value ", shown, " is out of range for ", PrimitiveTypeName(type)));
  };
  const bool negative = std::signbit(value);
  if (payload != 0) {
    const int mbits = PayloadBits(type);
    if (mbits == 0) {
      return ErrorAt(offset, Cat("not supported: NaN payloads for ", PrimitiveTypeName(type)));
    }
    if (payload >> mbits) {
      return ErrorAt(offset, Cat("NaN payload does not fit the ", mbits, "-bit mantissa of ",
                                 PrimitiveTypeName(type)));
    }
    const int total = BitWidth(type);
    const uint64_t exponent_mask = ((uint64_t{1} << (total - 1 - mbits)) - 1) << mbits;
    const uint64_t bits = (negative ? uint64_t{1} << (total - 1) : 0) | exponent_mask | payload;
    switch (total) {
      case 64:
        StoreAs(out, bits);
        break;
      case 32:
        StoreAs(out, static_cast<uint32_t>(bits));
        break;
      default:
        StoreAs(out, static_cast<uint16_t>(bits));
        break;
    }
    return absl::OkStatus();
  }
  switch (type) {
    case PrimitiveType::kF64:
      StoreAs(out, value);
      return absl::OkStatus();
    case PrimitiveType::kF32: {
      const float f = static_cast<float>(value);
      if (std::isinf(f) && std::isfinite(value)) return out_of_range();
      StoreAs(out, f);
      return absl::OkStatus();
    }
    default:
      break;
  }
  const uint32_t bits = EncodeNarrowFloat(type, value);
  if (std::isfinite(value)) {
    if (!std::isfinite(DecodeNarrowFloat(type, bits))) return out_of_range();
    if (type == PrimitiveType::kF4E2M1FN) {  // saturates rather than overflows
      static const double max = MaxFinite(PrimitiveType::kF4E2M1FN);
      if (std::fabs(value) > max) return out_of_range();
    }
  } else if (std::isnan(value) != std::isnan(DecodeNarrowFloat(type, bits))) {
    return ErrorAt(offset, Cat(PrimitiveTypeName(type), " has no ", is_nan ? "NaN" : "infinity"));
  }
  if (ByteWidth(type) == 2) {
    StoreAs(out, static_cast<uint16_t>(bits));
  } else {
    *out = static_cast<uint8_t>(bits);
  }
  return absl::OkStatus();
}

// DECIMAL | INT | inf | -inf | nan | -nan | nan(0x<payload>)
absl::Status HloParser::ParseFloatScalar(PrimitiveType type, double* value, uint64_t* nan_payload,
                                         bool* is_nan) {
  bool negative = false;
  if (lexer_.kind() == TokenKind::kMinus) {
    negative = true;
    lexer_.Next();
    if (lexer_.kind() != TokenKind::kIdent) return Expected("inf or nan after '-'");
  }
  const Token t = lexer_.peek();
  if (t.kind == TokenKind::kIdent) {
    if (t.text == "inf") {
      lexer_.Next();
      *value = negative ? -HUGE_VAL : HUGE_VAL;
      return absl::OkStatus();
    }
    if (t.text == "nan") {
      lexer_.Next();
      *is_nan = true;
      *value = negative ? -std::numeric_limits<double>::quiet_NaN()
                        : std::numeric_limits<double>::quiet_NaN();
      if (lexer_.kind() == TokenKind::kLparen && t.end == lexer_.peek().offset) {
        lexer_.Next();
        const Token p = lexer_.peek();
        if (p.kind != TokenKind::kInt || p.text.size() < 3 || p.text[0] != '0' ||
            (p.text[1] != 'x' && p.text[1] != 'X')) {
          return Expected("a hexadecimal NaN payload such as 0x1");
        }
        if (!ParseUint64Text(p.text, nan_payload) || *nan_payload == 0) {
          return Error("NaN payload must be nonzero and fit in 64 bits");
        }
        lexer_.Next();
        RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the NaN payload"));
      }
      return absl::OkStatus();
    }
    return Expected(Cat("a ", PrimitiveTypeName(type), " value"));
  }
  if (negative || (t.kind != TokenKind::kDecimal && t.kind != TokenKind::kInt) ||
      (t.text.size() > 2 && (t.text[1] == 'x' || t.text[1] == 'X'))) {
    return Expected(Cat("a ", PrimitiveTypeName(type), " value"));
  }
  const char* first = t.text.data();
  const char* last = first + t.text.size();
  auto [ptr, ec] = std::from_chars(first, last, *value);
  if (ec == std::errc::result_out_of_range) {
    // Underflow rounds to zero or a subnormal; overflow is an error.
    std::string copy(t.text);
    const double v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) {
      return Error(Cat("value ", t.text, " is out of range for ", PrimitiveTypeName(type)));
    }
    *value = v;
  } else if (ec != std::errc() || ptr != last) {
    return Expected(Cat("a ", PrimitiveTypeName(type), " value"));
  }
  lexer_.Next();
  return absl::OkStatus();
}

}  // namespace hlogym::text_internal

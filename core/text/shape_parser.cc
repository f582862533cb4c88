// Shapes and layouts: f32[8,4]{1,0}, (s32[], f32[<=4,?]), token[],
// f32[128,8]{1,0:T(8,128)E(32)S(1)}.
#include <utility>

#include "absl/container/inlined_vector.h"
#include "core/base/status_macros.h"
#include "core/text/parser_internal.h"

namespace hlogym::text_internal {
namespace {

// Bytes of an array shape (bounded dimensions at their bound, unbounded ones
// counted as 0), or nullopt when that does not fit in int64.
std::optional<int64_t> ArrayByteSize(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape.dims()) {
    if (d == kUnboundedSize) {
      count = 0;
      continue;
    }
    if (__builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(count, int64_t{ByteWidth(shape.element_type())}, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

// ArrayByteSize for any shape; tuples add up their elements.
std::optional<int64_t> ShapeByteSize(const Shape& shape) {
  if (!shape.IsTuple()) {
    if (!shape.IsArray()) return 0;
    return ArrayByteSize(shape);
  }
  int64_t total = 0;
  for (const Shape& element : shape.tuple_shapes()) {
    std::optional<int64_t> bytes = ShapeByteSize(element);
    if (!bytes || __builtin_add_overflow(total, *bytes, &total)) return std::nullopt;
  }
  return total;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::optional<PrimitiveType> ElementTypeFromName(std::string_view name) {
  // Names grouped by length; a handful of short compares beats hashing.
  constexpr size_t kMaxLength = 16;
  struct Entry {
    std::string_view name;
    PrimitiveType type;
  };
  static const auto* by_length = [] {
    auto* table = new std::vector<Entry>[kMaxLength];
    for (int i = 0; i < static_cast<int>(PrimitiveType::kTuple); ++i) {
      const auto type = static_cast<PrimitiveType>(i);
      const std::string_view n = PrimitiveTypeName(type);
      if (n.size() < kMaxLength) table[n.size()].push_back({n, type});
    }
    return table;
  }();
  if (name.size() >= kMaxLength) return std::nullopt;
  for (const Entry& e : by_length[name.size()]) {
    if (e.name == name) return e.type;
  }
  return std::nullopt;
}

bool HloParser::AtShape() const {
  const Token& t = lexer_.peek();
  if (t.kind == TokenKind::kLparen) return true;
  if (t.kind != TokenKind::kIdent) return false;
  // Only shapes put '[' after an identifier; ParseArrayShape checks the type.
  // (b(...) is a buffer shape, which ParseArrayShape reports unsupported.)
  const char next = lexer_.CharAt(lexer_.SkipSpace(t.end));
  return next == '[' || (next == '(' && t.text == "b");
}

absl::Status HloParser::ParseShape(Shape* shape) {
  if (lexer_.kind() != TokenKind::kLparen) return ParseArrayShape(shape);
  RETURN_IF_ERROR(EnterNesting());
  const size_t start = lexer_.peek().offset;
  lexer_.Next();
  std::vector<Shape> elements;
  if (!EatIf(TokenKind::kRparen)) {
    do {
      Shape element;
      RETURN_IF_ERROR(ParseShape(&element));
      elements.push_back(std::move(element));
    } while (EatIf(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in a tuple shape"));
  }
  *shape = Shape::Tuple(std::move(elements));
  LeaveNesting();
  return CheckShapeSize(*shape, start);
}

absl::Status HloParser::ParseArrayShape(Shape* shape) {
  const Token type_token = lexer_.peek();
  if (type_token.kind != TokenKind::kIdent) return Expected("a shape");
  std::optional<PrimitiveType> type = ElementTypeFromName(type_token.text);
  if (!type) {
    if (type_token.text == "b" && lexer_.FollowedBy('(')) {
      return Error("not supported: buffer shapes b(...)");
    }
    return Error(Cat("unknown element type '", type_token.text, "'"));
  }
  lexer_.Next();
  if (!EatIf(TokenKind::kLsquare)) {
    return Expected(Cat("'[' after element type '", type_token.text, "'"));
  }
  if (*type == PrimitiveType::kToken || *type == PrimitiveType::kOpaque) {
    if (!EatIf(TokenKind::kRsquare)) {
      return Expected(Cat("']': ", type_token.text, "[] has no dimensions"));
    }
    *shape = *type == PrimitiveType::kToken ? Shape::Token() : Shape::Opaque();
    return absl::OkStatus();
  }

  absl::InlinedVector<int64_t, 8> dims;
  uint64_t dynamic = 0;
  if (!EatIf(TokenKind::kRsquare)) {
    do {
      if (static_cast<int64_t>(dims.size()) == kMaxRank) {
        return Error(Cat("rank exceeds the maximum of ", kMaxRank));
      }
      if (EatIf(TokenKind::kQuestion)) {
        dynamic |= uint64_t{1} << dims.size();
        dims.push_back(kUnboundedSize);
        continue;
      }
      const bool bounded = EatIf(TokenKind::kLeq);
      const size_t dim_offset = lexer_.peek().offset;
      int64_t size;
      RETURN_IF_ERROR(ParseInt64(&size));
      if (size < 0) {
        return ErrorAt(dim_offset, Cat("negative dimension size ", size));
      }
      if (bounded) dynamic |= uint64_t{1} << dims.size();
      dims.push_back(size);
    } while (EatIf(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "',' or ']' in the dimensions"));
  }
  Shape result;
  result.set_element_type(*type);
  result.mutable_dims().assign(dims.begin(), dims.end());
  for (size_t i = 0; i < dims.size(); ++i) {
    if ((dynamic >> i) & 1) result.set_dynamic_dim(static_cast<int64_t>(i), true);
  }
  if (!ArrayByteSize(result)) {
    return ErrorAt(type_token.offset, Cat("shape ", result.ToString(false),
                                          " is too large (its byte size overflows int64)"));
  }
  // '{' after an array starts a layout only when an integer or ':' follows
  // (or '}' for a scalar), so `-> f32[2] {` still opens a computation body.
  if (lexer_.kind() == TokenKind::kLbrace) {
    const char next = lexer_.CharAt(lexer_.SkipSpace(lexer_.peek().end));
    if (IsDigit(next) || next == ':' || (next == '}' && dims.empty())) {
      RETURN_IF_ERROR(ParseLayout(&result));
    }
  }
  *shape = std::move(result);
  return absl::OkStatus();
}

absl::Status HloParser::ParseLayout(Shape* shape) {
  const size_t start = lexer_.peek().offset;
  lexer_.Next();  // '{'
  Layout layout;
  layout.minor_to_major.reserve(shape->rank());
  if (lexer_.kind() == TokenKind::kInt) {
    do {
      const size_t offset = lexer_.peek().offset;
      int64_t dim;
      RETURN_IF_ERROR(ParseInt64(&dim));
      if (dim < 0 || dim >= shape->rank()) {
        return ErrorAt(offset,
                       Cat("layout dimension ", dim, " is out of range for rank ", shape->rank()));
      }
      for (int64_t seen : layout.minor_to_major) {
        if (seen == dim) {
          return ErrorAt(offset, Cat("layout dimension ", dim, " repeats"));
        }
      }
      layout.minor_to_major.push_back(dim);
    } while (EatIf(TokenKind::kComma));
  }
  if (lexer_.kind() == TokenKind::kColon) {
    auto extras = std::make_shared<LayoutExtras>();
    RETURN_IF_ERROR(ParseLayoutExtras(extras.get()));
    if (!extras->tiles.empty() || extras->element_size_bits != 0 || extras->memory_space != 0 ||
        !extras->other.empty()) {
      layout.extras = std::move(extras);
    }
  }
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in the layout"));
  if (static_cast<int64_t>(layout.minor_to_major.size()) != shape->rank()) {
    return ErrorAt(start, Cat("layout has ", layout.minor_to_major.size(),
                              " dimensions but the shape has rank ", shape->rank()));
  }
  shape->set_layout(std::move(layout));
  return absl::OkStatus();
}

// After ':' in a layout: T(8,128)(2,1) tiles, E(n) element bits, S(n) memory
// space typed; D(..), L(..), #(..), *(..), SC(..), P(..), M(..) verbatim.
absl::Status HloParser::ParseLayoutExtras(LayoutExtras* extras) {
  const std::string_view text = lexer_.text();
  size_t pos = lexer_.peek().end;  // after ':'
  auto skip_space = [&] {
    while (pos < text.size() && IsSpace(text[pos])) ++pos;
  };
  auto expect_char = [&](char c, std::string_view what) -> absl::Status {
    skip_space();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return absl::OkStatus();
    }
    lexer_.Reset(pos);
    return Expected(what);
  };
  while (true) {
    skip_space();
    if (pos >= text.size()) {
      lexer_.Reset(pos);
      return Expected("'}' to end the layout");
    }
    const char c = text[pos];
    if (c == '}') break;
    const size_t item_start = pos;
    if (c == 'T' && pos + 1 < text.size() && text[pos + 1] == '(') {
      ++pos;
      while (pos < text.size() && text[pos] == '(') {
        ++pos;
        std::vector<int64_t> tile;
        while (true) {
          skip_space();
          if (pos < text.size() && text[pos] == '*') {
            ++pos;
            tile.push_back(kCombineDimension);
          } else {
            int64_t value;
            RETURN_IF_ERROR(ScanIntAt(&pos, &value, /*allow_negative=*/false));
            tile.push_back(value);
          }
          skip_space();
          if (pos < text.size() && text[pos] == ',') {
            ++pos;
            continue;
          }
          RETURN_IF_ERROR(expect_char(')', "',' or ')' in a layout tile"));
          break;
        }
        extras->tiles.push_back(std::move(tile));
      }
      continue;
    }
    if ((c == 'E' || c == 'S') && pos + 1 < text.size() && text[pos + 1] == '(') {
      pos += 2;
      int64_t value;
      RETURN_IF_ERROR(ScanIntAt(&pos, &value, /*allow_negative=*/false));
      RETURN_IF_ERROR(expect_char(')', "')' after the layout value"));
      (c == 'E' ? extras->element_size_bits : extras->memory_space) = value;
      continue;
    }
    // Any other part: a tag (letters, '#' or '*') and balanced (...) groups.
    while (pos < text.size() && (IsIdentStart(text[pos]) || text[pos] == '#' || text[pos] == '*')) {
      ++pos;
    }
    if (pos == item_start || pos >= text.size() || text[pos] != '(') {
      lexer_.Reset(item_start);
      return Expected("a layout part such as T(...), E(n) or S(n)");
    }
    while (pos < text.size() && text[pos] == '(') {
      int depth = 0;
      do {
        const char d = text[pos++];
        if (d == '(' || d == '[' || d == '{') {
          if (++depth > kMaxNestingDepth) {
            lexer_.Reset(pos - 1);
            return Error("layout nests too deeply");
          }
        } else if (d == ')' || d == ']' || d == '}') {
          --depth;
        }
      } while (depth > 0 && pos < text.size());
      if (depth != 0) {
        lexer_.Reset(item_start);
        return Error("unbalanced parentheses in the layout");
      }
    }
    extras->other.append(text.substr(item_start, pos - item_start));
  }
  lexer_.Reset(pos);
  return absl::OkStatus();
}

absl::Status HloParser::CheckShapeSize(const Shape& shape, size_t offset) const {
  if (!ShapeByteSize(shape)) {
    return ErrorAt(offset, "tuple shape is too large (its byte size overflows int64)");
  }
  return absl::OkStatus();
}

}  // namespace hlogym::text_internal

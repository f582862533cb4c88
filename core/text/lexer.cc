#include "core/text/lexer.h"

#include <cctype>
#include <cstring>

namespace hlogym {

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof:
      return "end of input";
    case TokenKind::kError:
      return "malformed input";
    case TokenKind::kIdent:
      return "an identifier";
    case TokenKind::kName:
      return "a %name";
    case TokenKind::kInt:
      return "an integer";
    case TokenKind::kDecimal:
      return "a decimal number";
    case TokenKind::kString:
      return "a string";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kLbrace:
      return "'{'";
    case TokenKind::kRbrace:
      return "'}'";
    case TokenKind::kLparen:
      return "'('";
    case TokenKind::kRparen:
      return "')'";
    case TokenKind::kLsquare:
      return "'['";
    case TokenKind::kRsquare:
      return "']'";
    case TokenKind::kArrow:
      return "'->'";
    case TokenKind::kLeq:
      return "'<='";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kDots:
      return "'...'";
    case TokenKind::kOther:
      return "a character";
  }
  return "a token";
}

size_t Lexer::SkipSpace(size_t i) const {
  const size_t n = text_.size();
  while (i < n) {
    const char c = text_[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && text_[i + 1] == '*') {
      const size_t close = text_.find("*/", i + 2);
      if (close == std::string_view::npos) return i;  // Lex reports it
      i = close + 2;
    } else if (c == '/' && i + 1 < n && text_[i + 1] == '/') {
      const void* nl = std::memchr(text_.data() + i, '\n', n - i);
      i = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1 : n;
    } else {
      break;
    }
  }
  return i;
}

void Lexer::SetError(size_t start, size_t end, std::string_view message) {
  token_.kind = TokenKind::kError;
  token_.offset = start;
  token_.end = end;
  token_.text = text_.substr(start, end - start);
  error_ = message;
}

void Lexer::Lex(size_t offset) {
  const size_t n = text_.size();
  size_t i = offset < n ? offset : n;
  // Plain whitespace inline; comments (rare) in SkipSpace.
  while (i < n && (text_[i] == ' ' || text_[i] == '\n')) ++i;
  if (i < n && (text_[i] == '/' || text_[i] == '\t' || text_[i] == '\r')) i = SkipSpace(i);
  token_.offset = i;
  if (i >= n) {
    token_.kind = TokenKind::kEof;
    token_.text = {};
    token_.end = n;
    return;
  }
  const char c = text_[i];
  if (c == '/' && i + 1 < n && text_[i + 1] == '*') {
    SetError(i, n, "unterminated comment ('/*' without '*/')");
    return;
  }
  auto single = [&](TokenKind kind, size_t len) {
    token_.kind = kind;
    token_.text = text_.substr(i, len);
    token_.end = i + len;
  };
  if (IsIdentStart(c)) {
    size_t j = i + 1;
    while (j < n && IsIdentChar(text_[j])) ++j;
    // A trailing '-' that starts '->' belongs to the arrow.
    if (j < n && text_[j] == '>' && text_[j - 1] == '-' && j - 1 > i) --j;
    single(TokenKind::kIdent, j - i);
    return;
  }
  if (IsDigit(c)) {
    LexNumber(i);
    return;
  }
  switch (c) {
    case '%': {
      size_t j = i + 1;
      if (j >= n || !(IsIdentStart(text_[j]) || IsDigit(text_[j]))) {
        SetError(i, i + 1, "'%' must be followed by a name");
        return;
      }
      while (j < n && IsIdentChar(text_[j])) ++j;
      if (j < n && text_[j] == '>' && text_[j - 1] == '-' && j - 1 > i + 1) --j;
      token_.kind = TokenKind::kName;
      token_.text = text_.substr(i + 1, j - i - 1);
      token_.end = j;
      return;
    }
    case '"':
    case '\'':
      LexString(i);
      return;
    case '-':
      if (i + 1 < n && text_[i + 1] == '>') return single(TokenKind::kArrow, 2);
      if (i + 1 < n &&
          (IsDigit(text_[i + 1]) || (text_[i + 1] == '.' && i + 2 < n && IsDigit(text_[i + 2])))) {
        LexNumber(i);
        return;
      }
      return single(TokenKind::kMinus, 1);
    case '.':
      if (i + 2 < n && text_[i + 1] == '.' && text_[i + 2] == '.') {
        return single(TokenKind::kDots, 3);
      }
      if (i + 1 < n && IsDigit(text_[i + 1])) {
        LexNumber(i);
        return;
      }
      return single(TokenKind::kOther, 1);
    case '<':
      if (i + 1 < n && text_[i + 1] == '=') return single(TokenKind::kLeq, 2);
      return single(TokenKind::kOther, 1);
    case '=':
      return single(TokenKind::kEqual, 1);
    case ',':
      return single(TokenKind::kComma, 1);
    case ':':
      return single(TokenKind::kColon, 1);
    case '{':
      return single(TokenKind::kLbrace, 1);
    case '}':
      return single(TokenKind::kRbrace, 1);
    case '(':
      return single(TokenKind::kLparen, 1);
    case ')':
      return single(TokenKind::kRparen, 1);
    case '[':
      return single(TokenKind::kLsquare, 1);
    case ']':
      return single(TokenKind::kRsquare, 1);
    case '?':
      return single(TokenKind::kQuestion, 1);
    case '*':
      return single(TokenKind::kStar, 1);
    default: {
      // One UTF-8 sequence at most, so that the error shows a whole character.
      size_t len = 1;
      const unsigned char u = static_cast<unsigned char>(c);
      if (u >= 0xC0) {
        while (i + len < n && len < 4 &&
               (static_cast<unsigned char>(text_[i + len]) & 0xC0) == 0x80) {
          ++len;
        }
      }
      return single(TokenKind::kOther, len);
    }
  }
}

void Lexer::LexNumber(size_t start) {
  const size_t n = text_.size();
  size_t j = start;
  if (text_[j] == '-') ++j;
  // Hexadecimal integers (NaN payloads): 0x1f.
  if (j + 2 < n && text_[j] == '0' && (text_[j + 1] == 'x' || text_[j + 1] == 'X') &&
      std::isxdigit(static_cast<unsigned char>(text_[j + 2]))) {
    j += 2;
    while (j < n && std::isxdigit(static_cast<unsigned char>(text_[j]))) ++j;
    token_.kind = TokenKind::kInt;
    token_.text = text_.substr(start, j - start);
    token_.end = j;
    return;
  }
  bool is_decimal = false;
  while (j < n && IsDigit(text_[j])) ++j;
  if (j < n && text_[j] == '.' && !(j + 1 < n && text_[j + 1] == '.')) {
    is_decimal = true;
    ++j;
    while (j < n && IsDigit(text_[j])) ++j;
  }
  if (j < n && (text_[j] == 'e' || text_[j] == 'E')) {
    size_t k = j + 1;
    if (k < n && (text_[k] == '+' || text_[k] == '-')) ++k;
    if (k < n && IsDigit(text_[k])) {
      while (k < n && IsDigit(text_[k])) ++k;
      j = k;
      is_decimal = true;
    }
  }
  token_.kind = is_decimal ? TokenKind::kDecimal : TokenKind::kInt;
  token_.text = text_.substr(start, j - start);
  token_.end = j;
}

void Lexer::LexString(size_t start) {
  const char quote = text_[start];
  const size_t n = text_.size();
  size_t j = start + 1;
  while (j < n) {
    const char c = text_[j];
    if (c == '\\') {
      j += 2;
      continue;
    }
    if (c == quote) {
      token_.kind = TokenKind::kString;
      token_.text = text_.substr(start, j + 1 - start);
      token_.end = j + 1;
      return;
    }
    ++j;
  }
  SetError(start, n, "unterminated string");
}

TextPosition Lexer::PositionOf(size_t offset) const {
  if (offset > text_.size()) offset = text_.size();
  TextPosition pos;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text_[i] == '\n') {
      ++pos.line;
      line_start = i + 1;
    }
  }
  pos.column = static_cast<int64_t>(offset - line_start) + 1;
  return pos;
}

}  // namespace hlogym

// Lexer for HLO text: turns a string_view into tokens without copying or
// allocating. Whitespace and comments (`/* ... */`, `// ...`) are skipped.
// Value forms whose spelling clashes with ordinary tokens (window sizes
// `3x3`, paddings `0_1x2_2`, dim labels `b01f_01io->b01f`, layout tiles) are
// read character by character by the parser: it asks for the current token's
// offset, scans the text itself and then calls Reset() to continue after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hlogym {

enum class TokenKind : uint8_t {
  kEof,
  kError,     // malformed input; Lexer::error() says what
  kIdent,     // [a-zA-Z_][a-zA-Z0-9_.-]*  (opcodes, names, keywords, enums)
  kName,      // %name; text() excludes the '%'
  kInt,       // -?[0-9]+ or 0x[0-9a-fA-F]+
  kDecimal,   // -?(digits.digits?|.digits)([eE][+-]?digits)? or digits e exp
  kString,    // "..." or '...'; text() includes the quotes, escapes intact
  kEqual,     // =
  kComma,     // ,
  kColon,     // :
  kLbrace,    // {
  kRbrace,    // }
  kLparen,    // (
  kRparen,    // )
  kLsquare,   // [
  kRsquare,   // ]
  kArrow,     // ->
  kLeq,       // <=
  kQuestion,  // ?
  kStar,      // *
  kMinus,     // a '-' not starting a number or '->' (as in -inf)
  kDots,      // ...
  kOther,     // any other single character
};

// Human-readable description of a token kind, e.g. "'{'" or "an integer".
std::string_view TokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;  // the token's characters (name without '%')
  size_t offset = 0;      // where the token starts (for '%name', the '%')
  size_t end = 0;         // one past its last character
};

// 1-based position in the text, computed on demand (errors only).
struct TextPosition {
  int64_t line = 1;
  int64_t column = 1;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) { Lex(0); }

  // The current (not yet consumed) token.
  const Token& peek() const { return token_; }
  TokenKind kind() const { return token_.kind; }
  // Consumes the current token and returns it.
  Token Next() {
    Token t = token_;
    Lex(token_.end);
    return t;
  }
  // Re-lexes starting at `offset`: used after the parser scanned characters.
  void Reset(size_t offset) { Lex(offset); }

  std::string_view text() const { return text_; }
  // The character at `offset`, or '\0' past the end.
  char CharAt(size_t offset) const { return offset < text_.size() ? text_[offset] : '\0'; }
  // True when the current token is directly followed (no space) by `c`.
  bool FollowedBy(char c) const { return CharAt(token_.end) == c; }
  // Skips whitespace and comments from `offset`; returns the next offset.
  // Stops at an unterminated comment (the caller then sees its error).
  size_t SkipSpace(size_t offset) const;

  // For kError tokens: what is wrong.
  std::string_view error() const { return error_; }

  TextPosition PositionOf(size_t offset) const;

 private:
  void Lex(size_t offset);
  void LexNumber(size_t start);
  void LexString(size_t start);
  void SetError(size_t start, size_t end, std::string_view message);

  std::string_view text_;
  Token token_;
  std::string_view error_;
};

// Character classes shared by the lexer and the parser's character scanners
// (a table: the lexer's inner loops test every character of the text).
namespace lexer_internal {
inline constexpr uint8_t kDigitBit = 1, kIdentStartBit = 2, kIdentCharBit = 4;
struct CharClassTable {
  uint8_t bits[256] = {};
  constexpr CharClassTable() {
    for (int c = 0; c < 256; ++c) {
      const bool digit = c >= '0' && c <= '9';
      const bool start = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      bits[c] = (digit ? kDigitBit : 0) | (start ? kIdentStartBit : 0) |
                ((digit || start || c == '.' || c == '-') ? kIdentCharBit : 0);
    }
  }
};
inline constexpr CharClassTable kCharClasses;
}  // namespace lexer_internal

inline bool IsDigit(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] & lexer_internal::kDigitBit;
}
inline bool IsIdentStart(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] &
         lexer_internal::kIdentStartBit;
}
inline bool IsIdentChar(char c) {
  return lexer_internal::kCharClasses.bits[static_cast<uint8_t>(c)] &
         lexer_internal::kIdentCharBit;
}

}  // namespace hlogym

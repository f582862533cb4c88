// Attribute value forms: integers, bools, strings, integer lists, slice
// ranges, paddings (0_1x2_2_1), windows, dim labels (b01f_01io->b01f),
// precision lists, computation references and verbatim (raw) values.
#include <charconv>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "core/base/status_macros.h"
#include "core/text/parser_internal.h"

namespace hlogym::text_internal {

bool ParseUint64Text(std::string_view text, uint64_t* value) {
  // Up to 19 decimal digits cannot overflow: the common case, done inline.
  if (!text.empty() && text.size() <= 19) {
    uint64_t v = 0;
    size_t i = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) v = v * 10 + (text[i] - '0');
    if (i == text.size()) {
      *value = v;
      return true;
    }
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, *value, base);
  return ec == std::errc() && ptr == last;
}

bool ParseInt64Text(std::string_view text, int64_t* value) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  uint64_t magnitude;
  if (!ParseUint64Text(text, &magnitude)) return false;
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool UnquoteString(std::string_view quoted, std::string* out) {
  if (quoted.size() < 2) return false;
  std::string_view inner = quoted.substr(1, quoted.size() - 2);
  if (inner.find('\\') == std::string_view::npos) {
    out->assign(inner);
    return true;
  }
  return absl::CUnescape(ToAbsl(inner), out);
}

absl::Status HloParser::ParseInt64(int64_t* value) {
  const Token& t = lexer_.peek();
  if (t.kind != TokenKind::kInt) return Expected("an integer");
  if (!ParseInt64Text(t.text, value)) {
    return Error(Cat("integer ", t.text, " is out of range for int64"));
  }
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::ParseBool(bool* value) {
  if (AtIdent("true")) {
    *value = true;
  } else if (AtIdent("false")) {
    *value = false;
  } else {
    return Expected("true or false");
  }
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::ParseDouble(double* value) {
  uint64_t payload = 0;
  bool is_nan = false;
  return ParseFloatScalar(PrimitiveType::kF64, value, &payload, &is_nan);
}

absl::Status HloParser::ParseQuotedString(std::string* value) {
  const Token& t = lexer_.peek();
  if (t.kind != TokenKind::kString) return Expected("a quoted string");
  if (!UnquoteString(t.text, value)) return Error("invalid escape sequence in string");
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::ParseIntList(std::vector<int64_t>* values) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of integers"));
  values->clear();
  if (EatIf(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    int64_t v;
    RETURN_IF_ERROR(ParseInt64(&v));
    values->push_back(v);
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of integers");
}

// {[start:limit], [start:limit:stride], ...}
absl::Status HloParser::ParseSliceRanges(SliceAttrs* slice) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the slice ranges"));
  if (EatIf(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    RETURN_IF_ERROR(Expect(TokenKind::kLsquare, "'[' to start a slice range"));
    int64_t start, limit, stride = 1;
    RETURN_IF_ERROR(ParseInt64(&start));
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' in a slice range [start:limit]"));
    RETURN_IF_ERROR(ParseInt64(&limit));
    if (EatIf(TokenKind::kColon)) RETURN_IF_ERROR(ParseInt64(&stride));
    RETURN_IF_ERROR(Expect(TokenKind::kRsquare, "']' to end a slice range"));
    slice->starts.push_back(start);
    slice->limits.push_back(limit);
    slice->strides.push_back(stride);
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in the slice ranges");
}

absl::Status HloParser::ScanIntAt(size_t* pos, int64_t* value, bool allow_negative) {
  const std::string_view text = lexer_.text();
  size_t i = *pos;
  const size_t start = i;
  if (allow_negative && i < text.size() && text[i] == '-') ++i;
  const size_t digits = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  if (i == digits) {
    lexer_.Reset(start);
    return Expected("an integer");
  }
  if (!ParseInt64Text(text.substr(start, i - start), value)) {
    return ErrorAt(start,
                   Cat("integer ", text.substr(start, i - start), " is out of range for int64"));
  }
  *pos = i;
  return absl::OkStatus();
}

// 3x3x1: one value per dimension.
absl::Status HloParser::ScanDims(size_t* pos, std::vector<int64_t>* values) {
  const std::string_view text = lexer_.text();
  while (true) {
    int64_t v;
    RETURN_IF_ERROR(ScanIntAt(pos, &v, /*allow_negative=*/true));
    values->push_back(v);
    if (*pos < text.size() && text[*pos] == 'x') {
      ++*pos;
      continue;
    }
    return absl::OkStatus();
  }
}

// lo_hi[_interior] per dimension, joined by 'x': 0_0x1_2_1.
absl::Status HloParser::ParsePadding(std::vector<PaddingDimension>* padding) {
  const std::string_view text = lexer_.text();
  size_t pos = lexer_.peek().offset;
  while (true) {
    PaddingDimension dim;
    RETURN_IF_ERROR(ScanIntAt(&pos, &dim.low, /*allow_negative=*/true));
    if (pos >= text.size() || text[pos] != '_') {
      lexer_.Reset(pos);
      return Expected("'_' in a padding lo_hi[_interior]");
    }
    ++pos;
    RETURN_IF_ERROR(ScanIntAt(&pos, &dim.high, /*allow_negative=*/true));
    if (pos < text.size() && text[pos] == '_') {
      ++pos;
      RETURN_IF_ERROR(ScanIntAt(&pos, &dim.interior, /*allow_negative=*/true));
    }
    padding->push_back(dim);
    if (pos < text.size() && text[pos] == 'x') {
      ++pos;
      continue;
    }
    break;
  }
  lexer_.Reset(pos);
  return absl::OkStatus();
}

// {size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}
absl::Status HloParser::ParseWindow(Window* window) {
  const size_t open = lexer_.peek().offset;
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the window"));
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<PaddingDimension> pad;
  bool has_size = false;
  while (lexer_.kind() != TokenKind::kRbrace) {
    const Token sub = lexer_.peek();
    if (sub.kind != TokenKind::kIdent) return Expected("a window field such as size=");
    lexer_.Next();
    if (!EatIf(TokenKind::kEqual)) return Expected(Cat("'=' after '", sub.text, "'"));
    size_t pos = lexer_.peek().offset;
    std::vector<int64_t>* target = nullptr;
    if (sub.text == "size") {
      if (has_size) return ErrorAt(sub.offset, "duplicate window field 'size'");
      has_size = true;
      target = &size;
    } else if (sub.text == "stride") {
      target = &stride;
    } else if (sub.text == "lhs_dilate") {
      target = &lhs_dilate;
    } else if (sub.text == "rhs_dilate") {
      target = &rhs_dilate;
    } else if (sub.text == "rhs_reversal") {
      target = &reversal;
    } else if (sub.text == "pad") {
      if (!pad.empty()) return ErrorAt(sub.offset, "duplicate window field 'pad'");
      RETURN_IF_ERROR(ParsePadding(&pad));
      for (const PaddingDimension& p : pad) {
        if (p.interior != 0) {
          return ErrorAt(sub.offset, "window padding takes lo_hi per dimension");
        }
      }
      EatIf(TokenKind::kComma);
      continue;
    } else {
      return ErrorAt(sub.offset, Cat("unknown window field '", sub.text, "'"));
    }
    if (target != &size && !target->empty()) {
      return ErrorAt(sub.offset, Cat("duplicate window field '", sub.text, "'"));
    }
    RETURN_IF_ERROR(ScanDims(&pos, target));
    lexer_.Reset(pos);
    EatIf(TokenKind::kComma);
  }
  lexer_.Next();  // '}'
  if (!has_size) {
    if (stride.empty() && pad.empty() && lhs_dilate.empty() && rhs_dilate.empty() &&
        reversal.empty()) {
      window->clear();
      return absl::OkStatus();
    }
    return ErrorAt(open, "window needs a size= field");
  }
  const size_t rank = size.size();
  auto check = [&](size_t n, std::string_view field) -> absl::Status {
    if (n == 0 || n == rank) return absl::OkStatus();
    return ErrorAt(open,
                   Cat("window field '", field, "' has ", n, " dimensions but size= has ", rank));
  };
  RETURN_IF_ERROR(check(stride.size(), "stride"));
  RETURN_IF_ERROR(check(pad.size(), "pad"));
  RETURN_IF_ERROR(check(lhs_dilate.size(), "lhs_dilate"));
  RETURN_IF_ERROR(check(rhs_dilate.size(), "rhs_dilate"));
  RETURN_IF_ERROR(check(reversal.size(), "rhs_reversal"));
  window->assign(rank, WindowDimension{});
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension& d = (*window)[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.padding_low = pad[i].low;
      d.padding_high = pad[i].high;
    }
    if (!lhs_dilate.empty()) d.lhs_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.rhs_dilation = rhs_dilate[i];
    if (!reversal.empty()) {
      if (reversal[i] != 0 && reversal[i] != 1) {
        return ErrorAt(open, "rhs_reversal takes 0 or 1 per dimension");
      }
      d.reversal = reversal[i] == 1;
    }
  }
  return absl::OkStatus();
}

// b01f_01io->b01f: b/f batch/feature, i/o kernel input/output feature,
// digits the spatial dimensions, '?' an unused dimension.
absl::Status HloParser::ParseDimLabels(ConvolutionDimensions* dims) {
  const std::string_view text = lexer_.text();
  const size_t start = lexer_.peek().offset;
  size_t pos = start;
  auto group = [&](std::string_view letters) {
    const size_t from = pos;
    while (pos < text.size() && (IsDigit(text[pos]) || text[pos] == '?' ||
                                 letters.find(text[pos]) != std::string_view::npos)) {
      ++pos;
    }
    return text.substr(from, pos - from);
  };
  const std::string_view lhs = group("bf");
  std::string_view rhs, out;
  bool ok = !lhs.empty() && pos < text.size() && text[pos] == '_';
  if (ok) {
    ++pos;
    rhs = group("io");
    ok = !rhs.empty() && text.substr(pos, 2) == "->";
  }
  if (ok) {
    pos += 2;
    out = group("bf");
    ok = !out.empty();
  }
  if (!ok) {
    return ErrorAt(start, "expected dim labels such as b01f_01io->b01f");
  }
  lexer_.Reset(pos);

  // Each group: its two role letters once each, spatial digits 0..n-1 once.
  auto decode = [&](std::string_view labels, char first, char second, int64_t* first_pos,
                    int64_t* second_pos, std::vector<int64_t>* spatial) -> absl::Status {
    *first_pos = *second_pos = -1;
    int64_t digits = 0;
    for (char c : labels) digits += IsDigit(c);
    spatial->assign(digits, -1);
    for (size_t i = 0; i < labels.size(); ++i) {
      const char c = labels[i];
      int64_t* slot = nullptr;
      if (c == first) slot = first_pos;
      if (c == second) slot = second_pos;
      if (IsDigit(c)) {
        const int64_t d = c - '0';
        if (d >= digits) {
          return ErrorAt(start, Cat("dim labels '", labels, "' name spatial dimension ", d,
                                    " but have only ", digits));
        }
        slot = &(*spatial)[d];
      }
      if (slot == nullptr) continue;  // '?'
      if (*slot != -1) {
        return ErrorAt(start, Cat("dim labels '", labels, "' repeat '", c, "'"));
      }
      *slot = static_cast<int64_t>(i);
    }
    if (*first_pos == -1 || *second_pos == -1) {
      return ErrorAt(start,
                     Cat("dim labels '", labels, "' need both '", first, "' and '", second, "'"));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(
      decode(lhs, 'b', 'f', &dims->input_batch, &dims->input_feature, &dims->input_spatial));
  RETURN_IF_ERROR(decode(rhs, 'i', 'o', &dims->kernel_input_feature, &dims->kernel_output_feature,
                         &dims->kernel_spatial));
  RETURN_IF_ERROR(
      decode(out, 'b', 'f', &dims->output_batch, &dims->output_feature, &dims->output_spatial));
  if (dims->input_spatial.size() != dims->kernel_spatial.size() ||
      dims->input_spatial.size() != dims->output_spatial.size()) {
    return ErrorAt(start, "dim labels disagree on the number of spatial dimensions");
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParsePrecisionList(std::vector<Precision>* precision) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the precision list"));
  precision->clear();
  if (EatIf(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    const Token& t = lexer_.peek();
    if (t.kind != TokenKind::kIdent) return Expected("a precision (default, high, highest)");
    bool found = false;
    for (Precision p :
         {Precision::kDefault, Precision::kHigh, Precision::kHighest, Precision::kPackedNibble}) {
      if (absl::EqualsIgnoreCase(ToAbsl(t.text), ToAbsl(PrecisionName(p)))) {
        precision->push_back(p);
        found = true;
        break;
      }
    }
    if (!found) {
      return Error(Cat("unknown precision '", t.text,
                       "' (expected default, high, highest or packed_nibble)"));
    }
    lexer_.Next();
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in the precision list");
}

absl::Status HloParser::ParseEnumIdent(std::string_view what, std::string_view* ident) {
  if (lexer_.kind() != TokenKind::kIdent) return Expected(what);
  *ident = lexer_.Next().text;
  return absl::OkStatus();
}

absl::Status HloParser::ParseRawValue(std::string* value) {
  const std::string_view text = lexer_.text();
  if (lexer_.kind() == TokenKind::kEof) return Expected("an attribute value");
  const size_t start = lexer_.peek().offset;
  const size_t n = text.size();
  char closers[kMaxNestingDepth];
  int depth = 0;
  size_t i = start;
  size_t end = start;  // one past the last non-space character of the value
  while (i < n) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < n && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      if (j >= n) return ErrorAt(i, "unterminated string");
      i = end = j + 1;
      continue;
    }
    if (c == '/' && i + 1 < n && (text[i + 1] == '*' || text[i + 1] == '/')) {
      if (depth == 0) break;  // a comment after the value
      if (text[i + 1] == '*') {
        const size_t close = text.find("*/", i + 2);
        if (close == std::string_view::npos) {
          return ErrorAt(i, "unterminated comment ('/*' without '*/')");
        }
        i = end = close + 2;
      } else {
        const size_t nl = text.find('\n', i);
        i = nl == std::string_view::npos ? n : nl;
      }
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      if (depth == kMaxNestingDepth) {
        return ErrorAt(i, Cat("attribute value nests deeper than ", kMaxNestingDepth, " levels"));
      }
      closers[depth++] = c == '{' ? '}' : c == '(' ? ')' : ']';
    } else if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) break;  // closes something around the value
      if (closers[depth - 1] != c) {
        return ErrorAt(i, Cat("mismatched '", std::string(1, c), "' in attribute value (expected '",
                              std::string(1, closers[depth - 1]), "')"));
      }
      --depth;
    } else if (depth == 0 && (c == ',' || c == '\n')) {
      break;
    }
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') end = i + 1;
    ++i;
  }
  if (depth > 0) {
    return ErrorAt(start,
                   Cat("attribute value is missing '", std::string(1, closers[depth - 1]), "'"));
  }
  if (end == start) return Expected("an attribute value");
  value->assign(text.data() + start, end - start);
  lexer_.Reset(i);
  return absl::OkStatus();
}

absl::Status HloParser::ParseComputationRef(PendingInstruction& pending, std::string_view attribute,
                                            Computation** computation) {
  if (lexer_.kind() == TokenKind::kLbrace) {
    ASSIGN_OR_RETURN(
        *computation,
        ParseInlineComputation(
            Cat(pending.name.empty() ? OpcodeName(pending.opcode) : pending.name, ".", attribute)));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(*computation, LookupComputation(lexer_.peek()));
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::ParseComputationList(PendingInstruction& pending,
                                             std::string_view attribute,
                                             std::vector<Computation*>* computations) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of computations"));
  computations->clear();
  if (EatIf(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    Computation* computation;
    RETURN_IF_ERROR(ParseComputationRef(pending, attribute, &computation));
    computations->push_back(computation);
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of computations");
}

absl::Status HloParser::ParseInstructionRefList(ComputationScope& scope,
                                                std::vector<Instruction*>* out) {
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of instructions"));
  if (EatIf(TokenKind::kRbrace)) return absl::OkStatus();
  do {
    const Token t = lexer_.peek();
    if (t.kind != TokenKind::kIdent && t.kind != TokenKind::kName) {
      return Expected("an instruction name");
    }
    ASSIGN_OR_RETURN(Instruction * inst, FindInstruction(scope, t));
    out->push_back(inst);
    lexer_.Next();
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRbrace, "',' or '}' in a list of instructions");
}

}  // namespace hlogym::text_internal

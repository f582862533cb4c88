// The parser's entry points, error helpers, module header, stack frame index
// and computations. Instructions are in instruction_parser.cc.
#include "core/text/parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "core/base/status_macros.h"
#include "core/text/parser_internal.h"

namespace hlogym {

absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options) {
  text_internal::HloParser parser(text, options);
  return parser.ParseWholeModule();
}

absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(std::string_view text,
                                                             const ParseOptions& options,
                                                             const VerifyOptions& verify) {
  absl::flat_hash_map<const Instruction*, size_t> offsets;
  ParseOptions with_offsets = options;
  with_offsets.definition_offsets = &offsets;
  ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(text, with_offsets));
  absl::Status verified = Verify(*module, verify);
  if (verified.ok()) return module;
  const Instruction* at = FindFailingInstruction(verified, *module);
  auto offset = at == nullptr ? offsets.end() : offsets.find(at);
  if (offset == offsets.end()) return verified;
  const TextPosition pos = Lexer(text).PositionOf(offset->second);
  absl::Status located = absl::InvalidArgumentError(text_internal::Cat(
      "line ", pos.line, ", column ", pos.column, ": ",
      std::string_view(verified.message().data(), verified.message().size())));
  verified.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    located.SetPayload(url, payload);
  });
  return located;
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  text_internal::HloParser parser(text, ParseOptions{});
  return parser.ParseWholeShape();
}

namespace text_internal {

// ---- Errors and tokens -------------------------------------------------------

absl::Status HloParser::ErrorAt(size_t offset, std::string_view message) const {
  const TextPosition pos = lexer_.PositionOf(offset);
  return absl::InvalidArgumentError(Cat("line ", pos.line, ", column ", pos.column, ": ", message));
}

absl::Status HloParser::Error(std::string_view message) const {
  return ErrorAt(lexer_.peek().offset, message);
}

std::string HloParser::DescribeCurrentToken() const {
  const Token& t = lexer_.peek();
  if (t.kind == TokenKind::kEof) return "end of input";
  std::string_view text = t.text;
  // Initialized rather than assigned: GCC 12 warns (-Wrestrict, a false
  // positive, PR105651) on assigning a literal to an empty string here.
  std::string shown(t.kind == TokenKind::kName ? "%" : "");
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) {
    shown += absl::CHexEscape(ToAbsl(text.substr(0, kMaxShown)));
    shown += "...";
  } else {
    shown += absl::CHexEscape(ToAbsl(text));
  }
  return Cat("'", shown, "'");
}

absl::Status HloParser::Expected(std::string_view what) const {
  if (lexer_.kind() == TokenKind::kError) {
    return Error(lexer_.error());
  }
  return Error(Cat("expected ", what, ", found ", DescribeCurrentToken()));
}

bool HloParser::EatIf(TokenKind kind) {
  if (lexer_.kind() != kind) return false;
  lexer_.Next();
  return true;
}

absl::Status HloParser::Expect(TokenKind kind, std::string_view what) {
  if (lexer_.kind() != kind) return Expected(what);
  lexer_.Next();
  return absl::OkStatus();
}

absl::Status HloParser::EnterNesting() {
  if (++depth_ > kMaxNestingDepth) {
    --depth_;
    return Error(Cat("nesting deeper than ", kMaxNestingDepth, " levels"));
  }
  return absl::OkStatus();
}

// ---- Module --------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Module>> HloParser::ParseWholeModule() {
  auto module = std::make_unique<Module>("");
  module_ = module.get();
  const bool has_header = AtIdent("HloModule");
  if (has_header) {
    lexer_.Next();
    RETURN_IF_ERROR(ParseHeader(module.get()));
  }
  RETURN_IF_ERROR(ParseStackFrameIndex(module.get()));
  if (lexer_.kind() == TokenKind::kEof) {
    return Expected("a computation");
  }
  Computation* entry = nullptr;
  Computation* last = nullptr;
  while (lexer_.kind() != TokenKind::kEof) {
    const size_t start = lexer_.peek().offset;
    if (AtIdent("HloModule")) {
      return Error("a second 'HloModule' header (one module per text)");
    }
    const bool is_entry = AtIdent("ENTRY");
    if (is_entry) lexer_.Next();
    ASSIGN_OR_RETURN(Computation * computation, ParseComputation(is_entry));
    if (is_entry) {
      if (entry != nullptr) {
        return ErrorAt(start, Cat("second ENTRY computation '", computation->name(),
                                  "' (entry is '", entry->name(), "')"));
      }
      entry = computation;
    }
    last = computation;
  }
  module->set_entry(entry != nullptr ? entry : last);
  if (!has_header) module->set_name(module->entry()->name());
  return module;
}

absl::StatusOr<Shape> HloParser::ParseWholeShape() {
  Shape shape;
  RETURN_IF_ERROR(ParseShape(&shape));
  if (lexer_.kind() != TokenKind::kEof) return Expected("end of the shape");
  if (options_.fill_missing_layouts) shape.FillMissingLayout();
  return shape;
}

absl::Status HloParser::ParseHeader(Module* module) {
  const Token& name = lexer_.peek();
  if (name.kind != TokenKind::kIdent && name.kind != TokenKind::kName) {
    return Expected("a module name after 'HloModule'");
  }
  module->set_name(std::string(name.text));
  lexer_.Next();
  bool has_layout = false;
  while (EatIf(TokenKind::kComma)) {
    const Token attr = lexer_.peek();
    if (attr.kind != TokenKind::kIdent) return Expected("a module attribute name");
    lexer_.Next();
    if (!EatIf(TokenKind::kEqual)) return Expected(Cat("'=' after '", attr.text, "'"));
    if (attr.text == "entry_computation_layout") {
      if (has_layout) {
        return ErrorAt(attr.offset, "duplicate attribute 'entry_computation_layout'");
      }
      has_layout = true;
      RETURN_IF_ERROR(ParseEntryComputationLayout(module));
      continue;
    }
    for (const RawAttribute& seen : module->raw_attributes()) {
      if (seen.name == attr.text) {
        return ErrorAt(attr.offset, Cat("duplicate attribute '", attr.text, "'"));
      }
    }
    RawAttribute raw{std::string(attr.text), ""};
    RETURN_IF_ERROR(ParseRawValue(&raw.value));
    module->mutable_raw_attributes().push_back(std::move(raw));
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseEntryComputationLayout(Module* module) {
  ComputationLayout layout;
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start entry_computation_layout"));
  RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the parameter shapes"));
  if (!EatIf(TokenKind::kRparen)) {
    do {
      Shape shape;
      RETURN_IF_ERROR(ParseShape(&shape));
      if (options_.fill_missing_layouts) shape.FillMissingLayout();
      layout.parameters.push_back(std::move(shape));
    } while (EatIf(TokenKind::kComma));
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in the parameter shapes"));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' before the result shape"));
  RETURN_IF_ERROR(ParseShape(&layout.result));
  if (options_.fill_missing_layouts) layout.result.FillMissingLayout();
  RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' to end entry_computation_layout"));
  module->set_entry_computation_layout(std::move(layout));
  return absl::OkStatus();
}

// FileNames (INT STRING)* FunctionNames (INT STRING)*
// FileLocations (INT {k=v ...})* StackFrames (INT {k=v ...})*
absl::Status HloParser::ParseStackFrameIndex(Module* module) {
  if (!AtIdent("FileNames")) return absl::OkStatus();
  const size_t start = lexer_.peek().offset;
  lexer_.Next();
  RETURN_IF_ERROR(ParseStackFrameEntries("FileNames", /*braced=*/false));
  size_t end = 0;
  static constexpr std::string_view kSections[] = {"FunctionNames", "FileLocations", "StackFrames"};
  for (std::string_view section : kSections) {
    if (!AtIdent(section)) return Expected(Cat("'", section, "'"));
    end = lexer_.peek().end;
    lexer_.Next();
    RETURN_IF_ERROR(ParseStackFrameEntries(section, section != "FunctionNames"));
  }
  // The section ends where the first computation starts; trim the space.
  size_t stop = lexer_.peek().offset;
  std::string_view text = lexer_.text();
  while (stop > end && (text[stop - 1] == ' ' || text[stop - 1] == '\n' || text[stop - 1] == '\t' ||
                        text[stop - 1] == '\r')) {
    --stop;
  }
  module->set_stack_frame_index(std::string(text.substr(start, stop - start)));
  return absl::OkStatus();
}

absl::Status HloParser::ParseStackFrameEntries(std::string_view section, bool braced) {
  while (lexer_.kind() == TokenKind::kInt) {
    lexer_.Next();
    if (!braced) {
      if (lexer_.kind() != TokenKind::kString) {
        return Expected(Cat("a quoted name in ", section));
      }
      lexer_.Next();
      continue;
    }
    if (!EatIf(TokenKind::kLbrace)) return Expected(Cat("'{' in ", section));
    while (lexer_.kind() == TokenKind::kIdent) {
      lexer_.Next();
      RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      int64_t value;
      RETURN_IF_ERROR(ParseInt64(&value));
      EatIf(TokenKind::kComma);
    }
    if (!EatIf(TokenKind::kRbrace)) return Expected(Cat("'}' in ", section));
  }
  return absl::OkStatus();
}

// ---- Computations ----------------------------------------------------------------

absl::StatusOr<Computation*> HloParser::ParseComputation(bool is_entry) {
  const Token name = lexer_.peek();
  if (name.kind != TokenKind::kIdent && name.kind != TokenKind::kName) {
    return Expected(is_entry ? "a computation name after 'ENTRY'" : "a computation name");
  }
  lexer_.Next();
  auto computation = std::make_unique<Computation>(std::string(name.text));

  // Optional signature: (p: f32[2], q: s32[]) -> f32[2]. Checked, not stored.
  std::vector<Shape> signature_params;
  Shape signature_result;
  size_t signature_offset = 0;
  const bool has_signature = lexer_.kind() == TokenKind::kLparen;
  if (has_signature) {
    signature_offset = lexer_.peek().offset;
    lexer_.Next();
    if (!EatIf(TokenKind::kRparen)) {
      do {
        const TokenKind k = lexer_.kind();
        if (k != TokenKind::kIdent && k != TokenKind::kName) {
          return Expected("a parameter name in the computation signature");
        }
        lexer_.Next();
        RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the parameter name"));
        Shape shape;
        RETURN_IF_ERROR(ParseShape(&shape));
        signature_params.push_back(std::move(shape));
      } while (EatIf(TokenKind::kComma));
      RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in the computation signature"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' and the result shape"));
    RETURN_IF_ERROR(ParseShape(&signature_result));
  }

  ComputationScope scope;
  scope.computation = computation.get();
  const size_t open = lexer_.peek().offset;
  ReserveNames(scope, open);
  if (!EatIf(TokenKind::kLbrace)) {
    return Expected(Cat("'{' to start computation '", name.text, "'"));
  }
  RETURN_IF_ERROR(ParseInstructionList(scope, open));
  RETURN_IF_ERROR(FinishComputation(scope, name.offset));

  if (has_signature) {
    if (static_cast<int64_t>(signature_params.size()) != computation->parameter_count()) {
      return ErrorAt(signature_offset,
                     Cat("signature of '", name.text, "' lists ", signature_params.size(),
                         " parameters but the body has ", computation->parameter_count()));
    }
    for (size_t i = 0; i < signature_params.size(); ++i) {
      const Shape& actual = computation->parameter(i)->shape();
      if (!signature_params[i].Compatible(actual)) {
        return ErrorAt(signature_offset, Cat("signature of '", name.text, "' gives parameter ", i,
                                             " the shape ", signature_params[i].ToString(false),
                                             " but the body declares ", actual.ToString(false)));
      }
    }
    if (!signature_result.Compatible(computation->root()->shape())) {
      return ErrorAt(signature_offset, Cat("signature of '", name.text, "' returns ",
                                           signature_result.ToString(false), " but its root '",
                                           computation->root()->name(), "' is ",
                                           computation->root()->shape().ToString(false)));
    }
  }

  if (EatIf(TokenKind::kComma)) {
    if (!AtIdent("execution_thread")) return Expected("'execution_thread='");
    lexer_.Next();
    RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after 'execution_thread'"));
    std::string thread;
    RETURN_IF_ERROR(ParseQuotedString(&thread));
    if (thread != "main") computation->set_execution_thread(std::move(thread));
  }
  RETURN_IF_ERROR(DefineComputationName(name.text, name.offset, computation.get()));
  return module_->AddComputation(std::move(computation));
}

// Printed computations end with "\n}" and hold one instruction per line, so
// the line count up to there sizes the name table (growing it costs more).
void HloParser::ReserveNames(ComputationScope& scope, size_t open_offset) const {
  const std::string_view text = lexer_.text();
  size_t end = text.find("\n}", open_offset);
  if (end == std::string_view::npos) end = text.size();
  size_t lines = 0;
  const char* p = text.data() + open_offset;
  const char* const stop = text.data() + end;
  while ((p = static_cast<const char*>(std::memchr(p, '\n', stop - p))) != nullptr) {
    ++lines;
    ++p;
  }
  scope.names.reserve(lines);
}

absl::Status HloParser::ParseInstructionList(ComputationScope& scope, size_t open_offset) {
  if (lexer_.kind() == TokenKind::kRbrace) {
    return Error(Cat("computation '", scope.computation->name(), "' has no instructions"));
  }
  while (lexer_.kind() != TokenKind::kRbrace) {
    if (lexer_.kind() == TokenKind::kEof) {
      const TextPosition open = lexer_.PositionOf(open_offset);
      return Expected(Cat("'}' to close computation '", scope.computation->name(),
                          "' (opened at line ", open.line, ")"));
    }
    RETURN_IF_ERROR(ParseInstruction(scope));
  }
  lexer_.Next();  // '}'
  return absl::OkStatus();
}

absl::Status HloParser::FinishComputation(ComputationScope& scope, size_t name_offset) {
  Computation* computation = scope.computation;
  if (scope.last == nullptr) {
    return ErrorAt(name_offset, Cat("computation '", computation->name(), "' has no instructions"));
  }
  computation->set_root(scope.root != nullptr ? scope.root : scope.last);

  // Parameters must be numbered 0..n-1, each once.
  auto& params = scope.parameters;
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) {
    return a.number != b.number ? a.number < b.number : a.offset < b.offset;
  });
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t expected = static_cast<int64_t>(i);
    if (params[i].number == expected) continue;
    if (i > 0 && params[i].number == params[i - 1].number) {
      return ErrorAt(params[i].offset, Cat("duplicate parameter number ", params[i].number,
                                           " in computation '", computation->name(), "'"));
    }
    return ErrorAt(
        params[i].offset,
        Cat("parameter(", params[i].number, ") leaves a gap: computation '", computation->name(),
            "' has no parameter ", expected, " (parameters must be numbered 0..n-1)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Computation*> HloParser::ParseInlineComputation(std::string_view base_name) {
  RETURN_IF_ERROR(EnterNesting());
  const size_t open = lexer_.peek().offset;
  RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start an inline computation"));
  auto computation = std::make_unique<Computation>(GeneratedComputationName(base_name));
  ComputationScope scope;
  scope.computation = computation.get();
  RETURN_IF_ERROR(ParseInstructionList(scope, open));
  RETURN_IF_ERROR(FinishComputation(scope, open));
  LeaveNesting();
  Computation* raw = computation.get();
  computations_by_name_.emplace(raw->name(), raw);
  generated_computations_.insert(raw);
  return module_->AddComputation(std::move(computation));
}

std::string HloParser::GeneratedComputationName(std::string_view base) {
  std::string name(base);
  for (int64_t n = 1; computations_by_name_.contains(name); ++n) {
    name = Cat(base, ".", n);
  }
  return name;
}

absl::Status HloParser::DefineComputationName(std::string_view name, size_t offset,
                                              Computation* computation) {
  auto [it, inserted] = computations_by_name_.try_emplace(std::string(name), computation);
  if (inserted) return absl::OkStatus();
  Computation* previous = it->second;
  if (!generated_computations_.contains(previous)) {
    return ErrorAt(offset, Cat("duplicate computation name '", name, "'"));
  }
  // A name the parser made up gives way to the one the text chose.
  it->second = computation;
  std::string renamed = GeneratedComputationName(name);
  previous->set_name(renamed);
  computations_by_name_.emplace(std::move(renamed), previous);
  return absl::OkStatus();
}

absl::StatusOr<Computation*> HloParser::LookupComputation(const Token& token) {
  if (token.kind != TokenKind::kIdent && token.kind != TokenKind::kName) {
    return Expected("a computation name");
  }
  auto it = computations_by_name_.find(ToAbsl(token.text));
  if (it == computations_by_name_.end()) {
    return ErrorAt(token.offset, Cat("unknown computation '", token.text,
                                     "' (computations must be defined before they are called)"));
  }
  return it->second;
}

}  // namespace text_internal
}  // namespace hlogym

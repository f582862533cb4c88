// The HLO text parser's internals, shared by the files that implement it:
// parser.cc (entry points, module header, computations, names),
// instruction_parser.cc (instructions, operands, async sugar),
// shape_parser.cc, literal_parser.cc, attribute_parser.cc (attribute value
// forms) and instruction_attributes.cc (which attribute goes where in the IR).
// Not a public interface: use core/text/parser.h.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/attributes.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "core/ir/shape.h"
#include "core/text/lexer.h"
#include "core/text/parser.h"

namespace hlogym::text_internal {

// Debian's abseil has its own absl::string_view (not std::string_view), so
// absl::StrCat does not take std::string_view; Cat does, plus numbers.
inline void AppendPiece(std::string* out, std::string_view piece) { out->append(piece); }
inline void AppendPiece(std::string* out, char c) { out->push_back(c); }
template <typename T,
          typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                      !std::is_same_v<T, bool>>>
void AppendPiece(std::string* out, T value) {
  out->append(std::to_string(value));
}
template <typename... Pieces>
std::string Cat(const Pieces&... pieces) {
  std::string out;
  (AppendPiece(&out, pieces), ...);
  return out;
}
inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }

// Nesting limit for tuples, literals, nested operands and inline
// computations: deeper input is an error, never a stack overflow.
inline constexpr int kMaxNestingDepth = 256;
// Largest array rank (Shape keeps dynamic dimensions in a 64-bit mask).
inline constexpr int64_t kMaxRank = 64;

// Names and parameters of the computation being parsed.
struct ComputationScope {
  Computation* computation = nullptr;
  // Keyed by absl::string_view for abseil's (fast) string hash.
  absl::flat_hash_map<absl::string_view, Instruction*> names;
  Instruction* root = nullptr;
  Instruction* last = nullptr;
  struct ParameterRef {
    int64_t number;
    size_t offset;  // of the instruction, for error messages
  };
  std::vector<ParameterRef> parameters;
};

// An instruction whose attributes are being parsed. Typed attributes are
// written straight into `inst`; called computations are collected per role
// and put in the order instruction.h documents once all are known.
struct PendingInstruction {
  Instruction* inst = nullptr;
  std::string_view name;
  size_t offset = 0;  // of the instruction's name
  Opcode opcode = Opcode::kAdd;
  // For async sugar (fusion-start ...): the wrapped op whose attributes
  // these are, and which attributes must also stay on the async op.
  bool is_async_wrapped = false;
  std::vector<RawAttribute>* async_raw_attributes = nullptr;

  Computation* to_apply = nullptr;
  Computation* calls = nullptr;
  Computation* condition = nullptr;
  Computation* body = nullptr;
  Computation* select = nullptr;
  Computation* scatter = nullptr;
  Computation* true_computation = nullptr;
  Computation* false_computation = nullptr;
  std::vector<Computation*> branch_computations;
  std::vector<Computation*> called_computations;
  std::vector<Instruction*> control_predecessors;
  std::bitset<128> seen;  // typed attributes already given (by attribute id)
};

// One parse of one text (not reusable). Member functions return errors as
// absl::Status values; the first error ends the parse.
class HloParser {
 public:
  HloParser(std::string_view text, const ParseOptions& options) : lexer_(text), options_(options) {}

  absl::StatusOr<std::unique_ptr<Module>> ParseWholeModule();
  absl::StatusOr<Shape> ParseWholeShape();

  // ---- Errors and tokens (parser.cc) ----
  // "line L, column C: message" at a byte offset / at the current token.
  absl::Status ErrorAt(size_t offset, std::string_view message) const;
  absl::Status Error(std::string_view message) const;
  // "expected <what>, found <current token>".
  absl::Status Expected(std::string_view what) const;
  std::string DescribeCurrentToken() const;
  bool EatIf(TokenKind kind);
  absl::Status Expect(TokenKind kind, std::string_view what);
  bool AtIdent(std::string_view text) const {
    return lexer_.kind() == TokenKind::kIdent && lexer_.peek().text == text;
  }
  // Nesting guard: Enter() fails past kMaxNestingDepth; pair with Leave().
  absl::Status EnterNesting();
  void LeaveNesting() { --depth_; }

  // ---- Shapes (shape_parser.cc) ----
  // Whether the current token starts a shape: '(' or an identifier followed
  // by '[' (ParseArrayShape then checks that it names an element type).
  bool AtShape() const;
  absl::Status ParseShape(Shape* shape);
  absl::Status ParseArrayShape(Shape* shape);
  absl::Status ParseLayout(Shape* shape);
  absl::Status ParseLayoutExtras(LayoutExtras* extras);
  // Rejects shapes whose byte size does not fit in int64.
  absl::Status CheckShapeSize(const Shape& shape, size_t offset) const;

  // ---- Literals (literal_parser.cc) ----
  absl::Status ParseLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseTupleLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseDenseLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseDenseLevel(const Shape& shape, int64_t dim, Literal* literal, int64_t* next);
  absl::Status ParseEmptyArrayLiteral(const Shape& shape);
  // One element value of `type` written at `out` (ByteWidth(type) bytes).
  absl::Status ParseElement(PrimitiveType type, uint8_t* out);
  absl::Status ParseFloatScalar(PrimitiveType type, double* value, uint64_t* nan_payload,
                                bool* is_nan);

  // ---- Attribute value forms (attribute_parser.cc) ----
  absl::Status ParseInt64(int64_t* value);
  absl::Status ParseBool(bool* value);
  absl::Status ParseDouble(double* value);
  absl::Status ParseQuotedString(std::string* value);
  absl::Status ParseIntList(std::vector<int64_t>* values);
  absl::Status ParseSliceRanges(SliceAttrs* slice);
  absl::Status ParsePadding(std::vector<PaddingDimension>* padding);
  absl::Status ParseWindow(Window* window);
  absl::Status ParseDimLabels(ConvolutionDimensions* dims);
  absl::Status ParsePrecisionList(std::vector<Precision>* precision);
  // An identifier, for enums; `what` names the attribute in errors.
  absl::Status ParseEnumIdent(std::string_view what, std::string_view* ident);
  // The exact text of a value this parser does not model: balanced
  // brackets, strings respected, ending before a ',' or newline at depth 0.
  absl::Status ParseRawValue(std::string* value);
  absl::Status ParseComputationRef(PendingInstruction& pending, std::string_view attribute,
                                   Computation** computation);
  absl::Status ParseComputationList(PendingInstruction& pending, std::string_view attribute,
                                    std::vector<Computation*>* computations);
  absl::Status ParseInstructionRefList(ComputationScope& scope, std::vector<Instruction*>* out);
  // Character scanners for the x-separated forms (3x3, 0_1x2_2).
  absl::Status ScanIntAt(size_t* pos, int64_t* value, bool allow_negative);
  absl::Status ScanDims(size_t* pos, std::vector<int64_t>* values);

  // ---- Instruction attributes (instruction_attributes.cc) ----
  absl::Status ParseAttributes(ComputationScope& scope, PendingInstruction& pending);
  absl::Status ParseOneAttribute(ComputationScope& scope, PendingInstruction& pending,
                                 std::string_view name, size_t name_offset);
  // Checks required attributes and installs called computations.
  absl::Status FinishAttributes(PendingInstruction& pending);

  // ---- Modules, computations, instructions (parser.cc) ----
  absl::Status ParseHeader(Module* module);
  absl::Status ParseEntryComputationLayout(Module* module);
  absl::Status ParseStackFrameIndex(Module* module);
  absl::Status ParseStackFrameEntries(std::string_view section, bool braced);
  // Parses `name signature? { instructions } (, execution_thread=...)?`
  // (after ENTRY, if any) into a new computation added to the module.
  absl::StatusOr<Computation*> ParseComputation(bool is_entry);
  void ReserveNames(ComputationScope& scope, size_t open_offset) const;
  absl::Status ParseInstructionList(ComputationScope& scope, size_t open_offset);
  absl::Status ParseInstruction(ComputationScope& scope);
  absl::StatusOr<Instruction*> ParseInstructionRhs(ComputationScope& scope, std::string_view name,
                                                   size_t name_offset, bool allow_attributes);
  absl::Status ParseOperands(ComputationScope& scope, std::vector<Instruction*>* operands);
  absl::StatusOr<Instruction*> ResolveOperand(ComputationScope& scope);
  absl::StatusOr<Instruction*> FindInstruction(ComputationScope& scope, const Token& token);
  absl::Status FinishComputation(ComputationScope& scope, size_t name_offset);
  absl::Status InferMissingShape(PendingInstruction& pending);
  // Async sugar: `<op>-start/-update/-done` for ops without such opcodes.
  absl::StatusOr<std::unique_ptr<Instruction>> BuildAsyncSugar(
      ComputationScope& scope, PendingInstruction& pending, Opcode wrapped, Opcode async_opcode,
      Shape shape, std::vector<Instruction*> operands, bool allow_attributes);
  absl::StatusOr<Computation*> LookupComputation(const Token& token);
  // Registers a computation name; generated names give way to text names.
  absl::Status DefineComputationName(std::string_view name, size_t offset,
                                     Computation* computation);
  std::string GeneratedComputationName(std::string_view base);
  absl::StatusOr<Computation*> ParseInlineComputation(std::string_view base_name);

  Lexer lexer_;
  ParseOptions options_;
  int depth_ = 0;
  Module* module_ = nullptr;
  // Every computation parsed so far, by name.
  absl::flat_hash_map<std::string, Computation*> computations_by_name_;
  // Computations whose names the parser made up (async wrappers, inline).
  absl::flat_hash_set<Computation*> generated_computations_;
};

// Where an attribute of a sugared async op (fusion-start, ...) that this
// parser keeps verbatim belongs: on the wrapped op (anything op-specific or
// unknown), on the async op (sharding), or on both (metadata, backend_config,
// frontend_attributes, ...), as XLA's parser does.
enum class AsyncAttributeHome { kWrapped, kAsync, kBoth };
AsyncAttributeHome HomeOfSugaredAttribute(std::string_view name);

// Lookups by text name, tuned for the parser's hot path.
std::optional<PrimitiveType> ElementTypeFromName(std::string_view name);
std::optional<Opcode> OpcodeFromText(std::string_view name);

// Integer text (decimal, optionally negative, or 0x hex) to int64/uint64.
// False on overflow or malformed text.
bool ParseInt64Text(std::string_view text, int64_t* value);
bool ParseUint64Text(std::string_view text, uint64_t* value);
// The string's characters with quotes removed and C escapes resolved.
bool UnquoteString(std::string_view quoted, std::string* out);

}  // namespace hlogym::text_internal

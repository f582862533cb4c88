// Instructions: `ROOT? name = shape? opcode(operands), attributes`, operand
// name resolution, parameters, constants, async sugar and shape inference.
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "core/base/status_macros.h"
#include "core/ir/shape_inference.h"
#include "core/text/parser_internal.h"

namespace hlogym::text_internal {
namespace {

// Opcodes whose result shape may be left out of the text (XLA's
// CanInferShape): everything else must write it.
// clang-format off
bool CanInferShape(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh:
    case Opcode::kAsin: case Opcode::kAsinh: case Opcode::kAdd:
    case Opcode::kAddDependency: case Opcode::kAfterAll: case Opcode::kAtan:
    case Opcode::kAtan2: case Opcode::kAtanh: case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference: case Opcode::kBatchNormTraining:
    case Opcode::kBroadcast: case Opcode::kCall: case Opcode::kCeil:
    case Opcode::kCholesky: case Opcode::kClamp: case Opcode::kClz:
    case Opcode::kCompare: case Opcode::kComplex: case Opcode::kConcatenate:
    case Opcode::kConditional: case Opcode::kConvolution: case Opcode::kCopy:
    case Opcode::kCos: case Opcode::kCosh: case Opcode::kOptimizationBarrier:
    case Opcode::kDivide: case Opcode::kDomain: case Opcode::kDot:
    case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFft: case Opcode::kFloor: case Opcode::kGather:
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
    case Opcode::kGetTupleElement: case Opcode::kImag: case Opcode::kIsFinite:
    case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kAnd: case Opcode::kNot: case Opcode::kOr: case Opcode::kXor:
    case Opcode::kMap: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kMulhi: case Opcode::kMultiply: case Opcode::kNegate:
    case Opcode::kPad: case Opcode::kPartitionId: case Opcode::kPopulationCount:
    case Opcode::kPower: case Opcode::kRaggedDot: case Opcode::kReal:
    case Opcode::kReduce: case Opcode::kRemainder: case Opcode::kReplicaId:
    case Opcode::kReverse: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kRsqrt: case Opcode::kScan:
    case Opcode::kScatter: case Opcode::kSelect: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
    case Opcode::kSign: case Opcode::kSin: case Opcode::kSinh:
    case Opcode::kSqrt: case Opcode::kCbrt: case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter: case Opcode::kSort: case Opcode::kSubtract:
    case Opcode::kTan: case Opcode::kTanh: case Opcode::kTranspose:
    case Opcode::kTriangularSolve: case Opcode::kTuple: case Opcode::kWhile:
    case Opcode::kTopK:
      return true;
    default:
      return false;
  }
}
// clang-format on

// The async-start at the head of a chain start -> update* -> done.
const Instruction* AsyncChainStart(const Instruction* inst) {
  while (inst->opcode() == Opcode::kAsyncUpdate && inst->operand_count() == 1) {
    inst = inst->operand(0);
  }
  return inst->opcode() == Opcode::kAsyncStart ? inst : nullptr;
}

}  // namespace

std::optional<Opcode> OpcodeFromText(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, Opcode>();
    for (int i = 0; i < kNumOpcodes; ++i) {
      map->emplace(ToAbsl(OpcodeName(static_cast<Opcode>(i))), static_cast<Opcode>(i));
    }
    return map;
  }();
  auto it = by_name->find(ToAbsl(name));
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

absl::Status HloParser::ParseInstruction(ComputationScope& scope) {
  const size_t start = lexer_.peek().offset;
  const bool is_root = AtIdent("ROOT");
  if (is_root) lexer_.Next();
  const Token name = lexer_.peek();
  if (name.kind != TokenKind::kIdent && name.kind != TokenKind::kName) {
    return Expected(is_root ? "an instruction name after 'ROOT'" : "an instruction name or '}'");
  }
  lexer_.Next();
  if (!EatIf(TokenKind::kEqual)) {
    return Expected(Cat("'=' after instruction name '", name.text, "'"));
  }
  if (scope.names.contains(ToAbsl(name.text))) {
    return ErrorAt(name.offset, Cat("duplicate instruction name '", name.text, "' in computation '",
                                    scope.computation->name(), "'"));
  }
  ASSIGN_OR_RETURN(Instruction * inst, ParseInstructionRhs(scope, name.text, name.offset,
                                                           /*allow_attributes=*/true));
  if (is_root) {
    if (scope.root != nullptr) {
      return ErrorAt(
          start, Cat("second ROOT '", name.text, "' in computation '", scope.computation->name(),
                     "' (root is '", scope.root->name(), "')"));
    }
    scope.root = inst;
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> HloParser::ParseInstructionRhs(ComputationScope& scope,
                                                            std::string_view name,
                                                            size_t name_offset,
                                                            bool allow_attributes) {
  RETURN_IF_ERROR(EnterNesting());
  Shape shape;
  const bool has_shape = AtShape();
  if (has_shape) {
    RETURN_IF_ERROR(ParseShape(&shape));
    if (options_.fill_missing_layouts) shape.FillMissingLayout();
  }

  // Opcode, possibly async sugar: <op>-start / -update / -done.
  const Token op_token = lexer_.peek();
  if (op_token.kind != TokenKind::kIdent) {
    return Expected(has_shape ? "an opcode after the shape" : "a shape or an opcode");
  }
  lexer_.Next();
  Opcode opcode{};  // always set below; initialized for -Wmaybe-uninitialized
  std::optional<Opcode> wrapped;  // set for async sugar
  if (std::optional<Opcode> found = OpcodeFromText(op_token.text)) {
    opcode = *found;
  } else {
    static constexpr std::pair<std::string_view, Opcode> kSuffixes[] = {
        {"-start", Opcode::kAsyncStart},
        {"-update", Opcode::kAsyncUpdate},
        {"-done", Opcode::kAsyncDone}};
    for (const auto& [suffix, async_opcode] : kSuffixes) {
      if (!op_token.text.ends_with(suffix)) continue;
      std::string_view base = op_token.text.substr(0, op_token.text.size() - suffix.size());
      if (std::optional<Opcode> base_opcode = OpcodeFromText(base)) {
        wrapped = *base_opcode;
        opcode = async_opcode;
      }
      break;
    }
    if (!wrapped) {
      return ErrorAt(op_token.offset, Cat("unknown opcode '", op_token.text, "'"));
    }
  }
  if (!has_shape && (wrapped || !CanInferShape(opcode))) {
    return ErrorAt(op_token.offset, Cat("the shape of '", op_token.text,
                                        "' cannot be inferred: write it before the opcode"));
  }

  // Operands.
  const size_t operands_offset = lexer_.peek().offset;
  if (!EatIf(TokenKind::kLparen)) return Expected(Cat("'(' after opcode '", op_token.text, "'"));
  std::vector<Instruction*> operands;
  std::unique_ptr<Instruction> inst;
  ComputationScope::ParameterRef parameter_ref{-1, name_offset};
  if (opcode == Opcode::kParameter) {
    const size_t number_offset = lexer_.peek().offset;
    int64_t number;
    RETURN_IF_ERROR(ParseInt64(&number));
    // A computation with n parameters takes more than n bytes of text; the
    // bound keeps a bogus number from sizing the parameter table.
    if (number < 0 || static_cast<uint64_t>(number) >= lexer_.text().size()) {
      return ErrorAt(number_offset, Cat("parameter number ", number, " is out of range"));
    }
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the parameter number"));
    inst = Instruction::CreateParameter(number, std::move(shape), std::string(name));
    parameter_ref.number = number;
  } else if (opcode == Opcode::kConstant) {
    Literal literal;
    RETURN_IF_ERROR(ParseLiteral(shape, &literal));
    RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the constant's value"));
    inst = Instruction::Create(Opcode::kConstant, std::move(shape));
    inst->mutable_attrs<ConstantAttrs>().literal = std::move(literal);
  } else {
    RETURN_IF_ERROR(ParseOperands(scope, &operands));
    int arity = OpcodeArity(wrapped && opcode == Opcode::kAsyncStart ? *wrapped : opcode);
    if (arity >= 0 && static_cast<int>(operands.size()) != arity) {
      return ErrorAt(operands_offset, Cat("'", op_token.text, "' takes ", arity, " operand",
                                          arity == 1 ? "" : "s", ", found ", operands.size()));
    }
    if (!wrapped) inst = Instruction::Create(opcode, std::move(shape), operands);
  }

  PendingInstruction pending;
  pending.name = name;
  pending.offset = name_offset;
  pending.opcode = opcode;
  if (wrapped) {
    ASSIGN_OR_RETURN(inst, BuildAsyncSugar(scope, pending, *wrapped, opcode, std::move(shape),
                                           std::move(operands), allow_attributes));
  } else {
    if (!name.empty()) inst->set_name(std::string(name));
    pending.inst = inst.get();
    if (allow_attributes) RETURN_IF_ERROR(ParseAttributes(scope, pending));
    RETURN_IF_ERROR(FinishAttributes(pending));
    if (opcode == Opcode::kAsyncStart) {
      const Shape& s = inst->shape();
      if (has_shape && (!s.IsTuple() || s.tuple_size() < 2 || !s.tuple_shape(0).IsTuple())) {
        return ErrorAt(name_offset,
                       "async-start's shape must be ((operands...), outputs, state...)");
      }
    }
    if (!has_shape) RETURN_IF_ERROR(InferMissingShape(pending));
  }

  for (Instruction* predecessor : pending.control_predecessors) {
    predecessor->AddControlDependencyTo(inst.get());
  }
  if (parameter_ref.number >= 0) scope.parameters.push_back(parameter_ref);
  Instruction* added = scope.computation->AddInstruction(std::move(inst));
  if (!name.empty()) scope.names.emplace(ToAbsl(name), added);
  if (options_.definition_offsets != nullptr) options_.definition_offsets->emplace(added, name_offset);
  scope.last = added;
  LeaveNesting();
  return added;
}

absl::Status HloParser::ParseOperands(ComputationScope& scope,
                                      std::vector<Instruction*>* operands) {
  if (EatIf(TokenKind::kRparen)) return absl::OkStatus();
  do {
    ASSIGN_OR_RETURN(Instruction * operand, ResolveOperand(scope));
    operands->push_back(operand);
  } while (EatIf(TokenKind::kComma));
  return Expect(TokenKind::kRparen, "',' or ')' after an operand");
}

absl::StatusOr<Instruction*> HloParser::ResolveOperand(ComputationScope& scope) {
  const size_t start = lexer_.peek().offset;
  Shape written;
  const bool has_shape = AtShape();
  if (has_shape) RETURN_IF_ERROR(ParseShape(&written));
  const Token token = lexer_.peek();
  if (token.kind == TokenKind::kIdent && lexer_.CharAt(lexer_.SkipSpace(token.end)) == '(') {
    // A nested instruction used as an operand: add(multiply(x, y), z).
    lexer_.Reset(start);
    return ParseInstructionRhs(scope, "", start, /*allow_attributes=*/false);
  }
  if (token.kind != TokenKind::kIdent && token.kind != TokenKind::kName) {
    return Expected("an operand name");
  }
  lexer_.Next();
  ASSIGN_OR_RETURN(Instruction * operand, FindInstruction(scope, token));
  if (has_shape && !written.Compatible(operand->shape())) {
    return ErrorAt(start, Cat("operand '", token.text, "' is written as ", written.ToString(false),
                              " but is ", operand->shape().ToString(false)));
  }
  return operand;
}

absl::StatusOr<Instruction*> HloParser::FindInstruction(ComputationScope& scope,
                                                        const Token& token) {
  auto it = scope.names.find(ToAbsl(token.text));
  if (it == scope.names.end()) {
    return ErrorAt(token.offset, Cat("unknown instruction '", token.text, "' in computation '",
                                     scope.computation->name(),
                                     "' (instructions must be defined before they are used)"));
  }
  return it->second;
}

absl::Status HloParser::InferMissingShape(PendingInstruction& pending) {
  absl::StatusOr<Shape> inferred = InferShape(*pending.inst);
  if (!inferred.ok()) {
    return ErrorAt(pending.offset, Cat("cannot infer the shape of '", pending.name,
                                       "': ", std::string(inferred.status().message())));
  }
  Shape shape = *std::move(inferred);
  if (options_.fill_missing_layouts) shape.FillMissingLayout();
  pending.inst->mutable_shape() = std::move(shape);
  return absl::OkStatus();
}

// `fusion-start(a, b), kind=kLoop, calls=f` is async-start(a, b) calling a
// made-up computation whose root is the fusion; `fusion-update` and
// `fusion-done` are async-update and async-done of that chain.
absl::StatusOr<std::unique_ptr<Instruction>> HloParser::BuildAsyncSugar(
    ComputationScope& scope, PendingInstruction& pending, Opcode wrapped, Opcode async_opcode,
    Shape shape, std::vector<Instruction*> operands, bool allow_attributes) {
  const std::string op_text = Cat(OpcodeName(wrapped), "-",
                                  async_opcode == Opcode::kAsyncStart    ? "start"
                                  : async_opcode == Opcode::kAsyncUpdate ? "update"
                                                                         : "done");
  if (async_opcode != Opcode::kAsyncStart) {
    const Instruction* chain_start = AsyncChainStart(operands[0]);
    const bool matches = chain_start != nullptr && chain_start->called_computations().size() == 1 &&
                         chain_start->called_computations()[0]->root()->opcode() == wrapped &&
                         operands[0]->opcode() != Opcode::kAsyncDone;
    if (!matches) {
      return ErrorAt(pending.offset, Cat("the operand of '", op_text, "' must be the ",
                                         OpcodeName(wrapped), "-start or -update it continues"));
    }
    if (async_opcode == Opcode::kAsyncUpdate && !shape.Compatible(operands[0]->shape())) {
      return ErrorAt(pending.offset, Cat("'", op_text, "' must have the shape of its operand"));
    }
    auto inst = Instruction::Create(async_opcode, std::move(shape), operands);
    inst->set_name(std::string(pending.name));
    pending.inst = inst.get();
    if (allow_attributes) RETURN_IF_ERROR(ParseAttributes(scope, pending));
    RETURN_IF_ERROR(FinishAttributes(pending));
    return inst;
  }

  if (!shape.IsTuple() || shape.tuple_size() < 2 || !shape.tuple_shape(0).IsTuple()) {
    return ErrorAt(pending.offset,
                   Cat("the shape of '", op_text, "' must be ((operands...), outputs, state...)"));
  }
  auto async_inst = Instruction::Create(Opcode::kAsyncStart, shape, operands);
  async_inst->set_name(std::string(pending.name));

  // The wrapped computation: one parameter per operand, the op as root.
  auto wrapper =
      std::make_unique<Computation>(GeneratedComputationName(Cat(pending.name, ".async_wrapped")));
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < operands.size(); ++i) {
    parameters.push_back(wrapper->AddInstruction(Instruction::CreateParameter(
        static_cast<int64_t>(i), operands[i]->shape(), Cat("async_param.", i))));
  }
  auto op = Instruction::Create(wrapped, shape.tuple_shape(1), parameters);
  op->set_name(Cat(pending.name, ".wrapped"));
  PendingInstruction inner;
  inner.inst = op.get();
  inner.name = pending.name;
  inner.offset = pending.offset;
  inner.opcode = wrapped;
  inner.is_async_wrapped = true;
  inner.async_raw_attributes = &async_inst->mutable_raw_attributes();
  if (allow_attributes) RETURN_IF_ERROR(ParseAttributes(scope, inner));
  RETURN_IF_ERROR(FinishAttributes(inner));
  pending.control_predecessors = std::move(inner.control_predecessors);
  wrapper->set_root(wrapper->AddInstruction(std::move(op)));

  Computation* computation = wrapper.get();
  computations_by_name_.emplace(computation->name(), computation);
  generated_computations_.insert(computation);
  module_->AddComputation(std::move(wrapper));
  async_inst->set_called_computations({computation});
  pending.inst = async_inst.get();
  return async_inst;
}

AsyncAttributeHome HomeOfSugaredAttribute(std::string_view name) {
  if (name == "sharding" || name == "parameter_replication") return AsyncAttributeHome::kAsync;
  if (name == "metadata" || name == "backend_config" || name == "frontend_attributes" ||
      name == "statistics" || name == "origin") {
    return AsyncAttributeHome::kBoth;
  }
  return AsyncAttributeHome::kWrapped;
}

}  // namespace hlogym::text_internal

// The list of rule families and the helpers the rule files share.
#include "core/passes/algsimp_rules.h"

#include <cstring>

namespace hlogym {

const std::vector<const std::vector<AlgsimpRule>*>& AlgsimpRuleFamilies() {
  static const auto* families = new std::vector<const std::vector<AlgsimpRule>*>{
      &ArithmeticRules(), &CompareSelectRules(), &ConvertRules(),
      &ShapeRules(),      &SliceRules(),         &ReduceRules(),
  };
  return *families;
}

Instruction* RuleContext::BroadcastScalar(Instruction* scalar, const Shape& shape) {
  if (shape.rank() == 0) return scalar;
  return Add(Opcode::kBroadcast, shape, {scalar});
}

Instruction* RuleContext::SplatInt(const Shape& shape, int64_t value) {
  Literal scalar(Shape::Scalar(shape.element_type()));
  scalar.SetFromInt64(0, value);
  return BroadcastScalar(Add(Instruction::CreateConstant(std::move(scalar))), shape);
}

Instruction* RuleContext::SplatFloat(const Shape& shape, double value) {
  Literal scalar(Shape::Scalar(shape.element_type()));
  scalar.SetFromDouble(0, value);
  return BroadcastScalar(Add(Instruction::CreateConstant(std::move(scalar))), shape);
}

namespace {

// The literal all of whose elements `inst` holds, when it is a usable
// constant or a broadcast of one.
const Literal* UniformLiteral(const Instruction* inst) {
  if (inst->opcode() == Opcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != Opcode::kConstant || !inst->has_attrs<ConstantAttrs>()) return nullptr;
  const Literal& literal = inst->literal();
  if (literal.is_elided() || !literal.shape().IsArray() ||
      IsComplex(literal.shape().element_type()) || literal.element_count() == 0) {
    return nullptr;
  }
  // Compare raw element bytes: exact for every type, NaN included.
  const int width = ByteWidth(literal.shape().element_type());
  const uint8_t* data = literal.raw_data();
  for (int64_t i = 1; i < literal.element_count(); ++i) {
    if (std::memcmp(data, data + i * width, width) != 0) return nullptr;
  }
  return &literal;
}

}  // namespace

std::optional<double> ScalarConstantValue(const Instruction* inst) {
  const Literal* literal = UniformLiteral(inst);
  if (literal == nullptr) return std::nullopt;
  return literal->GetAsDouble(0);
}

std::optional<int64_t> ScalarConstantInt(const Instruction* inst) {
  const Literal* literal = UniformLiteral(inst);
  if (literal == nullptr) return std::nullopt;
  const PrimitiveType type = literal->shape().element_type();
  if (!IsInteger(type) && type != PrimitiveType::kPred) return std::nullopt;
  return literal->GetAsInt64(0);
}

bool IsConstantValue(const Instruction* inst, double value) {
  std::optional<double> v = ScalarConstantValue(inst);
  return v.has_value() && *v == value;
}

bool IsIntegral(const Instruction* inst) { return IsInteger(inst->shape().element_type()); }
bool IsFloating(const Instruction* inst) { return IsFloat(inst->shape().element_type()); }
bool IsPredicate(const Instruction* inst) {
  return inst->shape().element_type() == PrimitiveType::kPred;
}

bool IsIdentityPermutation(absl::Span<const int64_t> dims) {
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k) {
    if (dims[k] != k) return false;
  }
  return true;
}

}  // namespace hlogym

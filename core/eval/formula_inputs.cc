#include "core/eval/formula_inputs.h"

#include <cmath>

namespace hlogym {

Literal FormulaInput(const Shape& shape, int64_t p) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(FormulaInput(s, p));
    return Literal::Tuple(std::move(elements));
  }
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  const PrimitiveType type = shape.element_type();
  const int64_t n = shape.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (type == PrimitiveType::kPred) {
      literal.SetFromInt64(i, (i + p) % 3 == 0);
    } else if (IsInteger(type)) {
      literal.SetFromInt64(i, (7 * i + 3 * p) % 11);
    } else {
      const float value = static_cast<float>(std::sin(0.5 * i + 1.7 * p + 0.3));
      if (IsComplex(type)) {
        literal.SetFromComplex(i, {value, 0.0});
      } else {
        literal.SetFromDouble(i, value);
      }
    }
  }
  return literal;
}

std::vector<Literal> FormulaInputs(const Module& module) {
  std::vector<Literal> inputs;
  if (module.entry() == nullptr) return inputs;
  for (const Instruction* param : module.entry()->parameters()) {
    inputs.push_back(FormulaInput(param->shape(), param->parameter_number()));
  }
  return inputs;
}

}  // namespace hlogym

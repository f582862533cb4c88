#include "backend/while_state.h"

#include <cstdint>

#include "backend/buffer_assignment.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// The first leaf and the leaf count of each element of a tuple shape.
void ElementLeaves(const Shape& state, std::vector<int64_t>& first, std::vector<int64_t>& count) {
  int64_t leaves = 0;
  for (const Shape& element : state.tuple_shapes()) {
    first.push_back(leaves);
    count.push_back(static_cast<int64_t>(FlattenLeafShapes(element).size()));
    leaves += count.back();
  }
}

// The state's only parameter, or null.
const Instruction* StateParameter(const Computation& computation) {
  return computation.parameter_count() == 1 ? computation.parameter(0) : nullptr;
}

// The value of a scalar integer constant.
std::optional<int64_t> IntegerConstant(const Instruction* inst) {
  if (inst == nullptr || inst->opcode() != Opcode::kConstant || !inst->shape().IsArray() ||
      inst->shape().rank() != 0 || !IsInteger(inst->shape().element_type())) {
    return std::nullopt;
  }
  return inst->literal().GetAsInt64(0);
}

// `inst` as an expression of `at`'s computation: a parameter of the fused
// computation `at` calls stands for `at`'s operand.
const Instruction* Outer(const Instruction* inst, const Instruction* at) {
  if (at->IsFusion() && inst->opcode() == Opcode::kParameter &&
      inst->parent() == at->fused_computation()) {
    return at->operand(inst->parameter_number());
  }
  return inst;
}

// The computation's value `inst`, or its fused root when it is a fusion.
const Instruction* Expression(const Instruction* inst) {
  return inst->IsFusion() ? inst->fused_computation()->root() : inst;
}

bool IsCounter(const Instruction* inst, const Instruction* state, int64_t k) {
  return inst->opcode() == Opcode::kGetTupleElement && inst->operand(0) == state &&
         inst->tuple_index() == k;
}

// The counter is element `k` of the state. The step of `next` when it is
// counter + c, c + counter or counter - c.
std::optional<int64_t> Step(const Instruction* next, const Instruction* state, int64_t k) {
  const Instruction* e = Expression(next);
  if ((e->opcode() != Opcode::kAdd && e->opcode() != Opcode::kSubtract) ||
      e->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* a = Outer(e->operand(0), next);
  const Instruction* b = Outer(e->operand(1), next);
  if (IsCounter(a, state, k)) {
    std::optional<int64_t> c = IntegerConstant(b);
    if (!c) return std::nullopt;
    return e->opcode() == Opcode::kAdd ? *c : -*c;
  }
  if (e->opcode() == Opcode::kAdd && IsCounter(b, state, k)) return IntegerConstant(a);
  return std::nullopt;
}

// cond(counter, bound) as the condition computes it.
bool Holds(ComparisonDirection direction, int64_t counter, int64_t bound) {
  switch (direction) {
    case ComparisonDirection::kEq: return counter == bound;
    case ComparisonDirection::kNe: return counter != bound;
    case ComparisonDirection::kLt: return counter < bound;
    case ComparisonDirection::kLe: return counter <= bound;
    case ComparisonDirection::kGt: return counter > bound;
    case ComparisonDirection::kGe: return counter >= bound;
  }
  return false;
}

ComparisonDirection Mirrored(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return d;
  }
}

}  // namespace

std::optional<int64_t> StaticTripCount(const Instruction& w, int64_t limit) {
  if (w.opcode() != Opcode::kWhile || w.operand_count() != 1 ||
      w.called_computations().size() != 2 || w.operand(0)->opcode() != Opcode::kTuple) {
    return std::nullopt;
  }
  const Computation& condition = *w.while_condition();
  const Computation& body = *w.while_body();
  const Instruction* cp = StateParameter(condition);
  const Instruction* bp = StateParameter(body);
  if (cp == nullptr || bp == nullptr || body.root() == nullptr ||
      body.root()->opcode() != Opcode::kTuple || condition.root() == nullptr) {
    return std::nullopt;
  }
  // The condition: compare(counter, bound) or compare(bound, counter).
  const Instruction* root = condition.root();
  const Instruction* cmp = Expression(root);
  if (cmp->opcode() != Opcode::kCompare || cmp->operand_count() != 2) return std::nullopt;
  const Instruction* a = Outer(cmp->operand(0), root);
  const Instruction* b = Outer(cmp->operand(1), root);
  ComparisonDirection direction = cmp->comparison_direction();
  if (b->opcode() == Opcode::kGetTupleElement) {
    std::swap(a, b);
    direction = Mirrored(direction);
  }
  if (a->opcode() != Opcode::kGetTupleElement || a->operand(0) != cp) return std::nullopt;
  const int64_t k = a->tuple_index();
  const std::optional<int64_t> bound = IntegerConstant(b);
  if (!bound || k < 0 || k >= body.root()->operand_count() || k >= w.operand(0)->operand_count()) {
    return std::nullopt;
  }
  const std::optional<int64_t> step = Step(body.root()->operand(k), bp, k);
  const std::optional<int64_t> start = IntegerConstant(w.operand(0)->operand(k));
  if (!step || !start || *step == 0) return std::nullopt;
  // Counted in the counter's own type would wrap where int64 does not: the
  // count stands only while the counter stays within that type.
  const PrimitiveType type = a->shape().element_type();
  const int bits = 8 * ByteWidth(type);
  const bool is_signed = IsSignedInteger(type);
  const int64_t low = is_signed ? (bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))) : 0;
  const int64_t high =
      bits == 64 ? INT64_MAX
                 : (is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1);
  int64_t counter = *start;
  for (int64_t trips = 0; trips <= limit; ++trips) {
    if (!Holds(direction, counter, *bound)) return trips;
    if ((*step > 0 && counter > high - *step) || (*step < 0 && counter < low - *step)) {
      return std::nullopt;  // it would wrap
    }
    counter += *step;
  }
  return std::nullopt;
}

WhileStateCopies PlanWhileStateCopies(const Instruction& w) {
  const Shape& state = w.shape();
  const int64_t leaves = static_cast<int64_t>(FlattenLeafShapes(state).size());
  WhileStateCopies plan;
  plan.condition_reads.assign(leaves, true);
  plan.body_forwards.assign(leaves, false);
  if (w.opcode() != Opcode::kWhile || !state.IsTuple() || w.called_computations().size() != 2 ||
      w.while_condition() == nullptr || w.while_body() == nullptr) {
    return plan;
  }
  std::vector<int64_t> first, count;
  ElementLeaves(state, first, count);
  const int64_t elements = static_cast<int64_t>(first.size());

  if (const Instruction* p = StateParameter(*w.while_condition())) {
    std::vector<bool> read(elements, false);
    bool whole = p->IsRoot();
    for (const Instruction* user : p->users()) {
      const int64_t i = user->tuple_index();
      if (user->opcode() != Opcode::kGetTupleElement || i < 0 || i >= elements) {
        whole = true;
        break;
      }
      read[i] = read[i] || user->user_count() > 0 || user->IsRoot();  // not a dead gte
    }
    for (int64_t i = 0; i < elements && !whole; ++i) {
      for (int64_t k = 0; k < count[i]; ++k) plan.condition_reads[first[i] + k] = read[i];
    }
  }

  const Instruction* p = StateParameter(*w.while_body());
  const Instruction* root = w.while_body()->root();
  if (p == nullptr || root == nullptr || root->opcode() != Opcode::kTuple ||
      root->operand_count() != elements) {
    return plan;
  }
  for (int64_t i = 0; i < elements; ++i) {
    const Instruction* element = root->operand(i);
    const bool forwarded = element->opcode() == Opcode::kGetTupleElement &&
                           element->operand(0) == p && element->tuple_index() == i;
    for (int64_t k = 0; k < count[i]; ++k) plan.body_forwards[first[i] + k] = forwarded;
  }
  return plan;
}

}  // namespace hlogym

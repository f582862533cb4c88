#include "backend/while_state.h"

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

}  // namespace

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

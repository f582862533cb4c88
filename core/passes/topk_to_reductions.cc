#include "core/passes/topk_to_reductions.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/literal.h"
#include "core/passes/fusion_chain.h"
#include "core/passes/lowering_walk.h"

namespace hlogym {
namespace {

Instruction* Compare(Computation& c, Instruction* x, Instruction* y, ComparisonDirection direction,
                     bool total_order) {
  Instruction* cmp = c.AddInstruction(
      Instruction::Create(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred), {x, y}));
  cmp->mutable_attrs<CompareAttrs>().direction = direction;
  if (total_order) cmp->mutable_attrs<CompareAttrs>().type = ComparisonType::kTotalOrder;
  return cmp;
}

Instruction* Binary(Computation& c, Opcode opcode, Instruction* x, Instruction* y) {
  return c.AddInstruction(Instruction::Create(opcode, x->shape(), {x, y}));
}

// The reducer of (value, index) pairs, index -1 for an element already
// taken: the pair that comes first in topk's order. Commutative and
// associative (a total order with distinct indices), so any reduction tree
// gives the same pick.
std::unique_ptr<Computation> PickReducer(Module& module, PrimitiveType type, PrimitiveType index,
                                         bool largest) {
  auto reducer = std::make_unique<Computation>(module.UniqueComputationName("topk_pick"));
  const Shape value = Shape::Scalar(type);
  const Shape position = Shape::Scalar(index);
  Instruction* va = reducer->AddInstruction(Instruction::CreateParameter(0, value, "value"));
  Instruction* ia = reducer->AddInstruction(Instruction::CreateParameter(1, position, "index"));
  Instruction* vb = reducer->AddInstruction(Instruction::CreateParameter(2, value, "other_value"));
  Instruction* ib =
      reducer->AddInstruction(Instruction::CreateParameter(3, position, "other_index"));
  const bool floats = IsFloat(type);
  Instruction* zero =
      reducer->AddInstruction(Instruction::CreateConstant(Literal::ScalarFromInt64(index, 0)));
  Instruction* a_open = Compare(*reducer, ia, zero, ComparisonDirection::kGe, false);
  Instruction* b_open = Compare(*reducer, ib, zero, ComparisonDirection::kGe, false);
  Instruction* b_beyond = Compare(
      *reducer, vb, va, largest ? ComparisonDirection::kGt : ComparisonDirection::kLt, floats);
  Instruction* same = Compare(*reducer, vb, va, ComparisonDirection::kEq, floats);
  Instruction* b_earlier = Compare(*reducer, ib, ia, ComparisonDirection::kLt, false);
  Instruction* b_first =
      Binary(*reducer, Opcode::kOr, b_beyond, Binary(*reducer, Opcode::kAnd, same, b_earlier));
  Instruction* a_taken = reducer->AddInstruction(
      Instruction::Create(Opcode::kNot, Shape::Scalar(PrimitiveType::kPred), {a_open}));
  Instruction* b_wins =
      Binary(*reducer, Opcode::kAnd, b_open, Binary(*reducer, Opcode::kOr, a_taken, b_first));
  Instruction* v =
      reducer->AddInstruction(Instruction::Create(Opcode::kSelect, value, {b_wins, vb, va}));
  Instruction* i =
      reducer->AddInstruction(Instruction::Create(Opcode::kSelect, position, {b_wins, ib, ia}));
  reducer->set_root(reducer->AddInstruction(
      Instruction::Create(Opcode::kTuple, Shape::Tuple({value, position}), {v, i})));
  return reducer;
}

absl::Status Lower(Module& module, Rewriter& rewriter, Instruction* topk) {
  Computation* computation = topk->parent();
  Instruction* x = topk->operand(0);
  const Shape& shape = x->shape();
  const PrimitiveType type = shape.element_type();
  const PrimitiveType index = topk->shape().tuple_shape(1).element_type();
  const TopKAttrs& attrs = topk->attrs<TopKAttrs>();
  const int64_t rank = shape.rank();
  const std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  const std::vector<int64_t> rows(dims.begin(), dims.end() - 1);
  std::vector<int64_t> row_dims;  // the rows' dimensions in `dims`
  for (int64_t d = 0; d + 1 < rank; ++d) row_dims.push_back(d);
  std::vector<int64_t> column = rows;
  column.push_back(1);

  Computation* reducer =
      rewriter.AddComputation(PickReducer(module, type, index, attrs.largest), computation);
  std::vector<Instruction*> picked_values, picked_indices;
  for (int64_t j = 0; j < attrs.k; ++j) {
    // Pick j: an element's index stays in the running while no earlier pick
    // took it.
    FusionChain chain(rewriter, computation);
    Instruction* iota = chain.Add(Opcode::kIota, Shape::Array(index, dims), {});
    iota->set_index(rank - 1);
    Instruction* open = nullptr;
    for (Instruction* taken : picked_indices) {
      Instruction* other = chain.Add(Opcode::kCompare, Shape::Array(PrimitiveType::kPred, dims),
                                     {iota, chain.Broadcast(taken, dims, row_dims)});
      other->mutable_attrs<CompareAttrs>().direction = ComparisonDirection::kNe;
      open = open == nullptr
                 ? other
                 : chain.Add(Opcode::kAnd, Shape::Array(PrimitiveType::kPred, dims), {open, other});
    }
    Instruction* candidates = iota;
    if (open != nullptr) {
      Instruction* none =
          chain.Broadcast(chain.Constant(Literal::ScalarFromInt64(index, -1)), dims, {});
      candidates = chain.Add(Opcode::kSelect, Shape::Array(index, dims), {open, iota, none});
    }
    Instruction* reduce = chain.Add(
        Opcode::kReduce, Shape::Tuple({Shape::Array(type, rows), Shape::Array(index, rows)}),
        {x, candidates, chain.Constant(Literal(Shape::Scalar(type))),
         chain.Constant(Literal::ScalarFromInt64(index, -1))});
    reduce->mutable_dimensions().assign({rank - 1});
    reduce->set_called_computations({reducer});
    ASSIGN_OR_RETURN(Instruction * pick, chain.Fuse(reduce));
    for (int64_t leaf = 0; leaf < 2; ++leaf) {
      auto gte =
          Instruction::Create(Opcode::kGetTupleElement, pick->shape().tuple_shape(leaf), {pick});
      gte->set_index(leaf);
      (leaf == 0 ? picked_values : picked_indices)
          .push_back(rewriter.Add(computation, std::move(gte)));
    }
  }

  // The picks side by side: [rows..., k] each.
  std::vector<Instruction*> outputs;
  for (std::vector<Instruction*>* picks : {&picked_values, &picked_indices}) {
    FusionChain chain(rewriter, computation);
    std::vector<Instruction*> columns;
    for (Instruction* pick : *picks) columns.push_back(chain.Reshape(pick, column));
    Instruction* joined = columns.front();
    if (columns.size() > 1) {
      std::vector<int64_t> joined_dims = rows;
      joined_dims.push_back(attrs.k);
      joined =
          chain.Add(Opcode::kConcatenate,
                    Shape::Array(picks->front()->shape().element_type(), joined_dims), columns);
      joined->mutable_dimensions().assign({rank - 1});
    }
    ASSIGN_OR_RETURN(Instruction * fused, chain.Fuse(joined));
    outputs.push_back(fused);
  }
  Instruction* result =
      rewriter.Add(computation, Instruction::Create(Opcode::kTuple, topk->shape(), outputs));
  return rewriter.Replace(topk, result);
}

}  // namespace

std::string TopKRefusal(const Instruction& topk) {
  if (topk.opcode() != Opcode::kTopK || topk.operand_count() != 1 || !topk.has_attrs<TopKAttrs>() ||
      !topk.shape().IsTuple() || topk.shape().tuple_size() != 2) {
    return "not a topk of one operand";
  }
  if (std::string why = CommonLoweringRefusal(topk); !why.empty()) return why;
  const Shape& x = topk.operand(0)->shape();
  if (!x.IsArray() || x.rank() == 0) return "a scalar or non-array operand";
  const PrimitiveType type = x.element_type();
  if (!IsFloat(type) && !IsInteger(type)) return "an operand neither float nor integer";
  const int64_t k = topk.attrs<TopKAttrs>().k;
  const int64_t length = x.dim(x.rank() - 1);
  if (k < 1 || k > length) return absl::StrCat("k = ", k, " outside 1..", length);
  if (k > TopKToReductionsPass::kMaxK) {
    return absl::StrCat("k = ", k, " is above ", TopKToReductionsPass::kMaxK);
  }
  const PrimitiveType index = topk.shape().tuple_shape(1).element_type();
  if (!IsSignedInteger(index) || ByteWidth(index) < 4) return "an index type other than s32/s64";
  return "";
}

absl::StatusOr<bool> TopKToReductionsPass::Run(Module& module, Rewriter& rewriter) {
  return LowerEach(
      module, rewriter, name(), Opcode::kTopK,
      [](const Instruction& topk) { return TopKRefusal(topk).empty(); },
      [&](Instruction* topk) { return Lower(module, rewriter, topk); });
}

}  // namespace hlogym

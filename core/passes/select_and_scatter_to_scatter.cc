#include "core/passes/select_and_scatter_to_scatter.h"

#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/base/status_macros.h"
#include "core/ir/literal.h"
#include "core/passes/fusion_chain.h"
#include "core/passes/lowering_walk.h"

namespace hlogym {
namespace {

bool IsScalarOf(const Shape& shape, PrimitiveType type) {
  return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
}

// Whether `select` takes two scalars of `type` and returns a pred scalar.
bool IsScalarPredicate(const Computation& select, PrimitiveType type) {
  return select.parameter_count() == 2 && IsScalarOf(select.parameter(0)->shape(), type) &&
         IsScalarOf(select.parameter(1)->shape(), type) && select.root() != nullptr &&
         IsScalarOf(select.root()->shape(), PrimitiveType::kPred);
}

Instruction* AddTo(Computation& computation, Opcode opcode, const Shape& shape,
                   std::vector<Instruction*> operands) {
  return computation.AddInstruction(Instruction::Create(opcode, shape, operands));
}

// The reduce-window's reducer: (value, position) pairs, position -1 while
// nothing is selected; a later element replaces the selection unless
// `select`(selection, element) keeps it. `select` is inlined.
std::unique_ptr<Computation> SelectionReducer(Module& module, const Computation& select,
                                              PrimitiveType type, PrimitiveType index) {
  auto reducer =
      std::make_unique<Computation>(module.UniqueComputationName("select_and_scatter_selection"));
  const Shape value = Shape::Scalar(type);
  const Shape position = Shape::Scalar(index);
  const Shape pred = Shape::Scalar(PrimitiveType::kPred);
  Instruction* va = reducer->AddInstruction(Instruction::CreateParameter(0, value, "value"));
  Instruction* pa = reducer->AddInstruction(Instruction::CreateParameter(1, position, "position"));
  Instruction* vb = reducer->AddInstruction(Instruction::CreateParameter(2, value, "next_value"));
  Instruction* pb =
      reducer->AddInstruction(Instruction::CreateParameter(3, position, "next_position"));
  absl::flat_hash_map<const Instruction*, Instruction*> copies = {{select.parameter(0), va},
                                                                  {select.parameter(1), vb}};
  for (Instruction* inst : select.MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : inst->operands()) operands.push_back(copies.at(operand));
    std::unique_ptr<Instruction> copy = inst->CloneWithNewOperands(inst->shape(), operands);
    copy->set_name("");
    copy->set_unique_id(-1);
    copies[inst] = reducer->AddInstruction(std::move(copy));
  }
  Instruction* keeps = copies.at(select.root());
  Instruction* none =
      reducer->AddInstruction(Instruction::CreateConstant(Literal::ScalarFromInt64(index, -1)));
  Instruction* empty = AddTo(*reducer, Opcode::kCompare, pred, {pa, none});
  empty->mutable_attrs<CompareAttrs>().direction = ComparisonDirection::kEq;
  Instruction* replaced = AddTo(*reducer, Opcode::kNot, pred, {keeps});
  Instruction* take_next = AddTo(*reducer, Opcode::kOr, pred, {empty, replaced});
  Instruction* v = AddTo(*reducer, Opcode::kSelect, value, {take_next, vb, va});
  Instruction* p = AddTo(*reducer, Opcode::kSelect, position, {take_next, pb, pa});
  reducer->set_root(AddTo(*reducer, Opcode::kTuple, Shape::Tuple({value, position}), {v, p}));
  return reducer;
}

absl::Status Lower(Module& module, Rewriter& rewriter, Instruction* sas) {
  Computation* computation = sas->parent();
  Instruction* operand = sas->operand(0);
  Instruction* source = sas->operand(1);
  Instruction* init = sas->operand(2);
  const Shape& shape = operand->shape();
  const PrimitiveType type = shape.element_type();
  const int64_t n = shape.element_count();
  const PrimitiveType index =
      n <= std::numeric_limits<int32_t>::max() ? PrimitiveType::kS32 : PrimitiveType::kS64;
  const Shape windows = Shape::Array(index, source->shape().dims());

  // Each window's selected position (and value), as one fusion: the
  // positions are computed where the window reads them.
  FusionChain chain(rewriter, computation);
  Instruction* positions =
      chain.Reshape(chain.Add(Opcode::kIota, Shape::Array(index, {n}), {}),
                    std::vector<int64_t>(shape.dims().begin(), shape.dims().end()));
  Instruction* nothing = chain.Constant(Literal::ScalarFromInt64(index, -1));
  Computation* reducer = rewriter.AddComputation(
      SelectionReducer(module, *sas->called_computations()[0], type, index), computation);
  Instruction* window = chain.Add(
      Opcode::kReduceWindow, Shape::Tuple({Shape::Array(type, source->shape().dims()), windows}),
      {operand, positions, init, nothing});
  window->mutable_attrs<WindowAttrs>().window = sas->attrs<WindowAttrs>().window;
  window->set_called_computations({reducer});
  ASSIGN_OR_RETURN(window, chain.Fuse(window));
  auto gte = Instruction::Create(Opcode::kGetTupleElement, windows, {window});
  gte->set_index(1);
  Instruction* selected = rewriter.Add(computation, std::move(gte));

  // The source scattered onto the init value at the selected positions.
  const int64_t count = source->shape().element_count();
  Instruction* indices = rewriter.Add(
      computation,
      Instruction::Create(Opcode::kReshape, Shape::Array(index, {count, 1}), {selected}));
  Instruction* updates = rewriter.Add(
      computation, Instruction::Create(Opcode::kReshape, Shape::Array(type, {count}), {source}));
  Instruction* base = rewriter.Add(
      computation, Instruction::Create(Opcode::kBroadcast, Shape::Array(type, {n}), {init}));
  Instruction* scatter = rewriter.Add(
      computation,
      Instruction::Create(Opcode::kScatter, Shape::Array(type, {n}), {base, indices, updates}));
  ScatterDimensions& dims = scatter->mutable_attrs<ScatterAttrs>().dims;
  dims.inserted_window_dims = {0};
  dims.scatter_dims_to_operand_dims = {0};
  dims.index_vector_dim = 1;
  scatter->set_called_computations({sas->called_computations()[1]});
  Instruction* result = scatter;
  if (shape.rank() != 1) {
    result =
        rewriter.Add(computation, Instruction::Create(Opcode::kReshape, sas->shape(), {scatter}));
  }
  return rewriter.Replace(sas, result);
}

}  // namespace

std::string SelectAndScatterRefusal(const Instruction& sas) {
  if (sas.opcode() != Opcode::kSelectAndScatter || sas.operand_count() != 3 ||
      sas.called_computations().size() != 2 || !sas.has_attrs<WindowAttrs>() ||
      !sas.shape().IsArray()) {
    return "not a select-and-scatter of arrays";
  }
  if (std::string why = CommonLoweringRefusal(sas); !why.empty()) return why;
  const Shape& operand = sas.operand(0)->shape();
  const Shape& source = sas.operand(1)->shape();
  if (!operand.IsArray() || !source.IsArray() || operand.rank() == 0 ||
      !sas.shape().Compatible(operand) || source.element_type() != operand.element_type() ||
      !IsScalarOf(sas.operand(2)->shape(), operand.element_type())) {
    return "operand, source, init and result of other shapes than select-and-scatter's";
  }
  if (operand.element_count() == 0 || source.element_count() == 0) return "an empty operand";
  const Window& window = sas.attrs<WindowAttrs>().window;
  if (static_cast<int64_t>(window.size()) != operand.rank() || source.rank() != operand.rank()) {
    return "a window of another rank than the operand's";
  }
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDimension& w = window[d];
    if (w.lhs_dilation != 1 || w.rhs_dilation != 1 || w.reversal || w.stride < 1 || w.size < 1) {
      return "a window with dilation, reversal or a stride below 1";
    }
    const int64_t padded = operand.dim(d) + w.padding_low + w.padding_high;
    const int64_t windows = padded < w.size ? 0 : (padded - w.size) / w.stride + 1;
    if (windows != source.dim(d)) return "a source of another shape than the window grid";
  }
  const Computation* select = sas.called_computations()[0];
  const Computation* scatter = sas.called_computations()[1];
  if (select == nullptr || !IsScalarPredicate(*select, operand.element_type())) {
    return "a select computation that is not a predicate of two scalars";
  }
  if (scatter == nullptr || scatter->parameter_count() != 2 || scatter->root() == nullptr ||
      !IsScalarOf(scatter->root()->shape(), operand.element_type())) {
    return "a scatter computation that is not a binary op on scalars";
  }
  return "";
}

absl::StatusOr<bool> SelectAndScatterToScatterPass::Run(Module& module, Rewriter& rewriter) {
  return LowerEach(
      module, rewriter, name(), Opcode::kSelectAndScatter,
      [&](const Instruction& sas) {
        return SelectAndScatterRefusal(sas).empty() && (!wanted_ || wanted_(sas));
      },
      [&](Instruction* sas) { return Lower(module, rewriter, sas); });
}

}  // namespace hlogym

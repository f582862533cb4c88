// Shape and data-movement rules: identities (reshape to the same shape,
// full slices, zero padding, identity transposes...) and compositions
// (transpose of transpose, reshape of reshape, slice of slice, broadcast of
// broadcast). All exact: they only move the same elements.
#include "core/ir/computation.h"
#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

bool SameShape(const Instruction* a, const Instruction* b) { return a->shape() == b->shape(); }

Instruction* IdentityReshape(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
Instruction* ReshapeReshape(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kReshape) return nullptr;
  if (SameShape(i, inner->operand(0))) return inner->operand(0);
  return ctx.Add(Instruction::Create(Opcode::kReshape, i->shape(), {inner->operand(0)}));
}
Instruction* IdentityTranspose(Instruction* i, RuleContext&) {
  for (int64_t k = 0; k < static_cast<int64_t>(i->dimensions().size()); ++k) {
    if (i->dimension(k) != k) return nullptr;
  }
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// transpose(transpose(x, p), q) = transpose(x, p∘q); identity -> x.
Instruction* TransposeTranspose(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kTranspose) return nullptr;
  std::vector<int64_t> composed;
  bool identity = true;
  for (int64_t k = 0; k < static_cast<int64_t>(i->dimensions().size()); ++k) {
    composed.push_back(inner->dimension(i->dimension(k)));
    identity &= composed.back() == k;
  }
  if (identity && SameShape(i, inner->operand(0))) return inner->operand(0);
  auto t = Instruction::Create(Opcode::kTranspose, i->shape(), {inner->operand(0)});
  t->mutable_dimensions() = composed;
  return ctx.Add(std::move(t));
}
Instruction* IdentityBroadcast(Instruction* i, RuleContext&) {
  if (!SameShape(i, i->operand(0))) return nullptr;
  for (int64_t k = 0; k < static_cast<int64_t>(i->dimensions().size()); ++k) {
    if (i->dimension(k) != k) return nullptr;
  }
  return i->operand(0);
}
// broadcast(broadcast(x, d1), d2) = broadcast(x, d2∘d1).
Instruction* BroadcastBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kBroadcast) return nullptr;
  std::vector<int64_t> composed;
  for (int64_t d : inner->dimensions()) composed.push_back(i->dimension(d));
  auto b = Instruction::Create(Opcode::kBroadcast, i->shape(), {inner->operand(0)});
  b->mutable_dimensions() = composed;
  return ctx.Add(std::move(b));
}
// reshape(broadcast(scalar)) = broadcast(scalar) of the new shape.
Instruction* ReshapeOfScalarBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kBroadcast || !inner->operand(0)->shape().IsScalar()) return nullptr;
  return ctx.Add(Instruction::Create(Opcode::kBroadcast, i->shape(), {inner->operand(0)}));
}
Instruction* FullSlice(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
Instruction* SliceSlice(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kSlice) return nullptr;
  const SliceAttrs& a = inner->attrs<SliceAttrs>();
  const SliceAttrs& b = i->attrs<SliceAttrs>();
  SliceAttrs c;
  for (size_t d = 0; d < a.starts.size(); ++d) {
    const int64_t sa = a.strides.empty() ? 1 : a.strides[d];
    const int64_t sb = b.strides.empty() ? 1 : b.strides[d];
    c.starts.push_back(a.starts[d] + b.starts[d] * sa);
    c.strides.push_back(sa * sb);
    c.limits.push_back(c.starts.back() + (i->shape().dim(d) - 1) * c.strides.back() + 1);
  }
  auto s = Instruction::Create(Opcode::kSlice, i->shape(), {inner->operand(0)});
  s->mutable_attrs<SliceAttrs>() = c;
  return ctx.Add(std::move(s));
}
Instruction* ZeroPad(Instruction* i, RuleContext&) {
  for (const PaddingDimension& p : i->attrs<PadAttrs>().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return nullptr;
  }
  return i->operand(0);
}
// reverse over dims of size 1 (or none) changes nothing.
Instruction* TrivialReverse(Instruction* i, RuleContext&) {
  for (int64_t d : i->dimensions()) {
    if (i->shape().dim(d) != 1) return nullptr;
  }
  return i->operand(0);
}
Instruction* ReverseReverse(Instruction* i, RuleContext&) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kReverse || inner->dimensions() != i->dimensions()) return nullptr;
  return inner->operand(0);
}
Instruction* SingleConcatenate(Instruction* i, RuleContext&) {
  return i->operand_count() == 1 ? i->operand(0) : nullptr;
}
Instruction* CopyToOperand(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// dynamic-slice at constant (in-range) indices is a slice.
Instruction* DynamicSliceConstant(Instruction* i, RuleContext& ctx) {
  const Instruction* operand = i->operand(0);
  if (i->operand_count() != operand->shape().rank() + 1) return nullptr;
  SliceAttrs slice;
  for (int64_t d = 0; d < operand->shape().rank(); ++d) {
    std::optional<double> start = ScalarConstantValue(i->operand(d + 1));
    if (!start) return nullptr;
    const int64_t limit = operand->shape().dim(d) - i->shape().dim(d);
    const int64_t s = std::clamp<int64_t>(static_cast<int64_t>(*start), 0, limit);
    slice.starts.push_back(s);
    slice.limits.push_back(s + i->shape().dim(d));
    slice.strides.push_back(1);
  }
  auto s = Instruction::Create(Opcode::kSlice, i->shape(), {i->operand(0)});
  s->mutable_attrs<SliceAttrs>() = slice;
  return ctx.Add(std::move(s));
}
Instruction* TupleElementOfTuple(Instruction* i, RuleContext&) {
  return i->operand(0)->opcode() == Opcode::kTuple ? i->operand(0)->operand(i->tuple_index())
                                                   : nullptr;
}

}  // namespace

const std::vector<AlgsimpRule>& ShapeRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"identity-reshape", Opcode::kReshape, IdentityReshape},
      {"reshape-reshape", Opcode::kReshape, ReshapeReshape},
      {"reshape-of-scalar-broadcast", Opcode::kReshape, ReshapeOfScalarBroadcast},
      {"identity-transpose", Opcode::kTranspose, IdentityTranspose},
      {"transpose-transpose", Opcode::kTranspose, TransposeTranspose},
      {"identity-broadcast", Opcode::kBroadcast, IdentityBroadcast},
      {"broadcast-broadcast", Opcode::kBroadcast, BroadcastBroadcast},
      {"full-slice", Opcode::kSlice, FullSlice},
      {"slice-slice", Opcode::kSlice, SliceSlice},
      {"zero-pad", Opcode::kPad, ZeroPad},
      {"trivial-reverse", Opcode::kReverse, TrivialReverse},
      {"reverse-reverse", Opcode::kReverse, ReverseReverse},
      {"single-concatenate", Opcode::kConcatenate, SingleConcatenate},
      {"copy", Opcode::kCopy, CopyToOperand},
      {"dynamic-slice-constant", Opcode::kDynamicSlice, DynamicSliceConstant},
      {"get-tuple-element-of-tuple", Opcode::kGetTupleElement, TupleElementOfTuple},
  };
  return *rules;
}

}  // namespace hlogym

// Shape rules for reshape, transpose, broadcast, reverse and pad: identities
// (same shape, identity permutation, zero padding, reversal of size-1 dims)
// and compositions (reshape of reshape, transpose of transpose, broadcast of
// broadcast...). All exact: they move the same elements to the same places.
//
// New broadcasts are only made with increasing dimensions (when their inputs
// have them), the form every consumer handles best.
#include <algorithm>

#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

// Whether `inst`'s dimensions name each of `rank` dimensions once.
bool IsPermutationOf(const Instruction* inst, int64_t rank) {
  const auto dims = inst->dimensions();
  if (static_cast<int64_t>(dims.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// Whether a broadcast's dimensions map each operand dimension into its result.
bool IsWellFormedBroadcast(const Instruction* b) {
  if (b->opcode() != Opcode::kBroadcast ||
      static_cast<int64_t>(b->dimensions().size()) != b->operand(0)->shape().rank()) {
    return false;
  }
  for (int64_t d : b->dimensions()) {
    if (d < 0 || d >= b->shape().rank()) return false;
  }
  return true;
}

bool IsIncreasing(absl::Span<const int64_t> dims) {
  return std::is_sorted(dims.begin(), dims.end()) &&
         std::adjacent_find(dims.begin(), dims.end()) == dims.end();
}

Instruction* NewBroadcast(Instruction* operand, const Shape& shape, std::vector<int64_t> dims,
                          RuleContext& ctx) {
  Instruction* b = ctx.Add(Opcode::kBroadcast, shape, {operand});
  b->mutable_dimensions().assign(dims.begin(), dims.end());
  return b;
}

Instruction* IdentityReshape(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
Instruction* ReshapeReshape(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kReshape) return nullptr;
  if (SameShape(i, inner->operand(0))) return inner->operand(0);
  return ctx.Add(Opcode::kReshape, i->shape(), {inner->operand(0)});
}
// reshape(broadcast(scalar)) -> broadcast(scalar) of the new shape.
Instruction* ReshapeOfScalarBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kBroadcast || !inner->operand(0)->shape().IsScalar()) {
    return nullptr;
  }
  return ctx.BroadcastScalar(inner->operand(0), i->shape());
}
Instruction* IdentityTranspose(Instruction* i, RuleContext&) {
  return IsIdentityPermutation(i->dimensions()) && SameShape(i, i->operand(0)) ? i->operand(0)
                                                                                : nullptr;
}
// transpose(transpose(x, p), q) = transpose(x, p∘q), or x when that is the
// identity.
Instruction* TransposeTranspose(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kTranspose || !IsPermutationOf(i, i->shape().rank()) ||
      !IsPermutationOf(inner, i->shape().rank())) {
    return nullptr;
  }
  std::vector<int64_t> composed;
  for (int64_t d : i->dimensions()) composed.push_back(inner->dimension(d));
  if (IsIdentityPermutation(composed) && SameShape(i, inner->operand(0))) return inner->operand(0);
  Instruction* t = ctx.Add(Opcode::kTranspose, i->shape(), {inner->operand(0)});
  t->mutable_dimensions().assign(composed.begin(), composed.end());
  return t;
}
// transpose(broadcast(x, d), p) = broadcast(x, p⁻¹∘d) when that keeps the
// operand's dimensions in order.
Instruction* TransposeOfBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsWellFormedBroadcast(inner) || !IsPermutationOf(i, i->shape().rank())) return nullptr;
  std::vector<int64_t> inverse(i->dimensions().size());
  for (size_t k = 0; k < inverse.size(); ++k) inverse[i->dimension(k)] = static_cast<int64_t>(k);
  std::vector<int64_t> dims;
  for (int64_t d : inner->dimensions()) dims.push_back(inverse[d]);
  if (!IsIncreasing(dims)) return nullptr;
  return NewBroadcast(inner->operand(0), i->shape(), std::move(dims), ctx);
}
// A transpose that only moves size-1 dimensions is a reshape.
Instruction* TransposeIsReshape(Instruction* i, RuleContext& ctx) {
  if (IsIdentityPermutation(i->dimensions()) || !IsPermutationOf(i, i->shape().rank())) {
    return nullptr;
  }
  int64_t last = -1;
  for (int64_t k = 0; k < i->shape().rank(); ++k) {
    if (i->shape().dim(k) == 1) continue;
    if (i->dimension(k) < last) return nullptr;
    last = i->dimension(k);
  }
  return ctx.Add(Opcode::kReshape, i->shape(), {i->operand(0)});
}
Instruction* IdentityBroadcast(Instruction* i, RuleContext&) {
  if (!SameShape(i, i->operand(0)) || !IsIdentityPermutation(i->dimensions())) return nullptr;
  return i->operand(0);
}
// broadcast(broadcast(x, d1), d2) = broadcast(x, d2∘d1).
Instruction* BroadcastBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (!IsWellFormedBroadcast(inner) || !IsWellFormedBroadcast(i)) return nullptr;
  std::vector<int64_t> composed;
  for (int64_t d : inner->dimensions()) composed.push_back(i->dimension(d));
  return NewBroadcast(inner->operand(0), i->shape(), std::move(composed), ctx);
}
// broadcast(reshape(x)) where the reshape only inserts size-1 dimensions:
// broadcast x directly.
Instruction* BroadcastOfReshape(Instruction* i, RuleContext& ctx) {
  Instruction* reshape = i->operand(0);
  if (reshape->opcode() != Opcode::kReshape || !IsWellFormedBroadcast(i)) return nullptr;
  Instruction* x = reshape->operand(0);
  const auto from = x->shape().dims();
  const auto to = reshape->shape().dims();
  std::vector<int64_t> dims;  // x dim -> result dim
  size_t j = 0;
  for (int64_t size : from) {
    while (j < to.size() && to[j] != size && to[j] == 1) ++j;
    if (j == to.size() || to[j] != size) return nullptr;
    dims.push_back(i->dimension(static_cast<int64_t>(j++)));
  }
  for (; j < to.size(); ++j) {
    if (to[j] != 1) return nullptr;
  }
  if (!IsIncreasing(dims)) return nullptr;
  return NewBroadcast(x, i->shape(), std::move(dims), ctx);
}
// reverse over dimensions of size 1 (or none) changes nothing.
Instruction* TrivialReverse(Instruction* i, RuleContext&) {
  for (int64_t d : i->dimensions()) {
    if (d < 0 || d >= i->shape().rank() || i->shape().dim(d) != 1) return nullptr;
  }
  return i->operand(0);
}
Instruction* ReverseReverse(Instruction* i, RuleContext&) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kReverse) return nullptr;
  std::vector<int64_t> a(i->dimensions().begin(), i->dimensions().end());
  std::vector<int64_t> b(inner->dimensions().begin(), inner->dimensions().end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b ? inner->operand(0) : nullptr;
}
// Reversing dimensions that a broadcast created changes nothing.
Instruction* ReverseOfBroadcast(Instruction* i, RuleContext&) {
  Instruction* inner = i->operand(0);
  if (inner->opcode() != Opcode::kBroadcast || i->dimensions().empty()) return nullptr;
  for (int64_t d : i->dimensions()) {
    const auto& made_from_operand = inner->dimensions();
    if (std::find(made_from_operand.begin(), made_from_operand.end(), d) !=
        made_from_operand.end()) {
      return nullptr;
    }
  }
  return inner;
}
Instruction* ZeroPad(Instruction* i, RuleContext&) {
  if (!i->has_attrs<PadAttrs>()) return nullptr;
  for (const PaddingDimension& p : i->attrs<PadAttrs>().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return nullptr;
  }
  return i->operand(0);
}

}  // namespace

const std::vector<AlgsimpRule>& ShapeRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"identity-reshape", Opcode::kReshape, IdentityReshape},
      {"reshape-reshape", Opcode::kReshape, ReshapeReshape},
      {"reshape-of-scalar-broadcast", Opcode::kReshape, ReshapeOfScalarBroadcast},
      {"identity-transpose", Opcode::kTranspose, IdentityTranspose},
      {"transpose-transpose", Opcode::kTranspose, TransposeTranspose},
      {"transpose-of-broadcast", Opcode::kTranspose, TransposeOfBroadcast},
      {"transpose-is-reshape", Opcode::kTranspose, TransposeIsReshape},
      {"identity-broadcast", Opcode::kBroadcast, IdentityBroadcast},
      {"broadcast-broadcast", Opcode::kBroadcast, BroadcastBroadcast},
      {"broadcast-of-reshape", Opcode::kBroadcast, BroadcastOfReshape},
      {"trivial-reverse", Opcode::kReverse, TrivialReverse},
      {"reverse-reverse", Opcode::kReverse, ReverseReverse},
      {"reverse-of-broadcast", Opcode::kReverse, ReverseOfBroadcast},
      {"zero-pad", Opcode::kPad, ZeroPad},
  };
  return *rules;
}

}  // namespace hlogym

// Slice rules for slice, dynamic-slice, dynamic-update-slice and
// concatenate: full-size identities, compositions (slice of slice, of a
// broadcast, of a concatenate), constant start indices, and concatenations
// that can be flattened, shortened or merged. All exact: they select the same
// elements.
//
// Dynamic start indices are clamped into range, so a dynamic-slice or
// dynamic-update-slice as large as its operand always starts at 0.
#include <algorithm>

#include "core/passes/algsimp_rules.h"

namespace hlogym {
namespace {

int64_t Stride(const SliceAttrs& a, size_t d) { return d < a.strides.size() ? a.strides[d] : 1; }

// A slice's attributes when it has well-formed ones (one entry per dimension).
const SliceAttrs* Attrs(const Instruction* slice) {
  if (slice->opcode() != Opcode::kSlice || !slice->has_attrs<SliceAttrs>()) return nullptr;
  const SliceAttrs& a = slice->attrs<SliceAttrs>();
  const size_t rank = static_cast<size_t>(slice->shape().rank());
  if (a.starts.size() != rank || a.limits.size() != rank ||
      (!a.strides.empty() && a.strides.size() != rank)) {
    return nullptr;
  }
  return &a;
}

Instruction* NewSlice(Instruction* operand, const Shape& shape, SliceAttrs attrs,
                      RuleContext& ctx) {
  Instruction* s = ctx.Add(Opcode::kSlice, shape, {operand});
  s->mutable_attrs<SliceAttrs>() = std::move(attrs);
  return s;
}

// The concatenated dimension, when well-formed.
std::optional<int64_t> ConcatDimension(const Instruction* concat) {
  if (concat->opcode() != Opcode::kConcatenate || concat->dimensions().size() != 1) {
    return std::nullopt;
  }
  const int64_t dim = concat->dimension(0);
  if (dim < 0 || dim >= concat->shape().rank()) return std::nullopt;
  for (const Instruction* operand : concat->operands()) {
    if (operand->shape().rank() != concat->shape().rank()) return std::nullopt;
  }
  return dim;
}

// The slice limit that ends right after the last element taken.
int64_t LimitAfter(int64_t start, int64_t count, int64_t stride) {
  return count == 0 ? start : start + (count - 1) * stride + 1;
}

Instruction* FullSlice(Instruction* i, RuleContext&) {
  return SameShape(i, i->operand(0)) ? i->operand(0) : nullptr;
}
// slice(slice(x)) = one slice with composed starts and strides.
Instruction* SliceSlice(Instruction* i, RuleContext& ctx) {
  Instruction* inner = i->operand(0);
  if (Attrs(inner) == nullptr || Attrs(i) == nullptr) return nullptr;
  const SliceAttrs& a = *Attrs(inner);
  const SliceAttrs& b = *Attrs(i);
  SliceAttrs c;
  for (size_t d = 0; d < a.starts.size(); ++d) {
    const int64_t stride = Stride(a, d) * Stride(b, d);
    c.starts.push_back(a.starts[d] + b.starts[d] * Stride(a, d));
    c.strides.push_back(stride);
    c.limits.push_back(LimitAfter(c.starts.back(), i->shape().dim(d), stride));
  }
  return NewSlice(inner->operand(0), i->shape(), std::move(c), ctx);
}
// slice(broadcast(x)) = broadcast(x, or the matching slice of x).
Instruction* SliceOfBroadcast(Instruction* i, RuleContext& ctx) {
  Instruction* broadcast = i->operand(0);
  if (broadcast->opcode() != Opcode::kBroadcast) return nullptr;
  Instruction* x = broadcast->operand(0);
  if (Attrs(i) == nullptr ||
      broadcast->dimensions().size() != static_cast<size_t>(x->shape().rank())) {
    return nullptr;
  }
  const SliceAttrs& a = *Attrs(i);
  SliceAttrs operand_slice;
  bool full = true;
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < x->shape().rank(); ++k) {
    const size_t d = static_cast<size_t>(broadcast->dimension(k));
    if (d >= a.starts.size()) return nullptr;
    operand_slice.starts.push_back(a.starts[d]);
    operand_slice.limits.push_back(a.limits[d]);
    operand_slice.strides.push_back(Stride(a, d));
    full &= i->shape().dim(d) == x->shape().dim(k);
    dims.push_back(i->shape().dim(d));
  }
  Instruction* source = x;
  if (!full) {
    Shape shape = Shape::Array(x->shape().element_type(), dims);
    source = NewSlice(x, shape, std::move(operand_slice), ctx);
  }
  Instruction* b = ctx.Add(Opcode::kBroadcast, i->shape(), {source});
  b->mutable_dimensions().assign(broadcast->dimensions().begin(), broadcast->dimensions().end());
  return b;
}
// A slice that stays within one operand of a concatenate slices that operand.
Instruction* SliceOfConcatenate(Instruction* i, RuleContext& ctx) {
  Instruction* concat = i->operand(0);
  const std::optional<int64_t> concat_dim = ConcatDimension(concat);
  if (!concat_dim || Attrs(i) == nullptr) return nullptr;
  const size_t dim = static_cast<size_t>(*concat_dim);
  const SliceAttrs& a = *Attrs(i);
  const int64_t count = i->shape().dim(dim);
  if (count == 0) return nullptr;
  const int64_t first = a.starts[dim];
  const int64_t last = first + (count - 1) * Stride(a, dim);
  int64_t offset = 0;
  for (Instruction* operand : concat->operands()) {
    const int64_t size = operand->shape().dim(dim);
    if (first >= offset && last < offset + size) {
      SliceAttrs b = a;
      b.starts[dim] -= offset;
      b.limits[dim] = LimitAfter(b.starts[dim], count, Stride(a, dim));
      if (b.strides.empty()) b.strides.assign(b.starts.size(), 1);
      return NewSlice(operand, i->shape(), std::move(b), ctx);
    }
    offset += size;
  }
  return nullptr;
}
// dynamic-slice at constant start indices is a slice (indices clamped).
Instruction* DynamicSliceConstant(Instruction* i, RuleContext& ctx) {
  const Instruction* operand = i->operand(0);
  const int64_t rank = operand->shape().rank();
  if (i->operand_count() != rank + 1 || rank == 0 || i->shape().rank() != rank) return nullptr;
  SliceAttrs slice;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> start = ScalarConstantInt(i->operand(d + 1));
    if (!start || !i->operand(d + 1)->shape().IsScalar()) return nullptr;
    const int64_t limit = operand->shape().dim(d) - i->shape().dim(d);
    // Unsigned indices above INT64_MAX read as negative: clamp them high.
    int64_t s = *start;
    if (s < 0 && IsUnsignedInteger(i->operand(d + 1)->shape().element_type())) s = limit;
    s = std::clamp<int64_t>(s, 0, limit);
    slice.starts.push_back(s);
    slice.limits.push_back(s + i->shape().dim(d));
    slice.strides.push_back(1);
  }
  return NewSlice(i->operand(0), i->shape(), std::move(slice), ctx);
}
// A dynamic-slice as large as its operand starts at 0: it is the operand.
Instruction* DynamicSliceFull(Instruction* i, RuleContext&) {
  return i->operand(0)->shape().Compatible(i->shape()) ? i->operand(0) : nullptr;
}
// A dynamic-update-slice whose update covers the operand is the update.
Instruction* DynamicUpdateSliceFull(Instruction* i, RuleContext&) {
  if (i->operand_count() < 2) return nullptr;
  return i->operand(1)->shape().Compatible(i->shape()) ? i->operand(1) : nullptr;
}
Instruction* SingleConcatenate(Instruction* i, RuleContext&) {
  return i->operand_count() == 1 ? i->operand(0) : nullptr;
}

// A concatenate of `operands` along the same dimension as `concat`.
Instruction* Reconcatenate(Instruction* concat, std::vector<Instruction*> operands,
                           RuleContext& ctx) {
  if (operands.size() == 1) return operands[0];
  Instruction* c = ctx.Add(Opcode::kConcatenate, concat->shape(), operands);
  c->mutable_dimensions().assign(concat->dimensions().begin(), concat->dimensions().end());
  return c;
}

// Drops operands that add nothing along the concatenated dimension.
Instruction* ConcatenateDropEmpty(Instruction* i, RuleContext& ctx) {
  const std::optional<int64_t> concat_dim = ConcatDimension(i);
  if (!concat_dim) return nullptr;
  const int64_t dim = *concat_dim;
  std::vector<Instruction*> kept;
  for (Instruction* operand : i->operands()) {
    if (operand->shape().dim(dim) != 0) kept.push_back(operand);
  }
  if (kept.empty() || kept.size() == static_cast<size_t>(i->operand_count())) return nullptr;
  return Reconcatenate(i, std::move(kept), ctx);
}
// concatenate(a, concatenate(b, c), d) along one dimension = concatenate(a, b, c, d).
Instruction* ConcatenateFlatten(Instruction* i, RuleContext& ctx) {
  if (!ConcatDimension(i)) return nullptr;
  std::vector<Instruction*> flat;
  bool changed = false;
  for (Instruction* operand : i->operands()) {
    if (operand->opcode() == Opcode::kConcatenate && operand->dimensions() == i->dimensions()) {
      flat.insert(flat.end(), operand->operands().begin(), operand->operands().end());
      changed = true;
    } else {
      flat.push_back(operand);
    }
  }
  return changed ? Reconcatenate(i, std::move(flat), ctx) : nullptr;
}

// Whether slices `a` then `b` of the same operand are adjacent along `dim`
// (unit stride there) and identical in every other dimension.
bool AdjacentSlices(const Instruction* a, const Instruction* b, size_t dim) {
  if (Attrs(a) == nullptr || Attrs(b) == nullptr || a->operand(0) != b->operand(0)) {
    return false;
  }
  const SliceAttrs& x = *Attrs(a);
  const SliceAttrs& y = *Attrs(b);
  for (size_t d = 0; d < x.starts.size(); ++d) {
    if (d == dim) {
      if (Stride(x, d) != 1 || Stride(y, d) != 1 || x.limits[d] != y.starts[d]) return false;
    } else if (x.starts[d] != y.starts[d] || x.limits[d] != y.limits[d] ||
               Stride(x, d) != Stride(y, d)) {
      return false;
    }
  }
  return true;
}

// concatenate(slice(x, [a:b]), slice(x, [b:c])) -> slice(x, [a:c]).
Instruction* ConcatenateAdjacentSlices(Instruction* i, RuleContext& ctx) {
  const std::optional<int64_t> concat_dim = ConcatDimension(i);
  if (!concat_dim) return nullptr;
  const size_t dim = static_cast<size_t>(*concat_dim);
  // Runs of adjacent slices, as [begin, end) operand ranges.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t k = 0; k < i->operand_count(); ++k) {
    if (!runs.empty() && runs.back().second == k &&
        AdjacentSlices(i->operand(k - 1), i->operand(k), dim)) {
      runs.back().second = k + 1;
    } else {
      runs.push_back({k, k + 1});
    }
  }
  if (runs.size() == static_cast<size_t>(i->operand_count())) return nullptr;
  std::vector<Instruction*> operands;
  for (auto [begin, end] : runs) {
    Instruction* first = i->operand(begin);
    if (end - begin == 1) {
      operands.push_back(first);
      continue;
    }
    const Instruction* last = i->operand(end - 1);
    SliceAttrs merged = first->attrs<SliceAttrs>();
    merged.limits[dim] = last->attrs<SliceAttrs>().limits[dim];
    if (merged.strides.empty()) merged.strides.assign(merged.starts.size(), 1);
    Shape shape = first->shape();
    shape.mutable_dims()[dim] = merged.limits[dim] - merged.starts[dim];
    if (end - begin == i->operand_count()) shape = i->shape();
    operands.push_back(NewSlice(first->operand(0), shape, std::move(merged), ctx));
  }
  return Reconcatenate(i, std::move(operands), ctx);
}

}  // namespace

const std::vector<AlgsimpRule>& SliceRules() {
  static const auto* rules = new std::vector<AlgsimpRule>{
      {"full-slice", Opcode::kSlice, FullSlice},
      {"slice-slice", Opcode::kSlice, SliceSlice},
      {"slice-of-broadcast", Opcode::kSlice, SliceOfBroadcast},
      {"slice-of-concatenate", Opcode::kSlice, SliceOfConcatenate},
      {"dynamic-slice-full", Opcode::kDynamicSlice, DynamicSliceFull},
      {"dynamic-slice-constant", Opcode::kDynamicSlice, DynamicSliceConstant},
      {"dynamic-update-slice-full", Opcode::kDynamicUpdateSlice, DynamicUpdateSliceFull},
      {"single-concatenate", Opcode::kConcatenate, SingleConcatenate},
      {"concatenate-drop-empty", Opcode::kConcatenate, ConcatenateDropEmpty},
      {"concatenate-flatten", Opcode::kConcatenate, ConcatenateFlatten},
      {"concatenate-adjacent-slices", Opcode::kConcatenate, ConcatenateAdjacentSlices},
  };
  return *rules;
}

}  // namespace hlogym

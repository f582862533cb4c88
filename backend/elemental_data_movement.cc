// Index arithmetic of the elemental emitter: each data-movement op maps an
// output index to operand indices. Conditional reads (pad, concatenate,
// dynamic-update-slice) clamp every candidate index into its operand and
// select, so the code stays branch-free and every read is in bounds.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "core/base/status_macros.h"

namespace hlogym {

llvm::Value* ElementalEmitter::IndexConst(int64_t v) { return b_->getInt64(v); }

std::optional<std::pair<int64_t, int64_t>> ElementalEmitter::IndexRange(llvm::Value* v) const {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
    return std::make_pair(c->getSExtValue(), c->getSExtValue());
  }
  auto it = index_ranges_.find(v);
  if (it == index_ranges_.end()) return std::nullopt;
  return it->second;
}

llvm::Value* ElementalEmitter::IndexAdd(llvm::Value* v, int64_t c) {
  if (c == 0) return v;
  llvm::Value* r = b_->CreateAdd(v, IndexConst(c), "", /*HasNUW=*/false, /*HasNSW=*/true);
  if (auto range = IndexRange(v)) SetIndexRange(r, range->first + c, range->second + c);
  return r;
}

llvm::Value* ElementalEmitter::IndexMul(llvm::Value* v, int64_t c) {
  if (c == 1) return v;
  llvm::Value* r = b_->CreateMul(v, IndexConst(c), "", /*HasNUW=*/false, /*HasNSW=*/true);
  if (auto range = IndexRange(v); range && c > 0) {
    SetIndexRange(r, range->first * c, range->second * c);
  }
  return r;
}

llvm::Value* ElementalEmitter::IndexSubFrom(int64_t c, llvm::Value* v) {
  llvm::Value* r = b_->CreateSub(IndexConst(c), v, "", /*HasNUW=*/false, /*HasNSW=*/true);
  if (auto range = IndexRange(v)) SetIndexRange(r, c - range->second, c - range->first);
  return r;
}

llvm::Value* ElementalEmitter::Clamp(llvm::Value* v, int64_t lo, int64_t hi) {
  // A clamp that cannot bind keeps the index affine (so loads stay
  // consecutive for the vectorizer).
  const auto range = IndexRange(v);
  if (range && range->first >= lo && range->second <= hi) return v;
  v = b_->CreateSelect(b_->CreateICmpSLT(v, IndexConst(lo)), IndexConst(lo), v);
  v = b_->CreateSelect(b_->CreateICmpSGT(v, IndexConst(hi)), IndexConst(hi), v);
  if (range && lo <= hi) {
    SetIndexRange(v, std::clamp(range->first, lo, hi), std::clamp(range->second, lo, hi));
  }
  return v;
}

llvm::Value* ElementalEmitter::Linearize(absl::Span<const int64_t> dims, const IrIndex& index) {
  llvm::Value* linear = IndexConst(0);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    linear = b_->CreateAdd(b_->CreateMul(linear, IndexConst(dims[i]), "", true, true), index[i],
                           "", true, true);
  }
  return linear;
}

IrIndex ElementalEmitter::Delinearize(absl::Span<const int64_t> dims, llvm::Value* linear) {
  IrIndex index(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 1) {
      index[i] = IndexConst(0);
      continue;
    }
    index[i] = i == 0 ? linear : b_->CreateURem(linear, IndexConst(dims[i]));
    if (i > 0) linear = b_->CreateUDiv(linear, IndexConst(dims[i]));
  }
  return index;
}

absl::StatusOr<llvm::Value*> ElementalEmitter::StartIndex(const Instruction& user,
                                                          int64_t operand) {
  ASSIGN_OR_RETURN(llvm::Value * v, Operand(user, operand, {}));
  const PrimitiveType t = user.operand(operand)->shape().element_type();
  if (!IsInteger(t)) {
    return absl::UnimplementedError(absl::StrCat("not supported: ", user.name(),
                                                 " with a non-integer start index"));
  }
  return b_->CreateIntCast(v, b_->getInt64Ty(), IsSignedInteger(t));
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitGather(const Instruction& gather,
                                                          const IrIndex& index) {
  // XLA's gather: the output's batch dimensions pick an index vector, whose
  // entries (clamped so the slice fits) start the slice; the offset
  // dimensions walk the slice's uncollapsed dimensions.
  const GatherAttrs& a = gather.attrs<GatherAttrs>();
  const GatherDimensions& g = a.dims;
  const Shape& operand = gather.operand(0)->shape();
  const Shape& indices = gather.operand(1)->shape();
  const PrimitiveType index_type = indices.element_type();
  if (!IsInteger(index_type)) {
    return absl::UnimplementedError(
        absl::StrCat("not supported: gather (", gather.name(), ") with non-integer indices"));
  }
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  IrIndex batch;
  for (int64_t d = 0; d < gather.shape().rank(); ++d) {
    if (!contains(g.offset_dims, d)) batch.push_back(index[d]);
  }
  std::vector<int64_t> index_batch_dims;  // the indices' dimensions other than the vector's
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != g.index_vector_dim) index_batch_dims.push_back(d);
  }
  const int64_t r = operand.rank();
  std::vector<llvm::Value*> start(r, IndexConst(0));
  for (size_t k = 0; k < g.start_index_map.size(); ++k) {
    IrIndex at(indices.rank());
    for (size_t j = 0; j < index_batch_dims.size(); ++j) at[index_batch_dims[j]] = batch.at(j);
    if (g.index_vector_dim < indices.rank()) at[g.index_vector_dim] = IndexConst(k);
    ASSIGN_OR_RETURN(llvm::Value * v, Operand(gather, 1, at));
    start[g.start_index_map[k]] =
        b_->CreateIntCast(v, b_->getInt64Ty(), IsSignedInteger(index_type));
  }
  for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
    const auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(),
                              g.start_indices_batching_dims[k]);
    const size_t j = it - index_batch_dims.begin();
    start[g.operand_batching_dims[k]] = j < batch.size() ? batch[j] : IndexConst(0);
  }
  IrIndex at(r);
  size_t window = 0;
  for (int64_t d = 0; d < r; ++d) {
    llvm::Value* s = Clamp(start[d], 0, operand.dim(d) - a.slice_sizes[d]);
    if (!contains(g.collapsed_slice_dims, d) && !contains(g.operand_batching_dims, d)) {
      s = b_->CreateAdd(s, index[g.offset_dims.at(window++)]);
    }
    at[d] = s;
  }
  return Operand(gather, 0, at);
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitDataMovement(
    const Instruction& instruction, const IrIndex& index) {
  const Shape& shape = instruction.shape();
  const int64_t rank = shape.rank();
  auto one = [](llvm::Value* v) { return std::vector<llvm::Value*>{v}; };
  auto operand_at = [&](int64_t i, const IrIndex& at) -> absl::StatusOr<std::vector<llvm::Value*>> {
    ASSIGN_OR_RETURN(llvm::Value * v, Operand(instruction, i, at));
    return one(v);
  };
  switch (instruction.opcode()) {
    case Opcode::kBroadcast: {
      IrIndex at;
      for (int64_t d : instruction.dimensions()) at.push_back(index[d]);
      return operand_at(0, at);
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      const Shape& in = instruction.operand(0)->shape();
      if (in.dims() == shape.dims()) return operand_at(0, index);
      // Dropping or adding size-1 dimensions keeps the other indices.
      std::vector<int64_t> in_big, out_big;
      for (int64_t d = 0; d < in.rank(); ++d) if (in.dim(d) != 1) in_big.push_back(d);
      for (int64_t d = 0; d < rank; ++d) if (shape.dim(d) != 1) out_big.push_back(d);
      bool same = in_big.size() == out_big.size();
      for (size_t k = 0; same && k < in_big.size(); ++k) {
        same = in.dim(in_big[k]) == shape.dim(out_big[k]);
      }
      if (same) {
        IrIndex at(in.rank(), IndexConst(0));
        for (size_t k = 0; k < in_big.size(); ++k) at[in_big[k]] = index[out_big[k]];
        return operand_at(0, at);
      }
      return operand_at(0, Delinearize(in.dims(), Linearize(shape.dims(), index)));
    }
    case Opcode::kTranspose: {
      IrIndex at(rank);
      for (int64_t i = 0; i < rank; ++i) at[instruction.dimension(i)] = index[i];
      return operand_at(0, at);
    }
    case Opcode::kReverse: {
      IrIndex at = index;
      for (int64_t d : instruction.dimensions()) at[d] = IndexSubFrom(shape.dim(d) - 1, index[d]);
      return operand_at(0, at);
    }
    case Opcode::kSlice: {
      const SliceAttrs& s = instruction.attrs<SliceAttrs>();
      IrIndex at(rank);
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t stride = s.strides.empty() ? 1 : s.strides[i];
        at[i] = IndexAdd(IndexMul(index[i], stride), s.starts[i]);
      }
      return operand_at(0, at);
    }
    case Opcode::kIota: {
      const PrimitiveType t = shape.element_type();
      llvm::Value* i = index[instruction.iota_dimension()];
      if (IsFloat(t)) return one(EmitConvert(PrimitiveType::kS64, t, i));
      if (t == PrimitiveType::kPred) return one(b_->CreateICmpNE(i, IndexConst(0)));
      return one(b_->CreateTrunc(i, ValueType(t)));
    }
    case Opcode::kPad: {
      const Shape& in = instruction.operand(0)->shape();
      const PadAttrs& p = instruction.attrs<PadAttrs>();
      llvm::Value* valid = b_->getTrue();
      IrIndex at(rank);
      for (int64_t i = 0; i < rank; ++i) {
        const int64_t step = p.padding[i].interior + 1;
        llvm::Value* t = IndexAdd(index[i], -p.padding[i].low);
        const int64_t last = (in.dim(i) - 1) * step;
        // Where the index range lies wholly in the padding or (without
        // interior padding) wholly inside, the test is known.
        if (const auto range = IndexRange(t)) {
          if (range->second < 0 || range->first > last) return operand_at(1, {});
          if (step == 1 && range->first >= 0 && range->second <= last) {
            at[i] = t;
            continue;
          }
        }
        valid = b_->CreateAnd(valid, b_->CreateICmpSGE(t, IndexConst(0)));
        valid = b_->CreateAnd(valid, b_->CreateICmpSLE(t, IndexConst(last)));
        llvm::Value* c = Clamp(t, 0, std::max<int64_t>(last, 0));
        if (step > 1) {
          valid = b_->CreateAnd(valid, b_->CreateICmpEQ(b_->CreateURem(c, IndexConst(step)),
                                                        IndexConst(0)));
          c = b_->CreateUDiv(c, IndexConst(step));
        }
        at[i] = c;
      }
      if (in.element_count() == 0) return operand_at(1, {});
      ASSIGN_OR_RETURN(llvm::Value * inside, Operand(instruction, 0, at));
      if (valid == b_->getTrue()) return one(inside);
      ASSIGN_OR_RETURN(llvm::Value * padding, Operand(instruction, 1, {}));
      return one(b_->CreateSelect(valid, inside, padding));
    }
    case Opcode::kConcatenate: {
      const int64_t d = instruction.dimension(0);
      // Only the operands the index's range reaches (one, within a loop
      // segment between the operands' boundaries).
      const auto range = IndexRange(index[d]);
      llvm::Value* result = nullptr;
      int64_t offset = 0;
      for (int64_t k = 0; k < instruction.operand_count(); ++k) {
        const int64_t size = instruction.operand(k)->shape().dim(d);
        if (size == 0) continue;
        if (range && (range->second < offset || range->first >= offset + size)) {
          offset += size;
          continue;
        }
        IrIndex at = index;
        at[d] = Clamp(IndexAdd(index[d], -offset), 0, size - 1);
        ASSIGN_OR_RETURN(llvm::Value * v, Operand(instruction, k, at));
        result = result == nullptr
                     ? v
                     : b_->CreateSelect(b_->CreateICmpSGE(index[d], IndexConst(offset)), v, result);
        offset += size;
      }
      if (result == nullptr) {
        return absl::UnimplementedError(absl::StrCat("not supported: concatenate (",
                                                     instruction.name(), ") of empty operands"));
      }
      return one(result);
    }
    case Opcode::kDynamicSlice: {
      const Shape& in = instruction.operand(0)->shape();
      IrIndex at(rank);
      for (int64_t i = 0; i < rank; ++i) {
        ASSIGN_OR_RETURN(llvm::Value * start, StartIndex(instruction, i + 1));
        start = Clamp(start, 0, in.dim(i) - shape.dim(i));
        at[i] = b_->CreateAdd(start, index[i]);
      }
      return operand_at(0, at);
    }
    case Opcode::kDynamicUpdateSlice: {
      const Shape& update = instruction.operand(1)->shape();
      llvm::Value* inside = b_->getTrue();
      IrIndex at(rank);
      for (int64_t i = 0; i < rank; ++i) {
        ASSIGN_OR_RETURN(llvm::Value * start, StartIndex(instruction, i + 2));
        start = Clamp(start, 0, shape.dim(i) - update.dim(i));
        llvm::Value* t = b_->CreateSub(index[i], start);
        inside = b_->CreateAnd(inside, b_->CreateICmpSGE(t, IndexConst(0)));
        inside = b_->CreateAnd(inside, b_->CreateICmpSLT(t, IndexConst(update.dim(i))));
        at[i] = Clamp(t, 0, std::max<int64_t>(update.dim(i) - 1, 0));
      }
      ASSIGN_OR_RETURN(llvm::Value * base, Operand(instruction, 0, index));
      if (update.element_count() == 0) return one(base);
      ASSIGN_OR_RETURN(llvm::Value * v, Operand(instruction, 1, at));
      return one(b_->CreateSelect(inside, v, base));
    }
    case Opcode::kGather: {
      ASSIGN_OR_RETURN(llvm::Value * v, EmitGather(instruction, index));
      return one(v);
    }
    default:
      return absl::UnimplementedError(absl::StrCat("not supported: ",
                                                   std::string(OpcodeName(instruction.opcode())),
                                                   " (", instruction.name(), ")"));
  }
}

}  // namespace hlogym

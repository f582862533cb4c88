// reduce inside a fused computation: each output element loops over its
// reduced dimensions in row-major order and applies the reducer, emitted on
// scalars. A float add reducer accumulates in double and rounds once, as the
// reference interpreter does, so sums match it bit for bit (with partial
// accumulators, to the last bit of the double sum: the float result differs
// only when that sum lies next to a rounding boundary).
#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "backend/index_breakpoints.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

bool IsFloatAdd(const Computation& reducer) {
  const Instruction* root = reducer.root();
  return reducer.parameter_count() == 2 && root->opcode() == Opcode::kAdd &&
         IsFloat(root->shape().element_type()) &&
         root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1);
}

// The identity of an associative, commutative reducer `op` on values of
// `type` (float max/min; integer add/mul/and/or/xor/max/min; pred and/or), or
// nullptr when the reducer is not one of those. (Float sums take another way:
// see EmitPartialReduce.)
llvm::Constant* ReducerIdentity(Opcode op, PrimitiveType type, llvm::Type* value_type,
                                llvm::LLVMContext& ctx) {
  if (IsFloat(type)) {
    switch (op) {
      case Opcode::kMaximum: return llvm::ConstantFP::getInfinity(value_type, /*Negative=*/true);
      case Opcode::kMinimum: return llvm::ConstantFP::getInfinity(value_type, /*Negative=*/false);
      default: return nullptr;
    }
  }
  if (type == PrimitiveType::kPred) {
    if (op == Opcode::kAnd) return llvm::ConstantInt::getTrue(ctx);
    if (op == Opcode::kOr) return llvm::ConstantInt::getFalse(ctx);
    return nullptr;
  }
  if (!IsInteger(type)) return nullptr;
  const unsigned bits = value_type->getIntegerBitWidth();
  const bool is_signed = IsSignedInteger(type);
  switch (op) {
    case Opcode::kAdd: case Opcode::kOr: case Opcode::kXor:
      return llvm::ConstantInt::get(value_type, 0);
    case Opcode::kMultiply: return llvm::ConstantInt::get(value_type, 1);
    case Opcode::kAnd: return llvm::ConstantInt::get(ctx, llvm::APInt::getAllOnes(bits));
    case Opcode::kMaximum:
      return llvm::ConstantInt::get(
          ctx, is_signed ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getMinValue(bits));
    case Opcode::kMinimum:
      return llvm::ConstantInt::get(
          ctx, is_signed ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
    default: return nullptr;
  }
}

// Where the innermost reduced dimension's loop splits (see
// backend/index_breakpoints.h): the union over the reduced operands.
std::vector<int64_t> ReduceBreakpoints(const Instruction& reduce, int64_t last_dim) {
  std::set<int64_t> all;
  for (int64_t k = 0; k < reduce.operand_count() / 2; ++k) {
    for (int64_t p : IndexBreakpoints(*reduce.operand(k), last_dim)) all.insert(p);
  }
  if (static_cast<int64_t>(all.size()) >= kMaxLoopSegments) return {};
  return std::vector<int64_t>(all.begin(), all.end());
}

// The reduced operands' index for output `index`: the output's values at
// the kept dimensions and null at the reduced ones, which `reduced_dims`
// lists in increasing order for the reduction loops to fill in.
struct ReduceOperandIndex {
  IrIndex index;
  std::vector<int64_t> reduced_dims;
};

ReduceOperandIndex SplitReduceIndex(const Instruction& reduce, const IrIndex& index) {
  const Shape& in = reduce.operand(0)->shape();
  ReduceOperandIndex out{IrIndex(in.rank(), nullptr), {}};
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : reduce.dimensions()) reduced[d] = true;
  int64_t next_kept = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (reduced[d]) {
      out.reduced_dims.push_back(d);
    } else {
      out.index[d] = index.at(next_kept++);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::optional<std::vector<llvm::Value*>>> ElementalEmitter::EmitHoistedReduce(
    const Instruction& instruction, const IrIndex& index) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  // Blocks are appended as they are created, so a value whose block comes
  // before a loop's header is defined before that loop.
  auto defined_before = [&](const llvm::BasicBlock* header) {
    for (llvm::Value* v : index) {
      const auto* inst = llvm::dyn_cast<llvm::Instruction>(v);
      if (inst == nullptr) continue;
      bool before = false;
      for (const llvm::BasicBlock& block : *function) {
        if (&block == inst->getParent()) {
          before = true;
          break;
        }
        if (&block == header) break;
      }
      if (!before) return false;
    }
    return true;
  };
  size_t target = cache_.size();
  for (size_t s = cache_.size(); s-- > 1;) {
    if (cache_[s].header == nullptr || cache_[s].isolated || !defined_before(cache_[s].header)) {
      break;
    }
    target = s;
  }
  if (target == cache_.size()) return std::nullopt;

  // Emit at the end of the target loop's preheader, with only the cache
  // scopes visible there, then branch on into the loop.
  llvm::BasicBlock* preheader = cache_[target].preheader;
  llvm::BasicBlock* header = cache_[target].header;
  preheader->getTerminator()->eraseFromParent();
  const llvm::IRBuilderBase::InsertPoint saved = b_->saveIP();
  b_->SetInsertPoint(preheader);
  std::vector<CacheScope> inner(std::make_move_iterator(cache_.begin() + target),
                                std::make_move_iterator(cache_.end()));
  cache_.erase(cache_.begin() + target, cache_.end());
  absl::StatusOr<std::vector<llvm::Value*>> values = EmitUncached(instruction, index);
  llvm::BasicBlock* last = b_->GetInsertBlock();
  b_->CreateBr(header);
  if (last != preheader) header->replacePhiUsesWith(preheader, last);
  if (values.ok()) cache_.back().values.emplace(CacheKey{&instruction, index}, *values);
  for (CacheScope& scope : inner) cache_.push_back(std::move(scope));
  cache_[target].preheader = last;
  b_->restoreIP(saved);
  if (!values.ok()) return values.status();
  return std::optional<std::vector<llvm::Value*>>(*std::move(values));
}

absl::StatusOr<std::optional<std::vector<llvm::Value*>>> ElementalEmitter::EmitPartialReduce(
    const Instruction& reduce, const IrIndex& index) {
  const int64_t partials = ReductionPartials();
  if (partials < 2 || reduce.operand_count() != 2 || reduce.dimensions().empty()) {
    return std::nullopt;
  }
  const Computation& reducer = *reduce.to_apply();
  const Instruction* root = reducer.root();
  if (reducer.parameter_count() != 2 || root->shape().IsTuple() || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  const PrimitiveType type = root->shape().element_type();
  const Shape& in = reduce.operand(0)->shape();
  if (in.element_type() != type || reduce.operand(1)->shape().element_type() != type) {
    return std::nullopt;
  }
  std::vector<int64_t> reduced_dims(reduce.dimensions().begin(), reduce.dimensions().end());
  std::sort(reduced_dims.begin(), reduced_dims.end());
  const int64_t last_dim = reduced_dims.back();
  if (in.dim(last_dim) < 2 * partials) return std::nullopt;
  // A float sum is left to the loop vectorizer (EmitReduce marks its add
  // reassociable): it vectorizes the fused producers too, which replicated
  // scalar partials would not.
  if (IsFloat(type) && root->opcode() == Opcode::kAdd) return std::nullopt;
  llvm::Constant* identity =
      ReducerIdentity(root->opcode(), type, ValueType(type), b_->getContext());
  if (identity == nullptr) return std::nullopt;

  IrIndex in_index(in.rank(), nullptr);
  int64_t next_kept = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!std::binary_search(reduced_dims.begin(), reduced_dims.end(), d)) {
      in_index[d] = index.at(next_kept++);
    }
  }
  if (IsFloat(type)) {
    // Float max/min (identity != nullptr: the reducer is one of them) as
    // reductions the loop vectorizer knows: a max that may ignore NaNs and
    // the sign of zero, plus two "seen" flags that put both back (a NaN wins;
    // max of +-0 is +0 if any +0 was seen, min of +-0 is -0 if any -0 was).
    // The result equals the in-order fold bit for bit.
    const bool max = root->opcode() == Opcode::kMaximum;
    llvm::Type* value_type = ValueType(type);
    llvm::Type* bits_type = b_->getIntNTy(value_type->getPrimitiveSizeInBits());
    llvm::Value* m_slot = EntryAlloca(value_type, absl::StrCat(reduce.name(), ".m"));
    llvm::Value* nan_slot = EntryAlloca(b_->getInt1Ty(), absl::StrCat(reduce.name(), ".nan"));
    llvm::Value* zero_slot = EntryAlloca(b_->getInt1Ty(), absl::StrCat(reduce.name(), ".zero"));
    b_->CreateStore(identity, m_slot);
    b_->CreateStore(b_->getFalse(), nan_slot);
    b_->CreateStore(b_->getFalse(), zero_slot);
    llvm::FastMathFlags fast;
    fast.setNoNaNs();
    fast.setNoSignedZeros();
    // The zero whose presence decides a +-0 result: +0 for max, -0 for min.
    llvm::Value* wanted_zero = llvm::ConstantInt::get(
        bits_type, max ? llvm::APInt::getZero(bits_type->getIntegerBitWidth())
                       : llvm::APInt::getSignMask(bits_type->getIntegerBitWidth()));
    RETURN_IF_ERROR(EmitLoopsOver(in, reduced_dims, absl::StrCat(reduce.name(), ".r"), in_index,
                                  ReduceBreakpoints(reduce, last_dim), [&]() -> absl::Status {
      ASSIGN_OR_RETURN(llvm::Value * v, Operand(reduce, 0, in_index));
      llvm::Value* m = b_->CreateLoad(value_type, m_slot);
      llvm::Value* wins = max ? b_->CreateFCmpOGT(v, m) : b_->CreateFCmpOLT(v, m);
      llvm::cast<llvm::Instruction>(wins)->setFastMathFlags(fast);
      llvm::Value* next = b_->CreateSelect(wins, v, m);
      llvm::cast<llvm::Instruction>(next)->setFastMathFlags(fast);
      b_->CreateStore(next, m_slot);
      b_->CreateStore(b_->CreateOr(b_->CreateLoad(b_->getInt1Ty(), nan_slot),
                                   b_->CreateFCmpUNO(v, v)),
                      nan_slot);
      b_->CreateStore(
          b_->CreateOr(b_->CreateLoad(b_->getInt1Ty(), zero_slot),
                       b_->CreateICmpEQ(b_->CreateBitCast(v, bits_type), wanted_zero)),
          zero_slot);
      return absl::OkStatus();
    }));
    llvm::Value* m = b_->CreateLoad(value_type, m_slot);
    llvm::Value* zero = llvm::ConstantFP::get(value_type, 0.0);
    llvm::Value* signed_zero = b_->CreateSelect(
        b_->CreateLoad(b_->getInt1Ty(), zero_slot), b_->CreateBitCast(wanted_zero, value_type),
        b_->CreateFNeg(b_->CreateBitCast(wanted_zero, value_type)));
    m = b_->CreateSelect(b_->CreateFCmpOEQ(m, zero), signed_zero, m);
    m = b_->CreateSelect(b_->CreateLoad(b_->getInt1Ty(), nan_slot),
                         llvm::ConstantFP::getNaN(value_type), m);
    ASSIGN_OR_RETURN(llvm::Value * init, Operand(reduce, 1, {}));
    ASSIGN_OR_RETURN(std::vector<llvm::Value*> r, EmitScalarComputation(reducer, {init, m}));
    return std::optional<std::vector<llvm::Value*>>(std::vector<llvm::Value*>{r.at(0)});
  }
  std::vector<llvm::Value*> slots;
  for (int64_t k = 0; k < partials; ++k) {
    slots.push_back(EntryAlloca(identity->getType(), absl::StrCat(reduce.name(), ".part", k)));
    b_->CreateStore(identity, slots.back());
  }
  auto fold_at = [&](int64_t k, llvm::Value* position) -> absl::Status {
    in_index[last_dim] = position;
    ASSIGN_OR_RETURN(llvm::Value * v, Operand(reduce, 0, in_index));
    ASSIGN_OR_RETURN(std::vector<llvm::Value*> next,
                     EmitScalarComputation(
                         reducer, {b_->CreateLoad(identity->getType(), slots[k]), v}));
    b_->CreateStore(next.at(0), slots[k]);
    return absl::OkStatus();
  };
  const int64_t size = in.dim(last_dim);
  const int64_t main = size / partials * partials;
  // Partial k folds positions k, k + partials, ... of the innermost reduced
  // dimension; the tail goes to partial 0.
  RETURN_IF_ERROR(EmitLoopsOver(
      in, absl::MakeConstSpan(reduced_dims).first(reduced_dims.size() - 1),
      absl::StrCat(reduce.name(), ".r"), in_index, [&]() -> absl::Status {
        RETURN_IF_ERROR(EmitLoop(
            IndexConst(main / partials), absl::StrCat(reduce.name(), ".q"),
            [&](llvm::Value* q) -> absl::Status {
              llvm::Value* start = b_->CreateMul(q, IndexConst(partials), "", true, true);
              for (int64_t k = 0; k < partials; ++k) {
                RETURN_IF_ERROR(fold_at(k, b_->CreateAdd(start, IndexConst(k), "", true, true)));
              }
              return absl::OkStatus();
            }));
        if (main == size) return absl::OkStatus();
        return EmitLoop(IndexConst(size - main), absl::StrCat(reduce.name(), ".tail"),
                        [&](llvm::Value* t) -> absl::Status {
                          return fold_at(0, b_->CreateAdd(t, IndexConst(main), "", true, true));
                        });
      }));
  std::vector<llvm::Value*> parts;
  for (llvm::Value* slot : slots) parts.push_back(b_->CreateLoad(identity->getType(), slot));
  while (parts.size() > 1) {
    std::vector<llvm::Value*> halves;
    for (size_t i = 0; i + 1 < parts.size(); i += 2) {
      ASSIGN_OR_RETURN(std::vector<llvm::Value*> r,
                       EmitScalarComputation(reducer, {parts[i], parts[i + 1]}));
      halves.push_back(r.at(0));
    }
    if (parts.size() % 2 == 1) halves.push_back(parts.back());
    parts = std::move(halves);
  }
  ASSIGN_OR_RETURN(llvm::Value * init, Operand(reduce, 1, {}));
  ASSIGN_OR_RETURN(std::vector<llvm::Value*> r, EmitScalarComputation(reducer, {init, parts[0]}));
  return std::optional<std::vector<llvm::Value*>>(std::vector<llvm::Value*>{r.at(0)});
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitReduce(const Instruction& reduce,
                                                                       const IrIndex& index) {
  ASSIGN_OR_RETURN(std::optional<std::vector<llvm::Value*>> partial,
                   EmitPartialReduce(reduce, index));
  if (partial) return *std::move(partial);
  const int64_t n = reduce.operand_count() / 2;
  const Shape& in = reduce.operand(0)->shape();
  auto [in_index, reduced_dims] = SplitReduceIndex(reduce, index);
  const Computation& reducer = *reduce.to_apply();
  const bool float_add = n == 1 && IsFloatAdd(reducer);
  const PrimitiveType out_type = reducer.root()->shape().IsTuple()
                                     ? PrimitiveType::kTuple
                                     : reducer.root()->shape().element_type();

  // Accumulators live in entry-block allocas (mem2reg turns them into phis).
  std::vector<llvm::Value*> accumulators;
  std::vector<llvm::Type*> types;
  for (int64_t k = 0; k < n; ++k) {
    ASSIGN_OR_RETURN(llvm::Value * init, Operand(reduce, n + k, {}));
    if (float_add) init = b_->CreateFPCast(init, b_->getDoubleTy());
    llvm::Value* slot = EntryAlloca(init->getType(), absl::StrCat(reduce.name(), ".acc", k));
    b_->CreateStore(init, slot);
    accumulators.push_back(slot);
    types.push_back(init->getType());
  }

  // One loop per reduced dimension, outermost first (row-major order; the
  // innermost split in segments keeps that order).
  const std::vector<int64_t> breakpoints =
      reduced_dims.empty() ? std::vector<int64_t>{} : ReduceBreakpoints(reduce, reduced_dims.back());
  RETURN_IF_ERROR(EmitLoopsOver(in, reduced_dims, absl::StrCat(reduce.name(), ".r"), in_index,
                                breakpoints, [&]() -> absl::Status {
      std::vector<llvm::Value*> args;
      for (int64_t k = 0; k < n; ++k) args.push_back(b_->CreateLoad(types[k], accumulators[k]));
      for (int64_t k = 0; k < n; ++k) {
        ASSIGN_OR_RETURN(llvm::Value * v, Operand(reduce, k, in_index));
        args.push_back(v);
      }
      std::vector<llvm::Value*> next;
      if (float_add) {
        llvm::Value* sum =
            b_->CreateFAdd(args[0], b_->CreateFPCast(args[1], b_->getDoubleTy()));
        if (ReductionPartials() > 1) {
          // The vectorizer may then keep partial sums (in double).
          llvm::FastMathFlags flags;
          flags.setAllowReassoc();
          llvm::cast<llvm::Instruction>(sum)->setFastMathFlags(flags);
        }
        next.push_back(sum);
      } else {
        ASSIGN_OR_RETURN(next, EmitScalarComputation(reducer, args));
      }
      for (int64_t k = 0; k < n; ++k) b_->CreateStore(next.at(k), accumulators[k]);
    return absl::OkStatus();
  }));
  std::vector<llvm::Value*> results;
  for (int64_t k = 0; k < n; ++k) {
    llvm::Value* v = b_->CreateLoad(types[k], accumulators[k]);
    if (float_add && out_type == PrimitiveType::kF32) {
      v = b_->CreateFPTrunc(v, b_->getFloatTy());
    } else if (float_add && out_type != PrimitiveType::kF64) {
      v = RoundToType(out_type, DoubleToFloatRoundToOdd(v));
    }
    results.push_back(v);
  }
  return results;
}

absl::Status ElementalEmitter::EmitSiblingSums(absl::Span<const Instruction* const> reduces,
                                               const IrIndex& index) {
  std::vector<const Instruction*> sums;
  for (const Instruction* r : reduces) {
    if (r->opcode() != Opcode::kReduce || r->operand_count() != 2 || r->shape().IsTuple() ||
        !IsFloatAdd(*r->to_apply()) ||
        r->shape().element_type() != r->to_apply()->root()->shape().element_type()) {
      continue;
    }
    if (!sums.empty() && (r->operand(0)->shape().dims() != sums[0]->operand(0)->shape().dims() ||
                          r->dimensions() != sums[0]->dimensions())) {
      continue;
    }
    bool cached = false;
    for (const CacheScope& scope : cache_) cached |= scope.values.count(CacheKey{r, index}) > 0;
    if (!cached) sums.push_back(r);
  }
  if (sums.size() < 2) return absl::OkStatus();
  const Shape& in = sums[0]->operand(0)->shape();
  auto [in_index, reduced_dims] = SplitReduceIndex(*sums[0], index);
  std::vector<llvm::Value*> accumulators;
  std::set<int64_t> all_breakpoints;
  for (const Instruction* r : sums) {
    ASSIGN_OR_RETURN(llvm::Value * init, Operand(*r, 1, {}));
    llvm::Value* slot = EntryAlloca(b_->getDoubleTy(), absl::StrCat(r->name(), ".acc"));
    b_->CreateStore(b_->CreateFPCast(init, b_->getDoubleTy()), slot);
    accumulators.push_back(slot);
    if (!reduced_dims.empty()) {
      for (int64_t p : IndexBreakpoints(*r->operand(0), reduced_dims.back())) {
        all_breakpoints.insert(p);
      }
    }
  }
  std::vector<int64_t> breakpoints;
  if (static_cast<int64_t>(all_breakpoints.size()) < kMaxLoopSegments) {
    breakpoints.assign(all_breakpoints.begin(), all_breakpoints.end());
  }
  // Each sum folds in the order EmitReduce's loop does.
  RETURN_IF_ERROR(EmitLoopsOver(in, reduced_dims, absl::StrCat(sums[0]->name(), ".r"), in_index,
                                breakpoints, [&]() -> absl::Status {
    for (size_t k = 0; k < sums.size(); ++k) {
      ASSIGN_OR_RETURN(llvm::Value * v, Operand(*sums[k], 0, in_index));
      llvm::Value* sum = b_->CreateFAdd(b_->CreateLoad(b_->getDoubleTy(), accumulators[k]),
                                        b_->CreateFPCast(v, b_->getDoubleTy()));
      if (ReductionPartials() > 1) {
        llvm::FastMathFlags flags;
        flags.setAllowReassoc();
        llvm::cast<llvm::Instruction>(sum)->setFastMathFlags(flags);
      }
      b_->CreateStore(sum, accumulators[k]);
    }
    return absl::OkStatus();
  }));
  for (size_t k = 0; k < sums.size(); ++k) {
    const PrimitiveType type = sums[k]->shape().element_type();
    llvm::Value* v = b_->CreateLoad(b_->getDoubleTy(), accumulators[k]);
    if (type == PrimitiveType::kF32) {
      v = b_->CreateFPTrunc(v, b_->getFloatTy());
    } else if (type != PrimitiveType::kF64) {
      v = RoundToType(type, DoubleToFloatRoundToOdd(v));
    }
    cache_.back().values.emplace(CacheKey{sums[k], index}, std::vector<llvm::Value*>{v});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitReduceWindow(
    const Instruction& reduce_window, const IrIndex& index) {
  // Each output element folds its window in row-major order, skipping
  // positions in the padding or between base-dilated elements (as the
  // interpreter does). Out-of-window reads are clamped and their result
  // discarded, so the loop body has no branches.
  const int64_t n = reduce_window.operand_count() / 2;
  const Shape& in = reduce_window.operand(0)->shape();
  const Window& window = reduce_window.attrs<WindowAttrs>().window;
  if (static_cast<int64_t>(window.size()) != in.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat(reduce_window.name(), ": window rank differs from the operand's"));
  }
  std::vector<llvm::Value*> accumulators;
  std::vector<llvm::Type*> types;
  for (int64_t k = 0; k < n; ++k) {
    ASSIGN_OR_RETURN(llvm::Value * init, Operand(reduce_window, n + k, {}));
    llvm::Value* slot = EntryAlloca(init->getType(), absl::StrCat(reduce_window.name(), ".acc", k));
    b_->CreateStore(init, slot);
    accumulators.push_back(slot);
    types.push_back(init->getType());
  }
  IrIndex position(in.rank(), nullptr);
  std::function<absl::Status(size_t)> nest = [&](size_t level) -> absl::Status {
    if (level == window.size()) {
      llvm::Value* inside = b_->getTrue();
      IrIndex at(in.rank());
      for (size_t d = 0; d < window.size(); ++d) {
        const WindowDimension& wd = window[d];
        llvm::Value* pos = b_->CreateSub(
            b_->CreateAdd(b_->CreateMul(index[d], IndexConst(wd.stride)),
                          b_->CreateMul(position[d], IndexConst(wd.rhs_dilation))),
            IndexConst(wd.padding_low));
        const int64_t last = (in.dim(d) - 1) * wd.lhs_dilation;
        inside = b_->CreateAnd(inside, b_->CreateICmpSGE(pos, IndexConst(0)));
        inside = b_->CreateAnd(inside, b_->CreateICmpSLE(pos, IndexConst(last)));
        llvm::Value* c = Clamp(pos, 0, std::max<int64_t>(last, 0));
        if (wd.lhs_dilation > 1) {
          inside = b_->CreateAnd(inside, b_->CreateICmpEQ(
                                             b_->CreateURem(c, IndexConst(wd.lhs_dilation)),
                                             IndexConst(0)));
          c = b_->CreateUDiv(c, IndexConst(wd.lhs_dilation));
        }
        at[d] = c;
      }
      std::vector<llvm::Value*> args;
      for (int64_t k = 0; k < n; ++k) args.push_back(b_->CreateLoad(types[k], accumulators[k]));
      for (int64_t k = 0; k < n; ++k) {
        ASSIGN_OR_RETURN(llvm::Value * v, Operand(reduce_window, k, at));
        args.push_back(v);
      }
      ASSIGN_OR_RETURN(std::vector<llvm::Value*> next,
                       EmitScalarComputation(*reduce_window.to_apply(), args));
      for (int64_t k = 0; k < n; ++k) {
        b_->CreateStore(b_->CreateSelect(inside, next.at(k), args[k]), accumulators[k]);
      }
      return absl::OkStatus();
    }
    return EmitLoop(IndexConst(window[level].size), absl::StrCat(reduce_window.name(), ".w", level),
                    [&](llvm::Value* iv) -> absl::Status {
                      position[level] = iv;
                      return nest(level + 1);
                    });
  };
  if (in.element_count() > 0) RETURN_IF_ERROR(nest(0));
  std::vector<llvm::Value*> results;
  for (int64_t k = 0; k < n; ++k) results.push_back(b_->CreateLoad(types[k], accumulators[k]));
  return results;
}

}  // namespace hlogym

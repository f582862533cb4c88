// reduce inside a fused computation: each output element loops over its
// reduced dimensions in row-major order and applies the reducer, emitted on
// scalars. A float add reducer accumulates in double and rounds once, as the
// reference interpreter does, so sums match it bit for bit.
#include <algorithm>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
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

}  // namespace

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitReduce(const Instruction& reduce,
                                                                       const IrIndex& index) {
  const int64_t n = reduce.operand_count() / 2;
  const Shape& in = reduce.operand(0)->shape();
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : reduce.dimensions()) reduced[d] = true;
  std::vector<int64_t> reduced_dims;
  IrIndex in_index(in.rank(), nullptr);
  int64_t next_kept = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (reduced[d]) {
      reduced_dims.push_back(d);
    } else {
      in_index[d] = index.at(next_kept++);
    }
  }
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

  // One loop per reduced dimension, outermost first (row-major order).
  std::function<absl::Status(size_t)> nest = [&](size_t level) -> absl::Status {
    if (level == reduced_dims.size()) {
      std::vector<llvm::Value*> args;
      for (int64_t k = 0; k < n; ++k) args.push_back(b_->CreateLoad(types[k], accumulators[k]));
      for (int64_t k = 0; k < n; ++k) {
        ASSIGN_OR_RETURN(llvm::Value * v, Operand(reduce, k, in_index));
        args.push_back(v);
      }
      std::vector<llvm::Value*> next;
      if (float_add) {
        next.push_back(b_->CreateFAdd(args[0], b_->CreateFPCast(args[1], b_->getDoubleTy())));
      } else {
        ASSIGN_OR_RETURN(next, EmitScalarComputation(reducer, args));
      }
      for (int64_t k = 0; k < n; ++k) b_->CreateStore(next.at(k), accumulators[k]);
      return absl::OkStatus();
    }
    const int64_t d = reduced_dims[level];
    return EmitLoop(IndexConst(in.dim(d)), absl::StrCat(reduce.name(), ".r", d),
                    [&](llvm::Value* iv) -> absl::Status {
                      in_index[d] = iv;
                      return nest(level + 1);
                    });
  };
  RETURN_IF_ERROR(nest(0));
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

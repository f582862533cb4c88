// Convolution as an elemental op: one output element is the sum over its
// window positions and input features of input times kernel, with XLA's full
// semantics (dim_labels, strides, padding, lhs/rhs dilation, window reversal,
// feature and batch groups). The GPU target runs convolutions this way; the
// CPU target prefers im2col + GEMM (host_ops_convolution.cc).
#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitConvolution(
    const Instruction& conv, const IrIndex& index) {
  const auto& a = conv.attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& cd = a.dims;
  const Shape& ls = conv.operand(0)->shape();
  const Shape& rs = conv.operand(1)->shape();
  const Shape& os = conv.shape();
  const PrimitiveType out_type = os.element_type();
  // Products and sums in double, in the interpreter's order (window
  // positions, then input features): a product of two floats is exact in
  // double, so results match the reference bit for bit on every target.
  llvm::Type* acc_type = b_->getDoubleTy();
  const int64_t spatial = static_cast<int64_t>(cd.input_spatial.size());
  const int64_t out_features = os.dim(cd.output_feature);
  const int64_t kernel_in = rs.dim(cd.kernel_input_feature);
  const int64_t out_batch = os.dim(cd.output_batch);
  int64_t window_count = 1;
  for (int64_t d : cd.kernel_spatial) window_count *= rs.dim(d);

  llvm::Value* o = index[cd.output_feature];
  llvm::Value* group = b_->CreateUDiv(o, IndexConst(out_features / a.feature_group_count));
  llvm::Value* batch_group = b_->CreateUDiv(o, IndexConst(out_features / a.batch_group_count));
  llvm::Value* in_b = b_->CreateAdd(b_->CreateMul(batch_group, IndexConst(out_batch)),
                                    index[cd.output_batch]);
  llvm::Value* slot = EntryAlloca(acc_type, absl::StrCat(conv.name(), ".acc"));
  b_->CreateStore(llvm::ConstantFP::get(acc_type, 0.0), slot);
  auto to_acc = [&](llvm::Value* v) {
    return v->getType() == acc_type ? v : b_->CreateFPCast(v, acc_type);
  };
  RETURN_IF_ERROR(EmitLoop(IndexConst(window_count), absl::StrCat(conv.name(), ".w"),
                           [&](llvm::Value* w) -> absl::Status {
    // Window position w, row-major over the kernel's spatial sizes.
    IrIndex lhs(ls.rank()), rhs(rs.rank());
    lhs[cd.input_batch] = in_b;
    rhs[cd.kernel_output_feature] = o;
    llvm::Value* inside = b_->getTrue();
    llvm::Value* rest = w;
    for (int64_t s = spatial - 1; s >= 0; --s) {
      const WindowDimension& wd = a.window[s];
      llvm::Value* k = b_->CreateURem(rest, IndexConst(wd.size));
      rest = b_->CreateUDiv(rest, IndexConst(wd.size));
      rhs[cd.kernel_spatial[s]] = wd.reversal ? b_->CreateSub(IndexConst(wd.size - 1), k) : k;
      llvm::Value* pos = b_->CreateSub(
          b_->CreateAdd(b_->CreateMul(index[cd.output_spatial[s]], IndexConst(wd.stride)),
                        b_->CreateMul(k, IndexConst(wd.rhs_dilation))),
          IndexConst(wd.padding_low));
      llvm::Value* ok = b_->CreateICmpSGE(pos, IndexConst(0));
      llvm::Value* src = pos;
      if (wd.lhs_dilation > 1) {
        ok = b_->CreateAnd(ok, b_->CreateICmpEQ(b_->CreateSRem(pos, IndexConst(wd.lhs_dilation)),
                                                 IndexConst(0)));
        src = b_->CreateSDiv(pos, IndexConst(wd.lhs_dilation));
      }
      const int64_t size = ls.dim(cd.input_spatial[s]);
      ok = b_->CreateAnd(ok, b_->CreateICmpSLT(src, IndexConst(size)));
      inside = b_->CreateAnd(inside, ok);
      // Out of the input: read a valid element and drop it below, so the
      // loop has no branch.
      lhs[cd.input_spatial[s]] = b_->CreateSelect(ok, src, IndexConst(0));
    }
    return EmitLoop(IndexConst(kernel_in), absl::StrCat(conv.name(), ".c"),
                    [&](llvm::Value* c) -> absl::Status {
      IrIndex l = lhs, r = rhs;
      l[cd.input_feature] = b_->CreateAdd(b_->CreateMul(group, IndexConst(kernel_in)), c);
      r[cd.kernel_input_feature] = c;
      ASSIGN_OR_RETURN(llvm::Value * x, Operand(conv, 0, l));
      ASSIGN_OR_RETURN(llvm::Value * y, Operand(conv, 1, r));
      llvm::Value* product = b_->CreateFMul(to_acc(x), to_acc(y));
      product = b_->CreateSelect(inside, product, llvm::ConstantFP::get(acc_type, 0.0));
      b_->CreateStore(b_->CreateFAdd(b_->CreateLoad(acc_type, slot), product), slot);
      return absl::OkStatus();
    });
  }));
  llvm::Value* sum = b_->CreateLoad(acc_type, slot);
  llvm::Value* out = ValueType(out_type) == acc_type ? sum : b_->CreateFPCast(sum, ValueType(out_type));
  return std::vector<llvm::Value*>{RoundToType(out_type, out)};
}

}  // namespace hlogym

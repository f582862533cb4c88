// dot on OpenBLAS: each batch is one GEMM on operands viewed (or packed) as
// [batch, M, K] x [batch, K, N] -> [batch, M, N].
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/buffer_assignment.h"
#include "backend/host_ops.h"
#include "backend/host_ops_util.h"

namespace hlogym {
namespace {

std::vector<int64_t> Concat(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

int64_t SizeOf(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dim(d);
  return n;
}

// How one operand reaches GEMM: in place (maybe transposed), or packed.
struct OperandPlan {
  bool transpose = false;           // stored as [batch, cols, rows]
  std::vector<int64_t> pack;        // non-empty: permute into scratch first
  std::vector<int64_t> dims;        // the operand's dims (for packing)
  ScratchBuffer scratch;            // packed copy, allocated once
};

// `rows` are the dims GEMM sees as rows of op(X): the free dims for the lhs,
// the contracting dims for the rhs.
OperandPlan Plan(const Shape& shape, const std::vector<int64_t>& batch,
                 const std::vector<int64_t>& rows, const std::vector<int64_t>& cols, int width) {
  OperandPlan plan;
  const std::vector<int64_t> straight = Concat(batch, rows, cols);
  if (IsInOrder(straight)) return plan;
  if (IsInOrder(Concat(batch, cols, rows))) {
    plan.transpose = true;
    return plan;
  }
  plan.pack = straight;
  plan.dims.assign(shape.dims().begin(), shape.dims().end());
  plan.scratch = ScratchBuffer(static_cast<size_t>(shape.element_count() * width));
  return plan;
}


bool IsNarrow(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16;
}

// f64 dots run dgemm, f32 dots sgemm. Dots with f16/bf16 operands or result
// (mixed with f32) are computed as XLA:CPU and the interpreter compute them:
// operands widened to f32 exactly, sgemm, the result rounded to its type.
class BlasDot : public HostOp {
 public:
  BlasDot(const Instruction& dot, bool f64)
      : f64_(f64),
        lhs_type_(dot.operand(0)->shape().element_type()),
        rhs_type_(dot.operand(1)->shape().element_type()),
        out_type_(dot.shape().element_type()) {
    const Shape& lhs = dot.operand(0)->shape();
    const Shape& rhs = dot.operand(1)->shape();
    const DotDimensions& dd = dot.attrs<DotAttrs>().dims;
    const std::vector<int64_t> lhs_free = FreeDims(lhs.rank(), dd.lhs_batch, dd.lhs_contracting);
    const std::vector<int64_t> rhs_free = FreeDims(rhs.rank(), dd.rhs_batch, dd.rhs_contracting);
    batch_ = SizeOf(lhs, dd.lhs_batch);
    m_ = SizeOf(lhs, lhs_free);
    k_ = SizeOf(lhs, dd.lhs_contracting);
    n_ = SizeOf(rhs, rhs_free);
    const int width = f64 ? 8 : 4;
    lhs_ = Plan(lhs, dd.lhs_batch, lhs_free, dd.lhs_contracting, width);
    rhs_ = Plan(rhs, dd.rhs_batch, dd.rhs_contracting, rhs_free, width);
    if (IsNarrow(lhs_type_)) lhs_wide_ = ScratchBuffer(lhs.element_count() * sizeof(float));
    if (IsNarrow(rhs_type_)) rhs_wide_ = ScratchBuffer(rhs.element_count() * sizeof(float));
    if (IsNarrow(out_type_)) out_wide_ = ScratchBuffer(dot.shape().element_count() * sizeof(float));
    lhs_count_ = lhs.element_count();
    rhs_count_ = rhs.element_count();
    out_count_ = dot.shape().element_count();
  }

  absl::Status Run(void* const* buffers) override {
    const int width = f64_ ? 8 : 4;
    const void* a = buffers[0];
    const void* b = buffers[1];
    void* c = buffers[2];
    if (!lhs_wide_.empty()) {
      auto* wide = static_cast<float*>(lhs_wide_.data());
      WidenToFloat(lhs_type_, a, wide, lhs_count_);
      a = wide;
    }
    if (!rhs_wide_.empty()) {
      auto* wide = static_cast<float*>(rhs_wide_.data());
      WidenToFloat(rhs_type_, b, wide, rhs_count_);
      b = wide;
    }
    if (!out_wide_.empty()) c = out_wide_.data();
    if (!lhs_.pack.empty()) {
      void* to = lhs_.scratch.data();
      PermuteDense(a, to, lhs_.dims, lhs_.pack, width);
      a = to;
    }
    if (!rhs_.pack.empty()) {
      void* to = rhs_.scratch.data();
      PermuteDense(b, to, rhs_.dims, rhs_.pack, width);
      b = to;
    }
    const int64_t lda = lhs_.transpose ? m_ : k_;
    const int64_t ldb = rhs_.transpose ? k_ : n_;
    for (int64_t x = 0; x < batch_; ++x) {
      Gemm(f64_, lhs_.transpose, rhs_.transpose, m_, n_, k_,
           static_cast<const uint8_t*>(a) + x * m_ * k_ * width, lda,
           static_cast<const uint8_t*>(b) + x * k_ * n_ * width, ldb,
           static_cast<uint8_t*>(c) + x * m_ * n_ * width, n_);
    }
    if (!out_wide_.empty()) NarrowFromFloat(out_type_, static_cast<const float*>(c), buffers[2], out_count_);
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "blas-dot"; }

 private:
  bool f64_;
  PrimitiveType lhs_type_, rhs_type_, out_type_;
  int64_t batch_ = 1, m_ = 1, k_ = 1, n_ = 1;
  int64_t lhs_count_ = 0, rhs_count_ = 0, out_count_ = 0;
  OperandPlan lhs_, rhs_;
  ScratchBuffer lhs_wide_, rhs_wide_, out_wide_;  // f32 copies of narrow arrays
};

}  // namespace

std::unique_ptr<HostOp> MakeBlasDot(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 ||
      !dot.has_attrs<DotAttrs>()) {
    return nullptr;
  }
  const PrimitiveType out = dot.shape().element_type();
  const PrimitiveType lhs = dot.operand(0)->shape().element_type();
  const PrimitiveType rhs = dot.operand(1)->shape().element_type();
  if (!dot.shape().IsArray()) return nullptr;
  const bool f64 = out == PrimitiveType::kF64 && lhs == out && rhs == out;
  auto single = [](PrimitiveType t) { return t == PrimitiveType::kF32 || IsNarrow(t); };
  if (!f64 && !(single(out) && single(lhs) && single(rhs))) return nullptr;
  const DotDimensions& dd = dot.attrs<DotAttrs>().dims;
  if (dot.operand(0)->shape().IsTuple() || dot.operand(1)->shape().IsTuple() ||
      dd.lhs_batch.size() != dd.rhs_batch.size() ||
      dd.lhs_contracting.size() != dd.rhs_contracting.size()) {
    return nullptr;
  }
  return std::make_unique<BlasDot>(dot, f64);
}

}  // namespace hlogym

// scan as a host kernel of its own for the cumulative sum and product form
// (one f32/f64 input, one carry, a body computing y = x + c or x * c and
// returning (y, y)), which is what jnp.cumsum/cumprod lower to: the
// interpreter's version copies a slice per step into Literals. Each row
// along the scan dimension is folded in order, in double and rounded once
// per step as the interpreter does, so results are identical; rows run in
// parallel.
#include <algorithm>
#include <cstring>

#include "backend/host_ops.h"
#include "core/base/parallel.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

template <typename T>
class ScanOp : public HostOp {
 public:
  ScanOp(int64_t outer, int64_t length, int64_t inner, bool reverse, bool multiply)
      : outer_(outer), length_(length), inner_(inner), reverse_(reverse), multiply_(multiply) {}

  absl::Status Run(void* const* buffers) override {
    const T* x = static_cast<const T*>(buffers[0]);
    const T* init = static_cast<const T*>(buffers[1]);
    T* out = static_cast<T*>(buffers[2]);
    T* carry = static_cast<T*>(buffers[3]);  // the running carry, then the final one
    if (carry != init) std::memmove(carry, init, outer_ * inner_ * sizeof(T));
    ParallelFor(0, outer_, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, length_ * inner_)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t o = lo; o < hi; ++o) {
                    T* c = carry + o * inner_;
                    for (int64_t step = 0; step < length_; ++step) {
                      const int64_t t = reverse_ ? length_ - 1 - step : step;
                      const int64_t row = (o * length_ + t) * inner_;
                      for (int64_t i = 0; i < inner_; ++i) {
                        const double a = static_cast<double>(x[row + i]);
                        const double b = static_cast<double>(c[i]);
                        const T y = static_cast<T>(multiply_ ? a * b : a + b);
                        out[row + i] = y;
                        c[i] = y;
                      }
                    }
                  }
                });
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "scan"; }

 private:
  int64_t outer_, length_, inner_;
  bool reverse_, multiply_;
};

// Whether `body` is (x, c) -> (y, y) with y = x + c or x * c.
bool CumulativeBody(const Computation& body, bool* multiply) {
  const Instruction* root = body.root();
  if (body.parameter_count() != 2 || root->opcode() != Opcode::kTuple ||
      root->operand_count() != 2 || root->operand(0) != root->operand(1)) {
    return false;
  }
  const Instruction* y = root->operand(0);
  if ((y->opcode() != Opcode::kAdd && y->opcode() != Opcode::kMultiply) ||
      y->operand_count() != 2) {
    return false;
  }
  const Instruction* a = y->operand(0);
  const Instruction* b = y->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter ||
      a->parameter_number() == b->parameter_number()) {
    return false;
  }
  *multiply = y->opcode() == Opcode::kMultiply;
  return true;
}

}  // namespace

std::unique_ptr<HostOp> MakeScan(const Instruction& scan) {
  bool multiply = false;
  if (scan.opcode() != Opcode::kScan || !scan.has_attrs<ScanAttrs>() ||
      scan.operand_count() != 2 || scan.dimensions().size() != 1 ||
      scan.called_computations().empty() || !scan.shape().IsTuple() ||
      scan.shape().tuple_size() != 2 || !CumulativeBody(*scan.to_apply(), &multiply)) {
    return nullptr;
  }
  const ScanAttrs& a = scan.attrs<ScanAttrs>();
  const Shape& x = scan.operand(0)->shape();
  const Shape& init = scan.operand(1)->shape();
  const PrimitiveType t = x.element_type();
  if (a.num_carries != 1 || !x.IsArray() || !init.IsArray() ||
      (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) || init.element_type() != t ||
      !scan.shape().tuple_shape(0).Compatible(x) || !scan.shape().tuple_shape(1).Compatible(init) ||
      scan.to_apply()->root()->shape().tuple_shape(0).element_type() != t) {
    return nullptr;
  }
  const int64_t dim = scan.dimension(0);
  if (dim < 0 || dim >= x.rank()) return nullptr;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.dim(d);
  for (int64_t d = dim + 1; d < x.rank(); ++d) inner *= x.dim(d);
  if (init.element_count() != outer * inner) return nullptr;
  if (t == PrimitiveType::kF32) {
    return std::make_unique<ScanOp<float>>(outer, x.dim(dim), inner, a.is_reverse, multiply);
  }
  return std::make_unique<ScanOp<double>>(outer, x.dim(dim), inner, a.is_reverse, multiply);
}

}  // namespace hlogym

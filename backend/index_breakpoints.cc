#include "backend/index_breakpoints.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/ir/computation.h"

namespace hlogym {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Walks the instructions under the root with, for each, which of its
// dimensions the root position p indexes and how: index[dim] = scale * p +
// offset (scale is negative under a reverse).
class Walker {
 public:
  explicit Walker(int64_t size) : size_(size) {}

  // False once the walk gave up (too many visits or breakpoints).
  bool Visit(const Instruction& i, int64_t dim, int64_t scale, int64_t offset) {
    if (!seen_.insert({&i, dim, scale, offset}).second) return true;
    if (++visits_ > kMaxVisits) return false;
    const Opcode op = i.opcode();
    if (IsElementwise(op)) {
      for (const Instruction* operand : i.operands()) {
        if (operand->shape().rank() == 0) continue;
        if (!Visit(*operand, dim, scale, offset)) return false;
      }
      return true;
    }
    switch (op) {
      case Opcode::kBroadcast: {
        const auto& dims = i.dimensions();
        for (size_t k = 0; k < dims.size(); ++k) {
          if (dims[k] == dim) return Visit(*i.operand(0), static_cast<int64_t>(k), scale, offset);
        }
        return true;
      }
      case Opcode::kTranspose:
        return Visit(*i.operand(0), i.dimension(dim), scale, offset);
      case Opcode::kReshape:
      case Opcode::kBitcast: {
        // As the emitter maps indices: the same dimensions, or the same
        // ones besides size-1 dimensions.
        const Shape& in = i.operand(0)->shape();
        if (in.dims() == i.shape().dims()) return Visit(*i.operand(0), dim, scale, offset);
        std::vector<int64_t> in_big, out_big;
        for (int64_t d = 0; d < in.rank(); ++d) if (in.dim(d) != 1) in_big.push_back(d);
        for (int64_t d = 0; d < i.shape().rank(); ++d) if (i.shape().dim(d) != 1) out_big.push_back(d);
        if (in_big.size() != out_big.size()) return true;
        for (size_t k = 0; k < in_big.size(); ++k) {
          if (in.dim(in_big[k]) != i.shape().dim(out_big[k])) return true;
        }
        for (size_t k = 0; k < out_big.size(); ++k) {
          if (out_big[k] == dim) return Visit(*i.operand(0), in_big[k], scale, offset);
        }
        return true;
      }
      case Opcode::kReverse: {
        const auto& dims = i.dimensions();
        if (std::find(dims.begin(), dims.end(), dim) == dims.end()) {
          return Visit(*i.operand(0), dim, scale, offset);
        }
        return Visit(*i.operand(0), dim, -scale, i.shape().dim(dim) - 1 - offset);
      }
      case Opcode::kSlice: {
        const SliceAttrs& s = i.attrs<SliceAttrs>();
        const int64_t stride = s.strides.empty() ? 1 : s.strides[dim];
        return Visit(*i.operand(0), dim, scale * stride, offset * stride + s.starts[dim]);
      }
      case Opcode::kConcatenate: {
        const bool along = i.dimension(0) == dim;
        int64_t at = 0;
        for (int64_t k = 0; k < i.operand_count(); ++k) {
          const int64_t size = i.operand(k)->shape().dim(i.dimension(0));
          if (along && k > 0 && !Boundary(at, scale, offset)) return false;
          if (!Visit(*i.operand(k), dim, scale, along ? offset - at : offset)) return false;
          at += size;
        }
        return true;
      }
      case Opcode::kPad: {
        const PaddingDimension& p = i.attrs<PadAttrs>().padding[dim];
        const int64_t in_size = i.operand(0)->shape().dim(dim);
        const int64_t step = p.interior + 1;
        const int64_t last = (in_size - 1) * step;
        if (!Boundary(p.low, scale, offset) || !Boundary(p.low + last + 1, scale, offset)) {
          return false;
        }
        // Interior padding keeps a per-element test; the operand's
        // positions are then not affine in p.
        if (step != 1) return true;
        return Visit(*i.operand(0), dim, scale, offset - p.low);
      }
      case Opcode::kReduce: {
        // Operand dimension of kept dimension `dim`.
        const auto& reduced = i.dimensions();
        const Shape& in = i.operand(0)->shape();
        int64_t kept = 0;
        for (int64_t d = 0; d < in.rank(); ++d) {
          if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
          if (kept++ == dim) {
            for (int64_t k = 0; k < i.operand_count() / 2; ++k) {
              if (!Visit(*i.operand(k), d, scale, offset)) return false;
            }
            return true;
          }
        }
        return true;
      }
      case Opcode::kGetTupleElement:
        if (i.operand(0)->opcode() == Opcode::kReduce) return Visit(*i.operand(0), dim, scale, offset);
        return true;
      default:
        // Parameters, constants, iota; gathers, dynamic slices, windows and
        // convolutions compute their operands' indices.
        return true;
    }
  }

  const std::set<int64_t>& breakpoints() const { return breakpoints_; }

 private:
  static constexpr int64_t kMaxVisits = 4096;

  // Records where `index >= boundary` changes, with index = scale * p + offset.
  bool Boundary(int64_t boundary, int64_t scale, int64_t offset) {
    int64_t p;
    if (scale > 0) {
      p = -FloorDiv(offset - boundary, scale);  // ceil((boundary - offset) / scale)
    } else {
      p = FloorDiv(offset - boundary, -scale) + 1;
    }
    if (p > 0 && p < size_) breakpoints_.insert(p);
    return static_cast<int64_t>(breakpoints_.size()) < kMaxLoopSegments;
  }

  int64_t size_;
  int64_t visits_ = 0;
  std::set<std::tuple<const Instruction*, int64_t, int64_t, int64_t>> seen_;
  std::set<int64_t> breakpoints_;
};

}  // namespace

std::vector<int64_t> IndexBreakpoints(const Instruction& instruction, int64_t dim) {
  if (instruction.shape().IsTuple() || dim < 0 || dim >= instruction.shape().rank()) return {};
  Walker walker(instruction.shape().dim(dim));
  if (!walker.Visit(instruction, dim, 1, 0)) return {};
  return std::vector<int64_t>(walker.breakpoints().begin(), walker.breakpoints().end());
}

}  // namespace hlogym

// sort as a host kernel of its own: the interpreter's version copies every
// operand into Literals and sorts each line with std::stable_sort, which
// allocates. Here the comparator runs on the interpreter's own register
// program (ScalarFunction: the same meaning of every op, no allocation once
// a thread has its registers), each line is sorted by a stable merge sort
// in scratch sized once, and the operands are gathered straight into the
// executable's buffers. A stable sort's result is unique for a comparator
// that is a strict weak order (XLA requires one, and jnp's total-order
// comparators are), so results are identical to the interpreter's. Lines
// run in parallel, each chunk of lines with scratch of its own.
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/host_ops.h"
#include "core/base/parallel.h"
#include "core/eval/float_codec.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"
#include "core/eval/scalar.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

constexpr int64_t kMaxRank = 16;
constexpr int64_t kMaxChunks = 64;
constexpr int64_t kInsertionRun = 16;

// Reads element i of a dense buffer of `type` as the interpreter's
// LoadScalar reads a Literal's.
Scalar LoadRaw(PrimitiveType type, const uint8_t* data, int64_t i) {
  Scalar s;
  switch (type) {
    case PrimitiveType::kF32: s.f = F32Codec().Load(data, i); break;
    case PrimitiveType::kF64: s.f = F64Codec().Load(data, i); break;
    case PrimitiveType::kBF16: s.f = BF16Codec().Load(data, i); break;
    case PrimitiveType::kF16: s.f = F16Codec().Load(data, i); break;
    case PrimitiveType::kPred: s.i = data[i] != 0; break;
    case PrimitiveType::kS8: s.i = reinterpret_cast<const int8_t*>(data)[i]; break;
    case PrimitiveType::kS16: s.i = reinterpret_cast<const int16_t*>(data)[i]; break;
    case PrimitiveType::kS32: s.i = reinterpret_cast<const int32_t*>(data)[i]; break;
    case PrimitiveType::kS64: s.i = reinterpret_cast<const int64_t*>(data)[i]; break;
    case PrimitiveType::kU8: s.i = data[i]; break;
    case PrimitiveType::kU16: s.i = reinterpret_cast<const uint16_t*>(data)[i]; break;
    case PrimitiveType::kU32: s.i = reinterpret_cast<const uint32_t*>(data)[i]; break;
    case PrimitiveType::kU64:
      s.i = static_cast<int64_t>(reinterpret_cast<const uint64_t*>(data)[i]);
      break;
    default: break;
  }
  return s;
}

bool LoadsRaw(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32: case PrimitiveType::kF64: case PrimitiveType::kBF16:
    case PrimitiveType::kF16: case PrimitiveType::kPred: case PrimitiveType::kS8:
    case PrimitiveType::kS16: case PrimitiveType::kS32: case PrimitiveType::kS64:
    case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

// What ScalarFunction runs without Literals (its register program): scalar
// elementwise ops, compare, select, clamp, constants, a tuple root.
bool RunsOnRegisters(const Computation& c) {
  for (const auto& inst : c.instructions()) {
    const Opcode op = inst->opcode();
    const bool tuple_root = inst.get() == c.root() && op == Opcode::kTuple;
    if (!inst->shape().IsScalar() && !tuple_root) return false;
    if (op == Opcode::kBitcastConvert || op == Opcode::kReducePrecision) return false;
    if (op == Opcode::kConstant && inst->literal().is_elided()) return false;
    const bool scalar_op = op == Opcode::kParameter || op == Opcode::kConstant ||
                           op == Opcode::kCompare || op == Opcode::kSelect ||
                           op == Opcode::kClamp || op == Opcode::kTuple ||
                           IsElementwiseUnary(op) || IsElementwiseBinary(op);
    if (!scalar_op) return false;
  }
  return !c.root()->shape().IsTuple();
}

class SortOp : public HostOp {
 public:
  SortOp(const Instruction& sort, ScalarFunction less)
      : less_(std::move(less)), name_(sort.name()) {
    const Shape& shape = sort.operand(0)->shape();
    for (const Instruction* operand : sort.operands()) {
      types_.push_back(operand->shape().element_type());
      widths_.push_back(ByteWidth(operand->shape().element_type()));
    }
    rank_ = shape.rank();
    axis_ = sort.dimension(0);
    length_ = shape.dim(axis_);
    strides_ = Strides(shape.dims());
    outer_dims_.assign(shape.dims().begin(), shape.dims().end());
    outer_dims_[axis_] = 1;
    lines_ = length_ == 0 ? 0 : shape.element_count() / length_;
    chunks_ = std::min(kMaxChunks, std::max<int64_t>(lines_, 1));
    const size_t n = types_.size();
    for (int64_t c = 0; c < chunks_; ++c) {
      Chunk chunk;
      chunk.order.resize(length_);
      chunk.merged.resize(length_);
      chunk.offsets.resize(length_);
      chunk.args.resize(2 * n);
      scratch_.push_back(std::move(chunk));
    }
  }

  absl::Status Run(void* const* buffers) override {
    const size_t n = types_.size();
    if (lines_ == 0) return absl::OkStatus();
    ParallelFor(0, chunks_, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        Chunk& chunk = scratch_[c];
        chunk.status = absl::OkStatus();
        for (int64_t l = c * lines_ / chunks_; l < (c + 1) * lines_ / chunks_; ++l) {
          if (!SortLine(buffers, n, l, chunk)) break;
        }
      }
    });
    for (const Chunk& chunk : scratch_) {
      if (!chunk.status.ok()) {
        return absl::InternalError(absl::StrCat("sort `", name_, "`: ", chunk.status.message()));
      }
    }
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "sort"; }

 private:
  struct Chunk {
    std::vector<int64_t> order, merged, offsets;
    std::vector<Scalar> args;
    absl::Status status;
  };

  // Whether line l was sorted (else chunk.status says why not).
  bool SortLine(void* const* buffers, size_t n, int64_t l, Chunk& chunk) const {
    int64_t base = 0, rest = l;
    for (int64_t d = rank_ - 1; d >= 0; --d) {
      base += (rest % outer_dims_[d]) * strides_[d];
      rest /= outer_dims_[d];
    }
    for (int64_t j = 0; j < length_; ++j) {
      chunk.offsets[j] = base + j * strides_[axis_];
      chunk.order[j] = j;
    }
    Scalar result[1];
    auto less = [&](int64_t a, int64_t b) {
      if (!chunk.status.ok()) return false;
      for (size_t k = 0; k < n; ++k) {
        const auto* data = static_cast<const uint8_t*>(buffers[k]);
        chunk.args[2 * k] = LoadRaw(types_[k], data, chunk.offsets[a]);
        chunk.args[2 * k + 1] = LoadRaw(types_[k], data, chunk.offsets[b]);
      }
      if (absl::Status s = less_.Run(chunk.args, result); !s.ok()) {
        chunk.status = s;
        return false;
      }
      return result[0].i != 0;
    };
    StableSort(chunk.order.data(), chunk.merged.data(), length_, less);
    if (!chunk.status.ok()) return false;
    for (size_t k = 0; k < n; ++k) {
      const auto* from = static_cast<const uint8_t*>(buffers[k]);
      auto* to = static_cast<uint8_t*>(buffers[n + k]);
      const int w = widths_[k];
      for (int64_t j = 0; j < length_; ++j) {
        std::memcpy(to + chunk.offsets[j] * w, from + chunk.offsets[chunk.order[j]] * w, w);
      }
    }
    return true;
  }

  // Stable: insertion-sorted runs, then merges that take the right element
  // only when it is strictly less. The result ends in `order`.
  template <typename Less>
  static void StableSort(int64_t* order, int64_t* merged, int64_t n, Less& less) {
    for (int64_t start = 0; start < n; start += kInsertionRun) {
      const int64_t end = std::min(n, start + kInsertionRun);
      for (int64_t i = start + 1; i < end; ++i) {
        const int64_t x = order[i];
        int64_t j = i;
        for (; j > start && less(x, order[j - 1]); --j) order[j] = order[j - 1];
        order[j] = x;
      }
    }
    int64_t* from = order;
    int64_t* to = merged;
    for (int64_t width = kInsertionRun; width < n; width *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * width) {
        const int64_t mid = std::min(n, lo + width), hi = std::min(n, lo + 2 * width);
        int64_t i = lo, j = mid, out = lo;
        while (i < mid && j < hi) to[out++] = less(from[j], from[i]) ? from[j++] : from[i++];
        while (i < mid) to[out++] = from[i++];
        while (j < hi) to[out++] = from[j++];
      }
      std::swap(from, to);
    }
    if (from != order) std::copy(from, from + n, order);
  }

  ScalarFunction less_;
  std::string name_;
  std::vector<PrimitiveType> types_;
  std::vector<int> widths_;
  int64_t rank_ = 0, axis_ = 0, length_ = 0, lines_ = 0, chunks_ = 1;
  std::vector<int64_t> strides_, outer_dims_;
  std::vector<Chunk> scratch_;
};

}  // namespace

std::unique_ptr<HostOp> MakeSort(const Instruction& sort) {
  if (sort.opcode() != Opcode::kSort || sort.operand_count() < 1 ||
      sort.called_computations().empty() || sort.dimensions().size() != 1 ||
      !RunsOnRegisters(*sort.to_apply())) {
    return nullptr;
  }
  const Shape& shape = sort.operand(0)->shape();
  if (!shape.IsArray() || shape.rank() == 0 || shape.rank() > kMaxRank ||
      sort.dimension(0) < 0 || sort.dimension(0) >= shape.rank()) {
    return nullptr;
  }
  for (const Instruction* operand : sort.operands()) {
    const Shape& s = operand->shape();
    if (!s.IsArray() || s.dims() != shape.dims() || !LoadsRaw(s.element_type())) return nullptr;
  }
  // The register program never calls back; a call would be a bug.
  CallComputation no_call = [](const Computation& c, Operands) -> absl::StatusOr<Literal> {
    return absl::InternalError(absl::StrCat("the sort comparator `", c.name(),
                                            "` was to run on Literals"));
  };
  absl::StatusOr<ScalarFunction> less = ScalarFunction::Make(*sort.to_apply(), no_call);
  if (!less.ok()) return nullptr;
  return std::make_unique<SortOp>(sort, *std::move(less));
}

}  // namespace hlogym

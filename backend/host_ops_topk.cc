// topk as a host kernel of its own: the interpreter's version copies the
// operand into a Literal and sorts a (key, index) vector per row, so it
// allocates on every run. Here each row keeps its best k in a sorted array
// on the stack, and the result is written straight into the executable's
// buffers.
#include <algorithm>
#include <cstring>

#include "backend/host_ops.h"
#include "core/base/parallel.h"
#include "core/eval/float_ops.h"

namespace hlogym {
namespace {

// Rows longer than k go through an insertion into the k best so far, which
// wants k small; larger k stay on the interpreter.
constexpr int64_t kMaxK = 128;

// The key that orders elements as the interpreter's topk does: floats in
// total order (NaN above +inf), integers by value.
template <typename T>
int64_t Key(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return TotalOrderKey(static_cast<double>(v));
  } else {
    return static_cast<int64_t>(v);
  }
}

template <typename T, typename Index>
class TopKOp : public HostOp {
 public:
  TopKOp(int64_t rows, int64_t length, int64_t k, bool largest)
      : rows_(rows), length_(length), k_(k), largest_(largest) {}

  absl::Status Run(void* const* buffers) override {
    const T* in = static_cast<const T*>(buffers[0]);
    T* values = static_cast<T*>(buffers[1]);
    Index* indices = static_cast<Index*>(buffers[2]);
    const int64_t kept = std::min(k_, length_);
    ParallelFor(0, rows_, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, length_)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t row = lo; row < hi; ++row) {
                    TopRow(in + row * length_, kept, values + row * k_, indices + row * k_);
                  }
                });
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "topk"; }

 private:
  // Whether (key a, index i) comes before (key b, index j): by key, ties to
  // the lower index (a stable sort's first k).
  bool Before(int64_t a, int64_t i, int64_t b, int64_t j) const {
    if (a != b) return largest_ ? a > b : a < b;
    return i < j;
  }

  void TopRow(const T* row, int64_t kept, T* values, Index* indices) const {
    int64_t keys[kMaxK];
    int64_t positions[kMaxK];
    int64_t size = 0;
    for (int64_t j = 0; j < length_; ++j) {
      const int64_t key = Key(row[j]);
      // j is larger than every index kept, so it goes after equal keys.
      if (size == kept && !Before(key, j, keys[size - 1], positions[size - 1])) continue;
      int64_t at = size < kept ? size++ : kept - 1;
      while (at > 0 && Before(key, j, keys[at - 1], positions[at - 1])) {
        keys[at] = keys[at - 1];
        positions[at] = positions[at - 1];
        --at;
      }
      keys[at] = key;
      positions[at] = j;
    }
    for (int64_t j = 0; j < kept; ++j) {
      values[j] = row[positions[j]];
      indices[j] = static_cast<Index>(positions[j]);
    }
    // A row shorter than k: the interpreter leaves the rest zero.
    for (int64_t j = kept; j < k_; ++j) {
      values[j] = T{};
      indices[j] = 0;
    }
  }

  int64_t rows_, length_, k_;
  bool largest_;
};

template <typename T>
std::unique_ptr<HostOp> WithIndex(PrimitiveType index, int64_t rows, int64_t length, int64_t k,
                                  bool largest) {
  if (index == PrimitiveType::kS32) return std::make_unique<TopKOp<T, int32_t>>(rows, length, k, largest);
  if (index == PrimitiveType::kS64) return std::make_unique<TopKOp<T, int64_t>>(rows, length, k, largest);
  return nullptr;
}

}  // namespace

std::unique_ptr<HostOp> MakeTopK(const Instruction& topk) {
  if (topk.opcode() != Opcode::kTopK || !topk.has_attrs<TopKAttrs>() ||
      topk.operand_count() != 1 || !topk.shape().IsTuple() || topk.shape().tuple_size() != 2) {
    return nullptr;
  }
  const Shape& in = topk.operand(0)->shape();
  const TopKAttrs& a = topk.attrs<TopKAttrs>();
  if (!in.IsArray() || in.rank() == 0 || a.k <= 0 || a.k > kMaxK) return nullptr;
  const int64_t length = in.dim(in.rank() - 1);
  if (length == 0) return nullptr;
  const int64_t rows = in.element_count() / length;
  const PrimitiveType index = topk.shape().tuple_shape(1).element_type();
  switch (in.element_type()) {
    case PrimitiveType::kF32: return WithIndex<float>(index, rows, length, a.k, a.largest);
    case PrimitiveType::kF64: return WithIndex<double>(index, rows, length, a.k, a.largest);
    case PrimitiveType::kS32: return WithIndex<int32_t>(index, rows, length, a.k, a.largest);
    case PrimitiveType::kS64: return WithIndex<int64_t>(index, rows, length, a.k, a.largest);
    default: return nullptr;
  }
}

}  // namespace hlogym

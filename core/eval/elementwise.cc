// Elementwise kernels: unary, binary, compare, select, clamp, convert,
// bitcast-convert, reduce-precision.
#include <cmath>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/eval/kernels.h"
#include "oneapi/tbb/parallel_for.h"

namespace hlogym {

void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  constexpr int64_t kGrain = 1 << 14;
  if (n <= kGrain) {
    body(0, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, kGrain),
                    [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

namespace {

// Operand value at element i, where scalars broadcast.
int64_t At(const Literal& operand, int64_t i) {
  return operand.shape().rank() == 0 ? 0 : i;
}

// f32 fast paths: the same semantics as ApplyUnary/ApplyBinary, on floats.
bool TryFastF32(const Instruction& inst, Operands operands, Literal& out) {
  const PrimitiveType f32 = PrimitiveType::kF32;
  if (out.shape().element_type() != f32) return false;
  for (const Literal* o : operands) {
    if (o->shape().element_type() != f32 || o->shape().rank() != out.shape().rank()) {
      return false;
    }
  }
  float* dst = out.data<float>().data();
  const int64_t n = out.element_count();
  if (operands.size() == 2) {
    const float* a = operands[0]->data<float>().data();
    const float* b = operands[1]->data<float>().data();
    auto run = [&](auto f) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) dst[i] = f(a[i], b[i]);
      });
      return true;
    };
    switch (inst.opcode()) {
      case Opcode::kAdd: return run([](float x, float y) { return x + y; });
      case Opcode::kSubtract: return run([](float x, float y) { return x - y; });
      case Opcode::kMultiply: return run([](float x, float y) { return x * y; });
      case Opcode::kDivide: return run([](float x, float y) { return x / y; });
      default: return false;
    }
  }
  if (operands.size() == 1) {
    const float* a = operands[0]->data<float>().data();
    auto run = [&](auto f) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) dst[i] = f(a[i]);
      });
      return true;
    };
    switch (inst.opcode()) {
      case Opcode::kNegate: return run([](float x) { return -x; });
      case Opcode::kExp: return run([](float x) { return static_cast<float>(std::exp(double{x})); });
      case Opcode::kLog: return run([](float x) { return static_cast<float>(std::log(double{x})); });
      case Opcode::kTanh: return run([](float x) { return static_cast<float>(std::tanh(double{x})); });
      case Opcode::kSqrt: return run([](float x) { return static_cast<float>(std::sqrt(double{x})); });
      case Opcode::kRsqrt:
        return run([](float x) { return static_cast<float>(1.0 / std::sqrt(double{x})); });
      case Opcode::kAbs: return run([](float x) { return std::fabs(x); });
      case Opcode::kCopy: return run([](float x) { return x; });
      default: return false;
    }
  }
  return false;
}

// XLA's reduce-precision: round the mantissa to `m` bits (nearest even), then
// overflow to infinity and underflow to zero for an `e`-bit exponent.
double ReducePrecision(double value, int64_t e, int64_t m) {
  float f = static_cast<float>(value);
  if (std::isnan(f)) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (m < 23) {
    const uint32_t drop = 23 - static_cast<uint32_t>(m);
    const uint32_t last = (bits >> drop) & 1;
    const uint32_t half = (1u << (drop - 1)) - 1;
    bits += half + last;
    bits &= ~((1u << drop) - 1);
  }
  if (e < 8) {
    const int32_t bias = (1 << (e - 1)) - 1;
    const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127;
    const uint32_t sign = bits & 0x80000000u;
    if (exponent > bias) {
      bits = sign | 0x7f800000u;
    } else if (exponent <= -bias) {
      bits = sign;
    }
  }
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

absl::StatusOr<Literal> EvalElementwise(const Instruction& inst, Operands operands) {
  const Shape& shape = inst.shape();
  Literal out(shape);
  const int64_t n = out.element_count();
  const PrimitiveType out_type = shape.element_type();
  const Opcode op = inst.opcode();

  if (op == Opcode::kBitcastConvert) {
    const Literal& in = *operands[0];
    if (in.raw_size() != out.raw_size()) {
      return absl::UnimplementedError(absl::StrCat(
          "not supported: bitcast-convert between ", in.shape().ToString(), " and ",
          shape.ToString(), " in instruction `", inst.name(), "`"));
    }
    std::memcpy(out.raw_data(), in.raw_data(), in.raw_size());
    return out;
  }
  if (TryFastF32(inst, operands, out)) return out;

  absl::Status failure;
  std::mutex failure_mutex;
  auto fail = [&](absl::Status s) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (failure.ok()) failure = std::move(s);
  };

  ParallelFor(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      Scalar r;
      switch (op) {
        case Opcode::kSelect: {
          const bool p = LoadScalar(*operands[0], At(*operands[0], i)).i != 0;
          r = LoadScalar(*operands[p ? 1 : 2], i);
          break;
        }
        case Opcode::kClamp: {
          const PrimitiveType t = operands[1]->shape().element_type();
          Scalar lo_v = LoadScalar(*operands[0], At(*operands[0], i));
          Scalar x = LoadScalar(*operands[1], i);
          Scalar hi_v = LoadScalar(*operands[2], At(*operands[2], i));
          absl::StatusOr<Scalar> m = ApplyBinary(Opcode::kMaximum, t, t, x, lo_v);
          if (m.ok()) m = ApplyBinary(Opcode::kMinimum, t, t, *m, hi_v);
          if (!m.ok()) {
            fail(m.status());
            return;
          }
          r = *m;
          break;
        }
        case Opcode::kCompare: {
          const auto& a = inst.attrs<CompareAttrs>();
          r.i = Compare(a.direction, a.type, operands[0]->shape().element_type(),
                        LoadScalar(*operands[0], i), LoadScalar(*operands[1], i));
          break;
        }
        case Opcode::kReducePrecision: {
          const auto& a = inst.attrs<ReducePrecisionAttrs>();
          r.f = ReducePrecision(LoadScalar(*operands[0], i).f, a.exponent_bits, a.mantissa_bits);
          break;
        }
        default: {
          absl::StatusOr<Scalar> v =
              operands.size() == 1
                  ? ApplyUnary(op, operands[0]->shape().element_type(), out_type,
                               LoadScalar(*operands[0], i))
                  : ApplyBinary(op, operands[0]->shape().element_type(), out_type,
                                LoadScalar(*operands[0], i), LoadScalar(*operands[1], i));
          if (!v.ok()) {
            fail(absl::Status(v.status().code(), absl::StrCat(v.status().message(),
                                                              " in instruction `", inst.name(), "`")));
            return;
          }
          r = *v;
        }
      }
      StoreScalar(out, i, r);
    }
  });
  if (!failure.ok()) return failure;
  return out;
}

}  // namespace hlogym

// Elementwise kernels: unary, binary, compare, select, clamp, convert,
// bitcast-convert, reduce-precision. Float and integer ops have typed fast
// paths; everything else goes element by element through scalar.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/eval/float_codec.h"
#include "core/eval/float_ops.h"
#include "core/eval/kernels.h"

namespace hlogym {

void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body,
                 int64_t cost_per_item) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, cost_per_item));
  if (n <= grain) {
    body(0, n);
    return;
  }
  ParallelFor(0, n, grain, body);
}

namespace {

// Operand value at element i, where scalars broadcast.
int64_t At(const Literal& operand, int64_t i) {
  return operand.shape().rank() == 0 ? 0 : i;
}

constexpr int64_t kChunk = 512;

// Elements [lo, lo + n) of a float operand as doubles; a rank-0 operand
// broadcasts.
void LoadFloats(const Literal& in, int64_t lo, int64_t n, double* buffer) {
  const uint8_t* data = in.raw_data();
  const bool scalar = in.shape().rank() == 0;
  VisitFloatCodec(in.shape().element_type(), [&](auto codec) {
    if (scalar) {
      std::fill(buffer, buffer + n, codec.Load(data, 0));
    } else {
      for (int64_t j = 0; j < n; ++j) buffer[j] = codec.Load(data, lo + j);
    }
  });
}

void StoreFloats(Literal& out, int64_t lo, int64_t n, const double* buffer) {
  uint8_t* data = out.raw_data();
  VisitFloatCodec(out.shape().element_type(), [&](auto codec) {
    for (int64_t j = 0; j < n; ++j) codec.Store(data, lo + j, buffer[j]);
  });
}

// Float elementwise ops (f32, f64, bf16, f16 operands) in chunks of doubles:
// the same functions as ApplyUnary/ApplyBinary, with the dispatch on opcode
// and type hoisted out of the element loop. Returns false when the
// instruction is not one of these, and the generic path runs.
bool TryFloatKernel(const Instruction& inst, Operands operands, Literal& out) {
  const Opcode op = inst.opcode();
  const PrimitiveType out_type = out.shape().element_type();
  const int64_t n = out.element_count();
  auto is_float = [](const Literal* l) { return HasFloatCodec(l->shape().element_type()); };
  auto fits = [&](const Literal* l) { return l->shape().rank() == 0 || l->element_count() == n; };
  for (const Literal* o : operands) {
    if (!fits(o)) return false;
  }
  if (op == Opcode::kCompare) {
    if (!is_float(operands[0]) || !is_float(operands[1])) return false;
    const auto& a = inst.attrs<CompareAttrs>();
    uint8_t* dst = out.raw_data();
    WithFloatCompare(a.direction, a.type, [&](auto fn) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        double x[kChunk], y[kChunk];
        for (int64_t base = lo; base < hi; base += kChunk) {
          const int64_t m = std::min(kChunk, hi - base);
          LoadFloats(*operands[0], base, m, x);
          LoadFloats(*operands[1], base, m, y);
          for (int64_t j = 0; j < m; ++j) dst[base + j] = fn(x[j], y[j]);
        }
      });
    });
    return true;
  }
  if (!HasFloatCodec(out_type)) return false;
  if (op == Opcode::kSelect) {
    if (operands[0]->shape().element_type() != PrimitiveType::kPred || !is_float(operands[1]) ||
        !is_float(operands[2])) {
      return false;
    }
    const uint8_t* pred = operands[0]->raw_data();
    const bool scalar_pred = operands[0]->shape().rank() == 0;
    ParallelFor(n, [&](int64_t lo, int64_t hi) {
      double x[kChunk], y[kChunk];
      for (int64_t base = lo; base < hi; base += kChunk) {
        const int64_t m = std::min(kChunk, hi - base);
        LoadFloats(*operands[1], base, m, x);
        LoadFloats(*operands[2], base, m, y);
        for (int64_t j = 0; j < m; ++j) {
          if (!pred[scalar_pred ? 0 : base + j]) x[j] = y[j];
        }
        StoreFloats(out, base, m, x);
      }
    });
    return true;
  }
  for (const Literal* o : operands) {
    if (!is_float(o)) return false;
  }
  if (op == Opcode::kConvert || op == Opcode::kCopy) {
    ParallelFor(n, [&](int64_t lo, int64_t hi) {
      double x[kChunk];
      for (int64_t base = lo; base < hi; base += kChunk) {
        const int64_t m = std::min(kChunk, hi - base);
        LoadFloats(*operands[0], base, m, x);
        StoreFloats(out, base, m, x);
      }
    });
    return true;
  }
  if (op == Opcode::kClamp) {
    ParallelFor(n, [&](int64_t lo, int64_t hi) {
      double low[kChunk], x[kChunk], high[kChunk];
      for (int64_t base = lo; base < hi; base += kChunk) {
        const int64_t m = std::min(kChunk, hi - base);
        LoadFloats(*operands[0], base, m, low);
        LoadFloats(*operands[1], base, m, x);
        LoadFloats(*operands[2], base, m, high);
        for (int64_t j = 0; j < m; ++j) x[j] = FloatMinimum(FloatMaximum(x[j], low[j]), high[j]);
        StoreFloats(out, base, m, x);
      }
    });
    return true;
  }
  // f32 and f64 operands of the output's shape: one direct loop (the same
  // functions, computed in double and rounded by the cast).
  const bool direct = (out_type == PrimitiveType::kF32 || out_type == PrimitiveType::kF64) &&
                      std::all_of(operands.begin(), operands.end(), [&](const Literal* o) {
                        return o->shape().element_type() == out_type && o->element_count() == n &&
                               o->shape().rank() > 0;
                      });
  if (direct) {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      T* dst = reinterpret_cast<T*>(out.raw_data());
      const T* x = reinterpret_cast<const T*>(operands[0]->raw_data());
      if (operands.size() == 1) {
        return WithFloatUnary(op, [&](auto fn) {
          ParallelFor(n, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) dst[i] = static_cast<T>(fn(static_cast<double>(x[i])));
          });
        });
      }
      const T* y = reinterpret_cast<const T*>(operands[1]->raw_data());
      return operands.size() == 2 && WithFloatBinary(op, [&](auto fn) {
        ParallelFor(n, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) {
            dst[i] = static_cast<T>(fn(static_cast<double>(x[i]), static_cast<double>(y[i])));
          }
        });
      });
    };
    if (operands.size() <= 2) {
      return out_type == PrimitiveType::kF32 ? run(0.0f) : run(0.0);
    }
  }
  if (operands.size() == 1) {
    return WithFloatUnary(op, [&](auto fn) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        double x[kChunk];
        for (int64_t base = lo; base < hi; base += kChunk) {
          const int64_t m = std::min(kChunk, hi - base);
          LoadFloats(*operands[0], base, m, x);
          for (int64_t j = 0; j < m; ++j) x[j] = fn(x[j]);
          StoreFloats(out, base, m, x);
        }
      });
    });
  }
  if (operands.size() == 2) {
    return WithFloatBinary(op, [&](auto fn) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        double x[kChunk], y[kChunk];
        for (int64_t base = lo; base < hi; base += kChunk) {
          const int64_t m = std::min(kChunk, hi - base);
          LoadFloats(*operands[0], base, m, x);
          LoadFloats(*operands[1], base, m, y);
          for (int64_t j = 0; j < m; ++j) x[j] = fn(x[j], y[j]);
          StoreFloats(out, base, m, x);
        }
      });
    });
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

// Calls f(T{}) with the native type of an 8- to 64-bit integer type.
template <typename F>
bool VisitIntType(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kS8: f(int8_t{}); return true;
    case PrimitiveType::kS16: f(int16_t{}); return true;
    case PrimitiveType::kS32: f(int32_t{}); return true;
    case PrimitiveType::kS64: f(int64_t{}); return true;
    case PrimitiveType::kU8: f(uint8_t{}); return true;
    case PrimitiveType::kU16: f(uint16_t{}); return true;
    case PrimitiveType::kU32: f(uint32_t{}); return true;
    case PrimitiveType::kU64: f(uint64_t{}); return true;
    default: return false;
  }
}

// Integer binary ops, compare and select on 8- to 64-bit integers, as
// typed loops with the semantics of ApplyBinary's integer branch: arithmetic
// wraps, shifts by the width or more give 0 (or the sign, arithmetic), and
// max/min/compare follow the type's signedness. Division and the rest go to
// the generic path.
template <typename T>
bool TryIntKernelTyped(const Instruction& inst, Operands operands, Literal& out) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  constexpr uint64_t kWidth = sizeof(T) * 8;
  const int64_t n = out.element_count();
  const Opcode op = inst.opcode();
  const size_t first = op == Opcode::kSelect ? 1 : 0;
  const Literal& x = *operands[first];
  const Literal& y = *operands[first + 1];
  const T* a = reinterpret_cast<const T*>(x.raw_data());
  const T* b = reinterpret_cast<const T*>(y.raw_data());
  const bool a_scalar = x.shape().rank() == 0, b_scalar = y.shape().rank() == 0;
  if (op == Opcode::kSelect) {
    const uint8_t* pred = operands[0]->raw_data();
    const bool p_scalar = operands[0]->shape().rank() == 0;
    T* d = reinterpret_cast<T*>(out.raw_data());
    ParallelFor(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        d[i] = pred[p_scalar ? 0 : i] ? a[a_scalar ? 0 : i] : b[b_scalar ? 0 : i];
      }
    });
    return true;
  }
  if (op == Opcode::kCompare) {
    const auto& attrs = inst.attrs<CompareAttrs>();
    const bool natural = attrs.type == ComparisonType::kDefault ||
                         (attrs.type == ComparisonType::kSigned && std::is_signed_v<T>) ||
                         (attrs.type == ComparisonType::kUnsigned && !std::is_signed_v<T>);
    if (!natural) return false;
    uint8_t* d = out.raw_data();
    auto run = [&](auto f) {
      ParallelFor(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) d[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
      });
      return true;
    };
    switch (attrs.direction) {
      case ComparisonDirection::kEq: return run([](T p, T q) { return p == q; });
      case ComparisonDirection::kNe: return run([](T p, T q) { return p != q; });
      case ComparisonDirection::kGe: return run([](T p, T q) { return p >= q; });
      case ComparisonDirection::kGt: return run([](T p, T q) { return p > q; });
      case ComparisonDirection::kLe: return run([](T p, T q) { return p <= q; });
      case ComparisonDirection::kLt: return run([](T p, T q) { return p < q; });
    }
    return false;
  }
  T* d = reinterpret_cast<T*>(out.raw_data());
  auto run = [&](auto f) {
    ParallelFor(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
    });
    return true;
  };
  // 64-bit unsigned arithmetic, truncated: no promotion to int can overflow.
  auto u64 = [](T v) { return static_cast<uint64_t>(static_cast<U>(v)); };
  switch (op) {
    case Opcode::kAdd: return run([&](T p, T q) { return static_cast<T>(u64(p) + u64(q)); });
    case Opcode::kSubtract: return run([&](T p, T q) { return static_cast<T>(u64(p) - u64(q)); });
    case Opcode::kMultiply: return run([&](T p, T q) { return static_cast<T>(u64(p) * u64(q)); });
    case Opcode::kAnd: return run([&](T p, T q) { return static_cast<T>(u64(p) & u64(q)); });
    case Opcode::kOr: return run([&](T p, T q) { return static_cast<T>(u64(p) | u64(q)); });
    case Opcode::kXor: return run([&](T p, T q) { return static_cast<T>(u64(p) ^ u64(q)); });
    case Opcode::kMaximum: return run([](T p, T q) { return p > q ? p : q; });
    case Opcode::kMinimum: return run([](T p, T q) { return p < q ? p : q; });
    case Opcode::kShiftLeft:
      return run([&](T p, T q) { return u64(q) >= kWidth ? T{0} : static_cast<T>(u64(p) << u64(q)); });
    case Opcode::kShiftRightLogical:
      return run([&](T p, T q) { return u64(q) >= kWidth ? T{0} : static_cast<T>(u64(p) >> u64(q)); });
    case Opcode::kShiftRightArithmetic:
      return run([&](T p, T q) {
        const S v = static_cast<S>(p);
        return static_cast<T>(u64(q) >= kWidth ? (v < 0 ? S{-1} : S{0}) : static_cast<S>(v >> u64(q)));
      });
    default:
      return false;
  }
}

bool TryIntKernel(const Instruction& inst, Operands operands, Literal& out) {
  const Opcode op = inst.opcode();
  const bool select = op == Opcode::kSelect;
  if (operands.size() != (select ? 3u : 2u)) return false;
  if (select && operands[0]->shape().element_type() != PrimitiveType::kPred) return false;
  const size_t first = select ? 1 : 0;
  const PrimitiveType t = operands[first]->shape().element_type();
  const int64_t n = out.element_count();
  for (const Literal* o : operands) {
    if (o->shape().rank() != 0 && o->element_count() != n) return false;
  }
  if (operands[first + 1]->shape().element_type() != t) return false;
  if (op != Opcode::kCompare && out.shape().element_type() != t) return false;
  bool done = false;
  VisitIntType(t, [&](auto zero) { done = TryIntKernelTyped<decltype(zero)>(inst, operands, out); });
  return done;
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
  if (TryFloatKernel(inst, operands, out) || TryIntKernel(inst, operands, out)) return out;

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

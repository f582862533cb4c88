#include "core/eval/scalar.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/eval/float_ops.h"
#include "core/ir/float_formats.h"

namespace hlogym {
namespace {

int Width(PrimitiveType t) { return BitWidth(t); }

uint64_t Mask(PrimitiveType t) {
  const int w = Width(t);
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// The integer as an unsigned `width`-bit pattern.
uint64_t Bits(PrimitiveType t, int64_t v) { return static_cast<uint64_t>(v) & Mask(t); }

// Reads a `width`-bit pattern back as the type's value (sign-extending).
int64_t FromBits(PrimitiveType t, uint64_t bits) {
  bits &= Mask(t);
  const int w = Width(t);
  if (IsSignedInteger(t) && w < 64 && ((bits >> (w - 1)) & 1)) bits |= ~Mask(t);
  return static_cast<int64_t>(bits);
}

Scalar Int(PrimitiveType t, int64_t v) {
  Scalar s;
  s.i = t == PrimitiveType::kPred ? (v != 0) : FromBits(t, static_cast<uint64_t>(v));
  return s;
}

Scalar Float(PrimitiveType t, double v) {
  Scalar s;
  s.f = v;
  return RoundTo(t, s);
}

Scalar Pred(bool b) {
  Scalar s;
  s.i = b;
  return s;
}

double UnsignedValue(int64_t i) { return static_cast<double>(static_cast<uint64_t>(i)); }

absl::Status Unsupported(Opcode opcode, PrimitiveType type) {
  return absl::UnimplementedError(absl::StrCat("not supported: ", std::string(OpcodeName(opcode)),
                                               " on ", std::string(PrimitiveTypeName(type))));
}

int64_t IntPow(PrimitiveType t, int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  uint64_t e = static_cast<uint64_t>(exponent);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return FromBits(t, result);
}

}  // namespace

Scalar LoadScalar(const Literal& literal, int64_t index) {
  const PrimitiveType t = literal.shape().element_type();
  Scalar s;
  if (IsFloat(t)) {
    s.f = literal.GetAsDouble(index);
  } else if (IsComplex(t)) {
    s.c = literal.GetAsComplex(index);
  } else {
    s.i = literal.GetAsInt64(index);
  }
  return s;
}

void StoreScalar(Literal& literal, int64_t index, const Scalar& value) {
  const PrimitiveType t = literal.shape().element_type();
  if (IsFloat(t)) {
    literal.SetFromDouble(index, value.f);
  } else if (IsComplex(t)) {
    literal.SetFromComplex(index, value.c);
  } else {
    literal.SetFromInt64(index, value.i);
  }
}

Scalar RoundTo(PrimitiveType t, Scalar v) {
  switch (t) {
    case PrimitiveType::kF64:
      return v;
    case PrimitiveType::kF32:
      v.f = static_cast<double>(static_cast<float>(v.f));
      return v;
    case PrimitiveType::kC64:
      v.c = std::complex<double>(static_cast<float>(v.c.real()), static_cast<float>(v.c.imag()));
      return v;
    case PrimitiveType::kC128:
      return v;
    case PrimitiveType::kPred:
      v.i = v.i != 0;
      return v;
    default:
      if (IsFloat(t)) {
        v.f = DecodeNarrowFloat(t, EncodeNarrowFloat(t, v.f));
      } else if (IsInteger(t)) {
        v.i = FromBits(t, static_cast<uint64_t>(v.i));
      }
      return v;
  }
}

Scalar ConvertScalar(PrimitiveType from, PrimitiveType to, const Scalar& x) {
  // Read the source as a real (or complex) value.
  double real;
  std::complex<double> complex;
  if (IsFloat(from)) {
    real = x.f;
  } else if (IsComplex(from)) {
    complex = x.c;
    real = x.c.real();
  } else if (IsUnsignedInteger(from) || from == PrimitiveType::kPred) {
    real = UnsignedValue(x.i);
  } else {
    real = static_cast<double>(x.i);
  }
  if (!IsComplex(from)) complex = {real, 0.0};
  Scalar out;
  if (IsFloat(to)) return Float(to, real);
  if (IsComplex(to)) {
    out.c = complex;
    return RoundTo(to, out);
  }
  if (to == PrimitiveType::kPred) return Pred(IsFloat(from) || IsComplex(from) ? real != 0 : x.i != 0);
  if (IsInteger(from) || from == PrimitiveType::kPred) return Int(to, x.i);
  // Float to integer: truncate, saturate, NaN to 0 (XLA's semantics).
  if (std::isnan(real)) return Int(to, 0);
  const int w = Width(to);
  if (IsUnsignedInteger(to)) {
    const double max = std::ldexp(1.0, w) - 1;
    if (real <= 0) return Int(to, 0);
    if (real >= max) return Int(to, static_cast<int64_t>(Mask(to)));
    return Int(to, static_cast<int64_t>(static_cast<uint64_t>(std::trunc(real))));
  }
  const double limit = std::ldexp(1.0, w - 1);
  if (real >= limit) return Int(to, static_cast<int64_t>((uint64_t{1} << (w - 1)) - 1));
  if (real < -limit) return Int(to, -static_cast<int64_t>((uint64_t{1} << (w - 1)) - 1) - 1);
  return Int(to, static_cast<int64_t>(std::trunc(real)));
}

absl::StatusOr<Scalar> ApplyUnary(Opcode op, PrimitiveType t, PrimitiveType out,
                                  const Scalar& x) {
  if (op == Opcode::kConvert) return ConvertScalar(t, out, x);
  if (op == Opcode::kCopy) return x;
  if (IsComplex(t)) {
    const std::complex<double> c = x.c;
    Scalar r;
    switch (op) {
      case Opcode::kAbs: return Float(out, std::abs(c));
      case Opcode::kReal: return Float(out, c.real());
      case Opcode::kImag: return Float(out, c.imag());
      case Opcode::kNegate: r.c = -c; break;
      case Opcode::kExp: r.c = std::exp(c); break;
      case Opcode::kLog: r.c = std::log(c); break;
      case Opcode::kSqrt: r.c = std::sqrt(c); break;
      case Opcode::kRsqrt: r.c = 1.0 / std::sqrt(c); break;
      case Opcode::kTanh: r.c = std::tanh(c); break;
      case Opcode::kSin: r.c = std::sin(c); break;
      case Opcode::kCos: r.c = std::cos(c); break;
      case Opcode::kSign: r.c = c == 0.0 ? c : c / std::abs(c); break;
      case Opcode::kExpm1: r.c = std::exp(c) - 1.0; break;
      case Opcode::kLog1p: r.c = std::log(1.0 + c); break;
      case Opcode::kIsFinite:
        return Pred(std::isfinite(c.real()) && std::isfinite(c.imag()));
      default: return Unsupported(op, t);
    }
    return RoundTo(out, r);
  }
  if (IsFloat(t)) {
    if (op == Opcode::kIsFinite) return Pred(std::isfinite(x.f));
    Scalar r;
    if (WithFloatUnary(op, [&](auto fn) { r = Float(out, fn(x.f)); })) return r;
    return Unsupported(op, t);
  }
  // Integers and pred.
  const int64_t v = x.i;
  const uint64_t bits = Bits(t, v);
  switch (op) {
    case Opcode::kNot:
      return t == PrimitiveType::kPred ? Pred(v == 0) : Int(t, static_cast<int64_t>(~bits));
    case Opcode::kNegate: return Int(t, static_cast<int64_t>(0 - bits));
    case Opcode::kAbs: return Int(t, v < 0 ? static_cast<int64_t>(0 - bits) : v);
    case Opcode::kSign: return Int(t, v > 0 ? 1 : v < 0 ? -1 : 0);
    case Opcode::kPopulationCount: return Int(t, std::popcount(bits));
    case Opcode::kClz: return Int(t, std::countl_zero(bits) - (64 - Width(t)));
    case Opcode::kIsFinite: return Pred(true);
    default: return Unsupported(op, t);
  }
}

bool Compare(ComparisonDirection d, ComparisonType ct, PrimitiveType t, const Scalar& x,
             const Scalar& y) {
  auto order = [&](auto a, auto b) {
    switch (d) {
      case ComparisonDirection::kEq: return a == b;
      case ComparisonDirection::kNe: return a != b;
      case ComparisonDirection::kGe: return a >= b;
      case ComparisonDirection::kGt: return a > b;
      case ComparisonDirection::kLe: return a <= b;
      case ComparisonDirection::kLt: return a < b;
    }
    return false;
  };
  if (IsComplex(t)) {
    return d == ComparisonDirection::kNe ? x.c != y.c : d == ComparisonDirection::kEq && x.c == y.c;
  }
  if (IsFloat(t)) {
    bool result = false;
    WithFloatCompare(d, ct, [&](auto fn) { result = fn(x.f, y.f); });
    return result;
  }
  const bool is_unsigned = ct == ComparisonType::kUnsigned ||
                           (ct != ComparisonType::kSigned &&
                            (IsUnsignedInteger(t) || t == PrimitiveType::kPred));
  if (is_unsigned) return order(Bits(t, x.i), Bits(t, y.i));
  return order(x.i, y.i);
}

absl::StatusOr<Scalar> ApplyBinary(Opcode op, PrimitiveType t, PrimitiveType out,
                                   const Scalar& x, const Scalar& y) {
  if (IsComplex(t)) {
    Scalar r;
    switch (op) {
      case Opcode::kAdd: r.c = x.c + y.c; break;
      case Opcode::kSubtract: r.c = x.c - y.c; break;
      case Opcode::kMultiply: r.c = x.c * y.c; break;
      case Opcode::kDivide: r.c = x.c / y.c; break;
      case Opcode::kPower: r.c = std::pow(x.c, y.c); break;
      default: return Unsupported(op, t);
    }
    return RoundTo(out, r);
  }
  if (IsFloat(t)) {
    if (op == Opcode::kComplex) {
      Scalar r;
      r.c = {x.f, y.f};
      return RoundTo(out, r);
    }
    Scalar r;
    if (WithFloatBinary(op, [&](auto fn) { r = Float(out, fn(x.f, y.f)); })) return r;
    return Unsupported(op, t);
  }
  const int64_t a = x.i, b = y.i;
  const uint64_t ua = Bits(t, a), ub = Bits(t, b);
  const bool is_signed = IsSignedInteger(t);
  const int w = Width(t);
  switch (op) {
    case Opcode::kAdd: return Int(t, static_cast<int64_t>(ua + ub));
    case Opcode::kSubtract: return Int(t, static_cast<int64_t>(ua - ub));
    case Opcode::kMultiply: return Int(t, static_cast<int64_t>(ua * ub));
    case Opcode::kDivide:
      if (b == 0) return Int(t, -1);  // all ones: -1 signed, max unsigned
      if (is_signed) {
        if (b == -1) return Int(t, static_cast<int64_t>(0 - ua));  // MIN / -1 wraps to MIN
        return Int(t, a / b);
      }
      return Int(t, static_cast<int64_t>(ua / ub));
    case Opcode::kRemainder:
      if (b == 0) return Int(t, a);
      if (is_signed) return Int(t, b == -1 ? 0 : a % b);
      return Int(t, static_cast<int64_t>(ua % ub));
    case Opcode::kMaximum:
      return is_signed ? Int(t, a > b ? a : b) : Int(t, static_cast<int64_t>(ua > ub ? ua : ub));
    case Opcode::kMinimum:
      return is_signed ? Int(t, a < b ? a : b) : Int(t, static_cast<int64_t>(ua < ub ? ua : ub));
    case Opcode::kAnd: return Int(t, static_cast<int64_t>(ua & ub));
    case Opcode::kOr: return Int(t, static_cast<int64_t>(ua | ub));
    case Opcode::kXor: return Int(t, static_cast<int64_t>(ua ^ ub));
    case Opcode::kPower: return Int(t, IntPow(t, a, b));
    case Opcode::kShiftLeft:
      return Int(t, ub >= static_cast<uint64_t>(w) ? 0 : static_cast<int64_t>(ua << ub));
    case Opcode::kShiftRightLogical:
      return Int(t, ub >= static_cast<uint64_t>(w) ? 0 : static_cast<int64_t>(ua >> ub));
    case Opcode::kShiftRightArithmetic: {
      const int64_t sa = FromBits(t, ua);
      if (!is_signed) {
        // XLA shifts unsigned values arithmetically by their sign bit too.
        const int64_t signed_value = (ua >> (w - 1)) & 1 ? static_cast<int64_t>(ua | ~Mask(t)) : static_cast<int64_t>(ua);
        return Int(t, ub >= static_cast<uint64_t>(w) ? (signed_value < 0 ? -1 : 0)
                                                     : signed_value >> ub);
      }
      return Int(t, ub >= static_cast<uint64_t>(w) ? (sa < 0 ? -1 : 0) : sa >> ub);
    }
    case Opcode::kMulhi: {
      if (is_signed) {
        __int128 p = static_cast<__int128>(a) * static_cast<__int128>(b);
        return Int(t, static_cast<int64_t>(p >> w));
      }
      unsigned __int128 p = static_cast<unsigned __int128>(ua) * ub;
      return Int(t, static_cast<int64_t>(static_cast<uint64_t>(p >> w)));
    }
    default: return Unsupported(op, t);
  }
}

}  // namespace hlogym

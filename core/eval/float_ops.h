// The meaning of each real-float elementwise opcode, written once as a
// double -> double function. The scalar path (ApplyUnary/ApplyBinary) and the
// array kernels both take their functions from here; results are computed in
// double and then rounded to the result type.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/ir/attributes.h"
#include "core/ir/opcode.h"

namespace hlogym {

// XLA's maximum/minimum: NaN if either operand is NaN; +0 is above -0.
inline double FloatMaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : (b > a ? b : (std::signbit(a) ? b : a));
}
inline double FloatMinimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : (b < a ? b : (std::signbit(a) ? a : b));
}

// Calls f(fn) with fn: double -> double for a float unary opcode (other than
// is-finite, convert and copy); returns false if `op` is not one.
template <typename F>
bool WithFloatUnary(Opcode op, F&& f) {
  switch (op) {
    case Opcode::kAbs: f([](double v) { return std::fabs(v); }); return true;
    case Opcode::kNegate: f([](double v) { return -v; }); return true;
    case Opcode::kSign:
      f([](double v) { return std::isnan(v) ? v : v > 0 ? 1.0 : v < 0 ? -1.0 : v; });
      return true;
    case Opcode::kExp: f([](double v) { return std::exp(v); }); return true;
    case Opcode::kExpm1: f([](double v) { return std::expm1(v); }); return true;
    case Opcode::kLog: f([](double v) { return std::log(v); }); return true;
    case Opcode::kLog1p: f([](double v) { return std::log1p(v); }); return true;
    case Opcode::kLogistic: f([](double v) { return 1.0 / (1.0 + std::exp(-v)); }); return true;
    case Opcode::kTanh: f([](double v) { return std::tanh(v); }); return true;
    case Opcode::kSqrt: f([](double v) { return std::sqrt(v); }); return true;
    case Opcode::kRsqrt: f([](double v) { return 1.0 / std::sqrt(v); }); return true;
    case Opcode::kCbrt: f([](double v) { return std::cbrt(v); }); return true;
    case Opcode::kSin: f([](double v) { return std::sin(v); }); return true;
    case Opcode::kCos: f([](double v) { return std::cos(v); }); return true;
    case Opcode::kTan: f([](double v) { return std::tan(v); }); return true;
    case Opcode::kErf: f([](double v) { return std::erf(v); }); return true;
    case Opcode::kAtan: f([](double v) { return std::atan(v); }); return true;
    case Opcode::kAcos: f([](double v) { return std::acos(v); }); return true;
    case Opcode::kAsin: f([](double v) { return std::asin(v); }); return true;
    case Opcode::kAcosh: f([](double v) { return std::acosh(v); }); return true;
    case Opcode::kAsinh: f([](double v) { return std::asinh(v); }); return true;
    case Opcode::kAtanh: f([](double v) { return std::atanh(v); }); return true;
    case Opcode::kCosh: f([](double v) { return std::cosh(v); }); return true;
    case Opcode::kSinh: f([](double v) { return std::sinh(v); }); return true;
    case Opcode::kFloor: f([](double v) { return std::floor(v); }); return true;
    case Opcode::kCeil: f([](double v) { return std::ceil(v); }); return true;
    case Opcode::kRoundNearestAfz: f([](double v) { return std::round(v); }); return true;
    case Opcode::kRoundNearestEven: f([](double v) { return std::nearbyint(v); }); return true;
    case Opcode::kReal: f([](double v) { return v; }); return true;
    case Opcode::kImag: f([](double) { return 0.0; }); return true;
    default: return false;
  }
}

// Calls f(fn) with fn: (double, double) -> double for a float binary opcode
// (other than compare and complex); returns false if `op` is not one.
template <typename F>
bool WithFloatBinary(Opcode op, F&& f) {
  switch (op) {
    case Opcode::kAdd: f([](double a, double b) { return a + b; }); return true;
    case Opcode::kSubtract: f([](double a, double b) { return a - b; }); return true;
    case Opcode::kMultiply: f([](double a, double b) { return a * b; }); return true;
    case Opcode::kDivide: f([](double a, double b) { return a / b; }); return true;
    case Opcode::kMaximum: f([](double a, double b) { return FloatMaximum(a, b); }); return true;
    case Opcode::kMinimum: f([](double a, double b) { return FloatMinimum(a, b); }); return true;
    case Opcode::kPower: f([](double a, double b) { return std::pow(a, b); }); return true;
    case Opcode::kRemainder: f([](double a, double b) { return std::fmod(a, b); }); return true;
    case Opcode::kAtan2: f([](double a, double b) { return std::atan2(a, b); }); return true;
    default: return false;
  }
}

// Total order key: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
inline int64_t TotalOrderKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits < 0 ? std::numeric_limits<int64_t>::min() - bits - 1 : bits;
}

// Calls f(fn) with fn: (double, double) -> bool, the float comparison of
// `direction` (IEEE unless `type` is TOTALORDER).
template <typename F>
void WithFloatCompare(ComparisonDirection direction, ComparisonType type, F&& f) {
  if (type == ComparisonType::kTotalOrder) {
    switch (direction) {
      case ComparisonDirection::kEq:
        return f([](double a, double b) { return TotalOrderKey(a) == TotalOrderKey(b); });
      case ComparisonDirection::kNe:
        return f([](double a, double b) { return TotalOrderKey(a) != TotalOrderKey(b); });
      case ComparisonDirection::kGe:
        return f([](double a, double b) { return TotalOrderKey(a) >= TotalOrderKey(b); });
      case ComparisonDirection::kGt:
        return f([](double a, double b) { return TotalOrderKey(a) > TotalOrderKey(b); });
      case ComparisonDirection::kLe:
        return f([](double a, double b) { return TotalOrderKey(a) <= TotalOrderKey(b); });
      case ComparisonDirection::kLt:
        return f([](double a, double b) { return TotalOrderKey(a) < TotalOrderKey(b); });
    }
  }
  switch (direction) {
    case ComparisonDirection::kEq: return f([](double a, double b) { return a == b; });
    case ComparisonDirection::kNe: return f([](double a, double b) { return a != b; });
    case ComparisonDirection::kGe: return f([](double a, double b) { return a >= b; });
    case ComparisonDirection::kGt: return f([](double a, double b) { return a > b; });
    case ComparisonDirection::kLe: return f([](double a, double b) { return a <= b; });
    case ComparisonDirection::kLt: return f([](double a, double b) { return a < b; });
  }
}

}  // namespace hlogym

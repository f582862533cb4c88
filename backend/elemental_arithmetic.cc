// Elementwise arithmetic of the elemental emitter, with the reference
// interpreter's semantics (core/eval/scalar.cc): NaN-propagating max/min,
// XLA's integer division and shift rules, saturating float->int converts.
#include <string>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "core/base/status_macros.h"
#include "llvm/IR/Intrinsics.h"

namespace hlogym {
namespace {

absl::Status Unsupported(Opcode opcode, PrimitiveType type) {
  return absl::UnimplementedError(absl::StrCat("not supported: ", std::string(OpcodeName(opcode)),
                                               " on ", std::string(PrimitiveTypeName(type))));
}

bool IsNarrowFloat(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16;
}

}  // namespace

llvm::Value* ElementalEmitter::FloatToBF16Bits(llvm::Value* x) {
  // Round to nearest even on the f32 bits; NaN becomes the quiet NaN with
  // its sign (as core/ir/float_formats does).
  llvm::Value* bits = b_->CreateBitCast(x, b_->getInt32Ty());
  llvm::Value* lsb = b_->CreateAnd(b_->CreateLShr(bits, 16), 1);
  llvm::Value* rounded = b_->CreateAdd(bits, b_->CreateAdd(lsb, b_->getInt32(0x7FFF)));
  llvm::Value* result = b_->CreateLShr(rounded, 16);
  llvm::Value* nan_bits =
      b_->CreateOr(b_->CreateAnd(b_->CreateLShr(bits, 16), 0x8000), b_->getInt32(0x7FC0));
  llvm::Value* is_nan = b_->CreateFCmpUNO(x, x);
  return b_->CreateTrunc(b_->CreateSelect(is_nan, nan_bits, result), b_->getInt16Ty());
}

llvm::Value* ElementalEmitter::DoubleToFloatRoundToOdd(llvm::Value* x) {
  // Rounding to odd f32 first and then to a narrower format gives the
  // correctly rounded narrow value (no double rounding).
  llvm::Value* f = b_->CreateFPTrunc(x, b_->getFloatTy());
  llvm::Value* back = b_->CreateFPExt(f, b_->getDoubleTy());
  llvm::Value* bits = b_->CreateBitCast(f, b_->getInt32Ty());
  llvm::Value* inexact = b_->CreateFCmpONE(back, x);
  llvm::Value* away = b_->CreateFCmpOGT(
      b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
      b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  llvm::Value* truncated = b_->CreateSelect(away, b_->CreateSub(bits, b_->getInt32(1)), bits);
  llvm::Value* odd = b_->CreateSelect(inexact, b_->CreateOr(truncated, 1), bits);
  return b_->CreateBitCast(odd, b_->getFloatTy());
}

llvm::Value* ElementalEmitter::RoundToType(PrimitiveType type, llvm::Value* x) {
  if (!IsNarrowFloat(type)) return x;
  return FromStorage(type, ToStorage(type, x));
}

llvm::Value* ElementalEmitter::EmitConvert(PrimitiveType from, PrimitiveType to, llvm::Value* x) {
  llvm::Type* out = ValueType(to);
  const bool from_float = IsFloat(from);
  if (from == to) return x;
  if (IsFloat(to)) {
    if (from_float) {
      if (from == PrimitiveType::kF64 && IsNarrowFloat(to)) {
        return RoundToType(to, DoubleToFloatRoundToOdd(x));
      }
      llvm::Value* v = b_->CreateFPCast(x, out);
      return RoundToType(to, v);
    }
    const bool is_signed = IsSignedInteger(from);
    if (IsNarrowFloat(to)) {
      llvm::Value* d = is_signed ? b_->CreateSIToFP(x, b_->getDoubleTy())
                                 : b_->CreateUIToFP(x, b_->getDoubleTy());
      return RoundToType(to, DoubleToFloatRoundToOdd(d));
    }
    return is_signed ? b_->CreateSIToFP(x, out) : b_->CreateUIToFP(x, out);
  }
  if (to == PrimitiveType::kPred) {
    if (from_float) return b_->CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b_->CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (!from_float) return b_->CreateIntCast(x, out, IsSignedInteger(from));
  // Float to integer: truncate toward zero, saturate, NaN -> 0.
  const int w = BitWidth(to);
  const bool to_signed = IsSignedInteger(to);
  if (w >= 8) {
    return b_->CreateIntrinsic(
        to_signed ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat, {out, x->getType()},
        {x});
  }
  llvm::Value* wide = b_->CreateIntrinsic(
      to_signed ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
      {b_->getInt32Ty(), x->getType()}, {x});
  const int64_t hi = to_signed ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
  const int64_t lo = to_signed ? -(int64_t{1} << (w - 1)) : 0;
  wide = b_->CreateSelect(b_->CreateICmpSGT(wide, b_->getInt32(hi)), b_->getInt32(hi), wide);
  wide = b_->CreateSelect(b_->CreateICmpSLT(wide, b_->getInt32(lo)), b_->getInt32(lo), wide);
  return b_->CreateTrunc(wide, out);
}

llvm::Value* ElementalEmitter::EmitBitcastConvert(PrimitiveType from, PrimitiveType to,
                                                  llvm::Value* x) {
  llvm::Value* stored = ToStorage(from, x);
  return FromStorage(to, b_->CreateBitCast(stored, StorageType(to)));
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitUnary(const Instruction& instruction,
                                                         llvm::Value* x) {
  const Opcode op = instruction.opcode();
  const PrimitiveType in = instruction.operand(0)->shape().element_type();
  const PrimitiveType out = instruction.shape().element_type();
  if (op == Opcode::kConvert) return EmitConvert(in, out, x);
  if (op == Opcode::kCopy) return x;
  if (op == Opcode::kBitcastConvert) {
    if (BitWidth(in) != BitWidth(out)) return Unsupported(op, in);
    return EmitBitcastConvert(in, out, x);
  }
  if (IsFloat(in)) {
    if (op == Opcode::kIsFinite) {
      llvm::Value* a = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      return b_->CreateFCmpOLT(a, llvm::ConstantFP::getInfinity(x->getType()));
    }
    return EmitFloatUnary(op, out, x);
  }
  return EmitIntUnary(op, in, x);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitFloatUnary(Opcode op, PrimitiveType out,
                                                              llvm::Value* x) {
  llvm::Type* t = x->getType();
  auto math = [&](absl::string_view name) { return EmitMathCall(name, {x}, t); };
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_->CreateUnaryIntrinsic(id, x); };
  llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
  llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
  llvm::Value* v = nullptr;
  if (t->isFloatTy() && InlineFloatMath()) {
    v = EmitInlineFloatMath(op, x, out == PrimitiveType::kF32);
    if (v != nullptr) return RoundToType(out, v);
  }
  switch (op) {
    case Opcode::kAbs: v = intrinsic(llvm::Intrinsic::fabs); break;
    case Opcode::kNegate: v = b_->CreateFNeg(x); break;
    case Opcode::kSign: {
      // NaN and +-0 stay; otherwise +-1.
      llvm::Value* s = b_->CreateSelect(b_->CreateFCmpOGT(x, zero), one,
                                        b_->CreateSelect(b_->CreateFCmpOLT(x, zero),
                                                         llvm::ConstantFP::get(t, -1.0), x));
      v = s;
      break;
    }
    case Opcode::kExp: v = math("exp"); break;
    case Opcode::kExpm1: v = math("expm1"); break;
    case Opcode::kLog: v = math("log"); break;
    case Opcode::kLog1p: v = math("log1p"); break;
    case Opcode::kLogistic:
      v = b_->CreateFDiv(one, b_->CreateFAdd(one, EmitMathCall("exp", {b_->CreateFNeg(x)}, t)));
      break;
    case Opcode::kTanh: v = math("tanh"); break;
    case Opcode::kSqrt: v = intrinsic(llvm::Intrinsic::sqrt); break;
    case Opcode::kRsqrt:
      if (t->isFloatTy()) {
        // In double and rounded once, as the interpreter does: x - mean
        // times rsqrt(var) cancels, and a second rounding shows there.
        llvm::Value* d = b_->CreateFPExt(x, b_->getDoubleTy());
        d = b_->CreateFDiv(llvm::ConstantFP::get(d->getType(), 1.0),
                           b_->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
        v = b_->CreateFPTrunc(d, t);
      } else {
        v = b_->CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt));
      }
      break;
    case Opcode::kCbrt: v = math("cbrt"); break;
    case Opcode::kSin: v = math("sin"); break;
    case Opcode::kCos: v = math("cos"); break;
    case Opcode::kTan: v = math("tan"); break;
    case Opcode::kErf: v = math("erf"); break;
    case Opcode::kAtan: v = math("atan"); break;
    case Opcode::kAcos: v = math("acos"); break;
    case Opcode::kAsin: v = math("asin"); break;
    case Opcode::kAcosh: v = math("acosh"); break;
    case Opcode::kAsinh: v = math("asinh"); break;
    case Opcode::kAtanh: v = math("atanh"); break;
    case Opcode::kCosh: v = math("cosh"); break;
    case Opcode::kSinh: v = math("sinh"); break;
    case Opcode::kFloor: v = intrinsic(llvm::Intrinsic::floor); break;
    case Opcode::kCeil: v = intrinsic(llvm::Intrinsic::ceil); break;
    case Opcode::kRoundNearestAfz: v = intrinsic(llvm::Intrinsic::round); break;
    case Opcode::kRoundNearestEven: v = intrinsic(llvm::Intrinsic::roundeven); break;
    default: return Unsupported(op, out);
  }
  return RoundToType(out, v);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitIntUnary(Opcode op, PrimitiveType type,
                                                            llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  const bool is_signed = IsSignedInteger(type);
  switch (op) {
    case Opcode::kNot: return b_->CreateNot(x);
    case Opcode::kNegate: return b_->CreateNeg(x);
    case Opcode::kAbs:
      return is_signed ? b_->CreateSelect(b_->CreateICmpSLT(x, zero), b_->CreateNeg(x), x) : x;
    case Opcode::kSign:
      if (!is_signed) return b_->CreateZExt(b_->CreateICmpNE(x, zero), t);
      return b_->CreateSelect(b_->CreateICmpSGT(x, zero), llvm::ConstantInt::get(t, 1),
                              b_->CreateSelect(b_->CreateICmpSLT(x, zero),
                                               llvm::ConstantInt::getSigned(t, -1), zero));
    case Opcode::kPopulationCount: return b_->CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
    case Opcode::kClz:
      return b_->CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b_->getFalse());
    case Opcode::kIsFinite: return b_->getTrue();
    default: return Unsupported(op, type);
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitBinary(const Instruction& instruction,
                                                          llvm::Value* x, llvm::Value* y) {
  const Opcode op = instruction.opcode();
  const PrimitiveType in = instruction.operand(0)->shape().element_type();
  if (op == Opcode::kCompare) return EmitCompare(instruction, x, y);
  if (IsFloat(in)) return EmitFloatBinary(op, instruction.shape().element_type(), x, y);
  return EmitIntBinary(op, in, x, y);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitFloatBinary(Opcode op, PrimitiveType out,
                                                               llvm::Value* x, llvm::Value* y) {
  llvm::Value* v = nullptr;
  switch (op) {
    case Opcode::kAdd: v = b_->CreateFAdd(x, y); break;
    case Opcode::kSubtract: v = b_->CreateFSub(x, y); break;
    case Opcode::kMultiply: v = b_->CreateFMul(x, y); break;
    case Opcode::kDivide: v = b_->CreateFDiv(x, y); break;
    case Opcode::kRemainder: v = b_->CreateFRem(x, y); break;
    case Opcode::kPower: v = EmitMathCall("pow", {x, y}, x->getType()); break;
    case Opcode::kAtan2: v = EmitMathCall("atan2", {x, y}, x->getType()); break;
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      // NaN if either is; -0 < +0; otherwise the larger (smaller).
      const bool max = op == Opcode::kMaximum;
      llvm::Value* x_wins = max ? b_->CreateFCmpOGT(x, y) : b_->CreateFCmpOLT(x, y);
      llvm::Value* y_wins = max ? b_->CreateFCmpOGT(y, x) : b_->CreateFCmpOLT(y, x);
      llvm::Value* x_bits =
          b_->CreateBitCast(x, b_->getIntNTy(x->getType()->getPrimitiveSizeInBits()));
      llvm::Value* x_negative =
          b_->CreateICmpSLT(x_bits, llvm::ConstantInt::get(x_bits->getType(), 0));
      // Equal values (+-0): max takes y when x is -0, min takes x then.
      llvm::Value* tie =
          max ? b_->CreateSelect(x_negative, y, x) : b_->CreateSelect(x_negative, x, y);
      llvm::Value* r = b_->CreateSelect(x_wins, x, b_->CreateSelect(y_wins, y, tie));
      llvm::Value* any_nan = b_->CreateFCmpUNO(x, y);
      v = b_->CreateSelect(any_nan, llvm::ConstantFP::getNaN(x->getType()), r);
      break;
    }
    default: return Unsupported(op, out);
  }
  return RoundToType(out, v);
}

llvm::Value* ElementalEmitter::EmitIntPow(PrimitiveType type, llvm::Value* base,
                                          llvm::Value* exponent) {
  // Square-and-multiply over every exponent bit (unrolled: the width is
  // small), then XLA's rules for negative exponents.
  llvm::Type* t = base->getType();
  const unsigned w = t->getIntegerBitWidth();
  llvm::Value* result = llvm::ConstantInt::get(t, 1);
  llvm::Value* b = base;
  llvm::Value* e = exponent;
  for (unsigned i = 0; i < w; ++i) {
    llvm::Value* bit = b_->CreateTrunc(e, b_->getInt1Ty());
    result = b_->CreateSelect(bit, b_->CreateMul(result, b), result);
    b = b_->CreateMul(b, b);
    e = b_->CreateLShr(e, 1);
  }
  if (!IsSignedInteger(type)) return result;
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* minus_one = llvm::ConstantInt::getSigned(t, -1);
  llvm::Value* odd = b_->CreateTrunc(exponent, b_->getInt1Ty());
  llvm::Value* negative_result = b_->CreateSelect(
      b_->CreateICmpEQ(base, one), one,
      b_->CreateSelect(b_->CreateICmpEQ(base, minus_one), b_->CreateSelect(odd, minus_one, one),
                       zero));
  return b_->CreateSelect(b_->CreateICmpSLT(exponent, zero), negative_result, result);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitIntBinary(Opcode op, PrimitiveType type,
                                                             llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  const unsigned w = t->getIntegerBitWidth();
  const bool is_signed = IsSignedInteger(type);
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* all_ones = llvm::ConstantInt::getSigned(t, -1);
  switch (op) {
    case Opcode::kAdd: return b_->CreateAdd(x, y);
    case Opcode::kSubtract: return b_->CreateSub(x, y);
    case Opcode::kMultiply: return b_->CreateMul(x, y);
    case Opcode::kAnd: return b_->CreateAnd(x, y);
    case Opcode::kOr: return b_->CreateOr(x, y);
    case Opcode::kXor: return b_->CreateXor(x, y);
    case Opcode::kMaximum:
      return b_->CreateSelect(is_signed ? b_->CreateICmpSGT(x, y) : b_->CreateICmpUGT(x, y), x, y);
    case Opcode::kMinimum:
      return b_->CreateSelect(is_signed ? b_->CreateICmpSLT(x, y) : b_->CreateICmpULT(x, y), x, y);
    case Opcode::kDivide:
    case Opcode::kRemainder: {
      // Division by zero and MIN / -1 never reach the hardware divide.
      llvm::Value* by_zero = b_->CreateICmpEQ(y, zero);
      llvm::Value* by_minus_one = is_signed ? b_->CreateICmpEQ(y, all_ones) : b_->getFalse();
      llvm::Value* safe = b_->CreateSelect(b_->CreateOr(by_zero, by_minus_one), one, y);
      if (op == Opcode::kDivide) {
        llvm::Value* q = is_signed ? b_->CreateSDiv(x, safe) : b_->CreateUDiv(x, safe);
        q = b_->CreateSelect(by_minus_one, b_->CreateNeg(x), q);
        return b_->CreateSelect(by_zero, all_ones, q);
      }
      llvm::Value* r = is_signed ? b_->CreateSRem(x, safe) : b_->CreateURem(x, safe);
      r = b_->CreateSelect(by_minus_one, zero, r);
      return b_->CreateSelect(by_zero, x, r);
    }
    case Opcode::kPower: return EmitIntPow(type, x, y);
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: {
      llvm::Value* width = llvm::ConstantInt::get(t, w);
      llvm::Value* too_far = b_->CreateICmpUGE(y, width);
      llvm::Value* amount = b_->CreateSelect(too_far, llvm::ConstantInt::get(t, w - 1), y);
      if (op == Opcode::kShiftRightArithmetic) return b_->CreateAShr(x, amount);
      llvm::Value* shifted =
          op == Opcode::kShiftLeft ? b_->CreateShl(x, amount) : b_->CreateLShr(x, amount);
      return b_->CreateSelect(too_far, zero, shifted);
    }
    case Opcode::kMulhi: {
      llvm::Type* wide = b_->getIntNTy(2 * w);
      llvm::Value* p = b_->CreateMul(b_->CreateIntCast(x, wide, is_signed),
                                     b_->CreateIntCast(y, wide, is_signed));
      return b_->CreateTrunc(b_->CreateLShr(p, w), t);
    }
    default: return Unsupported(op, type);
  }
}

llvm::Value* ElementalEmitter::EmitCompare(const Instruction& instruction, llvm::Value* x,
                                           llvm::Value* y) {
  const PrimitiveType type = instruction.operand(0)->shape().element_type();
  const CompareAttrs& attrs = instruction.attrs<CompareAttrs>();
  const ComparisonDirection d = attrs.direction;
  using P = llvm::CmpInst::Predicate;
  if (IsFloat(type) && attrs.type != ComparisonType::kTotalOrder) {
    P p = P::FCMP_OEQ;
    switch (d) {
      case ComparisonDirection::kEq: p = P::FCMP_OEQ; break;
      case ComparisonDirection::kNe: p = P::FCMP_UNE; break;
      case ComparisonDirection::kGe: p = P::FCMP_OGE; break;
      case ComparisonDirection::kGt: p = P::FCMP_OGT; break;
      case ComparisonDirection::kLe: p = P::FCMP_OLE; break;
      case ComparisonDirection::kLt: p = P::FCMP_OLT; break;
    }
    return b_->CreateFCmp(p, x, y);
  }
  bool is_unsigned;
  if (IsFloat(type)) {
    // Total order: flip the magnitude bits of negatives, compare signed.
    llvm::Type* it = b_->getIntNTy(x->getType()->getPrimitiveSizeInBits());
    const unsigned w = it->getIntegerBitWidth();
    auto key = [&](llvm::Value* v) {
      llvm::Value* bits = b_->CreateBitCast(v, it);
      llvm::Value* flip = b_->CreateLShr(b_->CreateAShr(bits, w - 1), 1);
      return b_->CreateXor(bits, flip);
    };
    x = key(x);
    y = key(y);
    is_unsigned = false;
  } else {
    is_unsigned = attrs.type == ComparisonType::kUnsigned ||
                  (attrs.type != ComparisonType::kSigned &&
                   (IsUnsignedInteger(type) || type == PrimitiveType::kPred));
  }
  P p = P::ICMP_EQ;
  switch (d) {
    case ComparisonDirection::kEq: p = P::ICMP_EQ; break;
    case ComparisonDirection::kNe: p = P::ICMP_NE; break;
    case ComparisonDirection::kGe: p = is_unsigned ? P::ICMP_UGE : P::ICMP_SGE; break;
    case ComparisonDirection::kGt: p = is_unsigned ? P::ICMP_UGT : P::ICMP_SGT; break;
    case ComparisonDirection::kLe: p = is_unsigned ? P::ICMP_ULE : P::ICMP_SLE; break;
    case ComparisonDirection::kLt: p = is_unsigned ? P::ICMP_ULT : P::ICMP_SLT; break;
  }
  return b_->CreateICmp(p, x, y);
}

}  // namespace hlogym

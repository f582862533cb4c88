// Inline, vectorizable exp / tanh / logistic for f32 (and f16/bf16) values,
// so loops calling them vectorize (a libm call per element does not). f32
// exp is computed in single precision (EmitExpF32: within about an ulp);
// the rest in double with a Cody-Waite reduction and a Taylor polynomial,
// then rounded once, so they agree with the interpreter's double-precision
// libm (rounded to the type) except in rare near-halfway cases.
#include <vector>

#include "backend/elemental_emitter.h"
#include "llvm/IR/Intrinsics.h"

namespace hlogym {
namespace {

// p * 2^k for an integral float k (f32 or f64, as p), in two factors so that
// k may go below the least normal exponent (an exp's k reaches -150 in f32):
// each factor is built from its exponent bits.
llvm::Value* ScaleByPowerOfTwo(llvm::IRBuilder<>& b, llvm::Value* p, llvm::Value* k) {
  const bool f64 = p->getType()->getScalarType()->isDoubleTy();
  llvm::Type* bits = f64 ? b.getInt64Ty() : b.getInt32Ty();
  llvm::Value* ki = b.CreateFPToSI(k, bits);
  llvm::Value* k1 = b.CreateAShr(ki, 1);
  llvm::Value* k2 = b.CreateSub(ki, k1);
  auto pow2 = [&](llvm::Value* e) {
    llvm::Value* biased = b.CreateAdd(e, llvm::ConstantInt::get(bits, f64 ? 1023 : 127));
    return b.CreateBitCast(b.CreateShl(biased, f64 ? 52 : 23), p->getType());
  };
  return b.CreateFMul(b.CreateFMul(p, pow2(k1)), pow2(k2));
}

}  // namespace

llvm::Value* ElementalEmitter::EmitExpF64(llvm::Value* y) {
  // y is finite and within [-745, 709]: k = round(y / ln 2), r = y - k ln 2
  // in two parts, exp(r) by Taylor to degree 12 (|r| <= 0.35: error below
  // 1e-15 relative), times 2^k built in the exponent bits (split in two
  // factors so that k down to -1074 stays representable).
  llvm::Type* d = b_->getDoubleTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(d, v); };
  llvm::Value* k =
      b_->CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_->CreateFMul(y, c(1.4426950408889634)));
  llvm::Value* r = b_->CreateFSub(y, b_->CreateFMul(k, c(6.93147180369123816490e-01)));
  r = b_->CreateFSub(r, b_->CreateFMul(k, c(1.90821492927058770002e-10)));
  double coefficient = 1.0;
  std::vector<double> coefficients;
  for (int i = 0; i <= 12; ++i) {
    if (i > 0) coefficient /= i;
    coefficients.push_back(coefficient);
  }
  llvm::Value* p = c(coefficients.back());
  for (int i = 11; i >= 0; --i) p = b_->CreateFAdd(b_->CreateFMul(p, r), c(coefficients[i]));
  return ScaleByPowerOfTwo(*b_, p, k);
}

llvm::Value* ElementalEmitter::EmitExpF32(llvm::Value* y) {
  // As EmitExpF64 in single precision, as XLA:CPU computes f32 exp: eight
  // lanes per AVX2 vector instead of four, and a degree-7 polynomial
  // instead of 12. k = round(y / ln 2); r = y - k ln 2 with ln 2 split so
  // that k * hi is exact; exp(r) = 1 + r + r^2 P(r) with P the Taylor terms
  // to r^5 / 7! (truncation below 6e-9 relative for |r| <= 0.35); error
  // within about an ulp of the rounded double-precision result.
  llvm::Type* f = b_->getFloatTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  auto fmuladd = [&](llvm::Value* a, llvm::Value* m, llvm::Value* add) {
    return b_->CreateIntrinsic(llvm::Intrinsic::fmuladd, {f}, {a, m, add});
  };
  llvm::Value* k =
      b_->CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_->CreateFMul(y, c(1.44269504088896341)));
  llvm::Value* r = b_->CreateFSub(y, b_->CreateFMul(k, c(0.693359375)));
  r = b_->CreateFSub(r, b_->CreateFMul(k, c(-2.12194440054690583e-4)));
  const double terms[] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040};
  llvm::Value* p = c(terms[5]);
  for (int i = 4; i >= 0; --i) p = fmuladd(p, r, c(terms[i]));
  p = b_->CreateFAdd(fmuladd(p, b_->CreateFMul(r, r), r), c(1.0));
  return ScaleByPowerOfTwo(*b_, p, k);
}

llvm::Value* ElementalEmitter::EmitInlineFloatMath(Opcode op, llvm::Value* x, bool f32_result) {
  if (op == Opcode::kExp && f32_result) {
    // f32 overflows above 88.73 and rounds to 0 below -103.97.
    llvm::Type* f = x->getType();
    llvm::Value* v = b_->CreateSelect(b_->CreateFCmpOLT(x, llvm::ConstantFP::get(f, -104.0)),
                                      llvm::ConstantFP::get(f, -104.0), x);
    v = b_->CreateSelect(b_->CreateFCmpOGT(v, llvm::ConstantFP::get(f, 89.0)),
                         llvm::ConstantFP::get(f, 89.0), v);
    return b_->CreateSelect(b_->CreateFCmpUNO(x, x), x, EmitExpF32(v));
  }
  llvm::Type* d = b_->getDoubleTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(d, v); };
  llvm::Value* xd = b_->CreateFPExt(x, d);
  llvm::Value* is_nan = b_->CreateFCmpUNO(xd, xd);
  auto clamp = [&](llvm::Value* v, double lo, double hi) {
    v = b_->CreateSelect(b_->CreateFCmpOLT(v, c(lo)), c(lo), v);
    return b_->CreateSelect(b_->CreateFCmpOGT(v, c(hi)), c(hi), v);
  };
  llvm::Value* result = nullptr;
  switch (op) {
    case Opcode::kExp:
      // f32 overflows above 88.8 and underflows below -103.9.
      result = EmitExpF64(clamp(xd, -110.0, 100.0));
      break;
    case Opcode::kLogistic: {
      llvm::Value* e = EmitExpF64(clamp(b_->CreateFNeg(xd), -110.0, 110.0));
      result = b_->CreateFDiv(c(1.0), b_->CreateFAdd(c(1.0), e));
      break;
    }
    case Opcode::kTanh: {
      // |x| < 0.1: the odd Taylor series (error below 1e-12 relative);
      // else (1 - e) / (1 + e) with e = exp(-2|x|), which no longer cancels.
      llvm::Value* a = b_->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, xd);
      llvm::Value* e = EmitExpF64(b_->CreateFMul(c(-2.0), clamp(a, 0.0, 20.0)));
      llvm::Value* big = b_->CreateFDiv(b_->CreateFSub(c(1.0), e), b_->CreateFAdd(c(1.0), e));
      big = b_->CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, xd);
      llvm::Value* x2 = b_->CreateFMul(xd, xd);
      const double series[] = {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835,
                               -1382.0 / 155925};
      llvm::Value* p = c(series[5]);
      for (int i = 4; i >= 0; --i) p = b_->CreateFAdd(b_->CreateFMul(p, x2), c(series[i]));
      llvm::Value* small = b_->CreateFMul(p, xd);
      result = b_->CreateSelect(b_->CreateFCmpOLT(a, c(0.1)), small, big);
      break;
    }
    default:
      return nullptr;
  }
  result = b_->CreateSelect(is_nan, xd, result);
  return b_->CreateFPTrunc(result, x->getType());
}

}  // namespace hlogym

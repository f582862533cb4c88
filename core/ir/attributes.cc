#include "core/ir/attributes.h"

namespace hlogym {

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
  }
  return "";
}

std::string_view ComparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault: return "";
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
  }
  return "";
}

std::string_view FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "";
}

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kDefault: return "default";
    case Precision::kHigh: return "high";
    case Precision::kHighest: return "highest";
    case Precision::kPackedNibble: return "packed_nibble";
  }
  return "";
}

std::string_view RngDistributionName(RngDistribution d) {
  return d == RngDistribution::kUniform ? "rng_uniform" : "rng_normal";
}

std::string_view RngAlgorithmName(RngAlgorithm a) {
  switch (a) {
    case RngAlgorithm::kDefault: return "rng_default";
    case RngAlgorithm::kThreeFry: return "rng_three_fry";
    case RngAlgorithm::kPhilox: return "rng_philox";
  }
  return "";
}

std::string_view FftTypeName(FftType t) {
  switch (t) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "";
}

}  // namespace hlogym

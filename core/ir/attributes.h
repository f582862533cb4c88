// Typed attributes of HLO instructions, one struct per opcode family. An
// Instruction holds at most one of these (see Instruction::attrs<T>()).
// Attributes hlogym does not model (metadata, sharding, backend_config,
// replica_groups, ...) are kept verbatim as RawAttribute so they print back.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/literal.h"

namespace hlogym {

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
// kDefault: not written in the text; the element type's default applies
// (FLOAT for floats, SIGNED for sN, UNSIGNED for uN and pred).
enum class ComparisonType : uint8_t {
  kDefault, kFloat, kTotalOrder, kSigned, kUnsigned
};
enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
enum class Precision : uint8_t { kDefault, kHigh, kHighest, kPackedNibble };
enum class RngDistribution : uint8_t { kUniform, kNormal };
enum class RngAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };

// A verbatim attribute: `name=value` with value exactly as in the text.
struct RawAttribute {
  std::string name;
  std::string value;
  bool operator==(const RawAttribute&) const = default;
};

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t lhs_dilation = 1;   // base dilation
  int64_t rhs_dilation = 1;   // window dilation
  bool reversal = false;
  bool operator==(const WindowDimension&) const = default;
};
using Window = std::vector<WindowDimension>;

struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};

struct DotDimensions {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  bool operator==(const DotDimensions&) const = default;
};

// dim_labels=b01f_01io->b01f: positions of each role in each operand.
struct ConvolutionDimensions {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvolutionDimensions&) const = default;
};

struct GatherDimensions {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  bool operator==(const GatherDimensions&) const = default;
};

struct ScatterDimensions {
  std::vector<int64_t> update_window_dims, inserted_window_dims,
      scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  bool operator==(const ScatterDimensions&) const = default;
};

// ---- Per-family attribute structs ------------------------------------------

struct ConstantAttrs {  // constant
  Literal literal;
  bool operator==(const ConstantAttrs&) const = default;
};
struct SliceAttrs {  // slice
  std::vector<int64_t> starts, limits, strides;
  bool operator==(const SliceAttrs&) const = default;
};
struct DynamicSliceAttrs {  // dynamic-slice
  std::vector<int64_t> sizes;
  bool operator==(const DynamicSliceAttrs&) const = default;
};
struct PadAttrs {  // pad
  std::vector<PaddingDimension> padding;
  bool operator==(const PadAttrs&) const = default;
};
struct CompareAttrs {  // compare
  ComparisonDirection direction = ComparisonDirection::kEq;
  ComparisonType type = ComparisonType::kDefault;
  bool operator==(const CompareAttrs&) const = default;
};
struct DotAttrs {  // dot, ragged-dot
  DotDimensions dims;
  std::vector<Precision> precision;  // empty or one per operand
  std::string algorithm;             // e.g. "dot_bf16_bf16_f32"; empty = unset
  bool operator==(const DotAttrs&) const = default;
};
struct ConvolutionAttrs {  // convolution
  Window window;
  ConvolutionDimensions dims;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::vector<Precision> precision;
  bool operator==(const ConvolutionAttrs&) const = default;
};
struct WindowAttrs {  // reduce-window, select-and-scatter
  Window window;
  bool operator==(const WindowAttrs&) const = default;
};
struct GatherAttrs {  // gather
  GatherDimensions dims;
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
  bool operator==(const GatherAttrs&) const = default;
};
struct ScatterAttrs {  // scatter
  ScatterDimensions dims;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  bool operator==(const ScatterAttrs&) const = default;
};
struct SortAttrs {  // sort (the sort dimension is in dimensions())
  bool is_stable = false;
  bool operator==(const SortAttrs&) const = default;
};
struct TopKAttrs {  // topk
  int64_t k = 0;
  bool largest = true;
  bool operator==(const TopKAttrs&) const = default;
};
struct FusionAttrs {  // fusion
  FusionKind kind = FusionKind::kLoop;
  bool operator==(const FusionAttrs&) const = default;
};
struct CustomCallAttrs {  // custom-call; its other attributes stay raw
  std::string target;
  bool operator==(const CustomCallAttrs&) const = default;
};
struct RngAttrs {  // rng
  RngDistribution distribution = RngDistribution::kUniform;
  bool operator==(const RngAttrs&) const = default;
};
struct RngBitGeneratorAttrs {  // rng-bit-generator
  RngAlgorithm algorithm = RngAlgorithm::kDefault;
  bool operator==(const RngBitGeneratorAttrs&) const = default;
};
struct BatchNormAttrs {  // batch-norm-training/-inference/-grad
  double epsilon = 0;
  int64_t feature_index = 0;
  bool operator==(const BatchNormAttrs&) const = default;
};
struct FftAttrs {  // fft
  FftType type = FftType::kFft;
  std::vector<int64_t> length;
  bool operator==(const FftAttrs&) const = default;
};
struct ReducePrecisionAttrs {  // reduce-precision
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  bool operator==(const ReducePrecisionAttrs&) const = default;
};
struct ScanAttrs {  // scan (the scan dimension is in dimensions())
  int64_t num_carries = 0;
  bool is_reverse = false;
  bool is_associative = false;
  bool operator==(const ScanAttrs&) const = default;
};

using OpAttrs =
    std::variant<std::monostate, ConstantAttrs, SliceAttrs, DynamicSliceAttrs,
                 PadAttrs, CompareAttrs, DotAttrs, ConvolutionAttrs,
                 WindowAttrs, GatherAttrs, ScatterAttrs, SortAttrs, TopKAttrs,
                 FusionAttrs, CustomCallAttrs, RngAttrs, RngBitGeneratorAttrs,
                 BatchNormAttrs, FftAttrs, ReducePrecisionAttrs, ScanAttrs>;

// Text names as HLO writes them ("GT", "kLoop", "highest", "rng_uniform", ...).
std::string_view ComparisonDirectionName(ComparisonDirection d);
std::string_view ComparisonTypeName(ComparisonType t);  // "" for kDefault
std::string_view FusionKindName(FusionKind k);
std::string_view PrecisionName(Precision p);
std::string_view RngDistributionName(RngDistribution d);
std::string_view RngAlgorithmName(RngAlgorithm a);
std::string_view FftTypeName(FftType t);

}  // namespace hlogym

// Which instruction attribute goes where in the typed IR. An attribute the
// IR models for the instruction's opcode is parsed into its typed home
// (attributes.h, dimensions(), index, called computations); every other one
// (metadata, sharding, backend_config, replica_groups, names from newer XLA,
// ...) is kept verbatim, in text order, as a RawAttribute.
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/base/status_macros.h"
#include "core/text/parser_internal.h"

namespace hlogym::text_internal {
namespace {

#define HLOGYM_ATTRIBUTE_LIST(V)                                  \
  V(kDimensions, "dimensions")                                    \
  V(kSlice, "slice")                                              \
  V(kDynamicSliceSizes, "dynamic_slice_sizes")                    \
  V(kPadding, "padding")                                          \
  V(kWindow, "window")                                            \
  V(kDimLabels, "dim_labels")                                     \
  V(kFeatureGroupCount, "feature_group_count")                    \
  V(kBatchGroupCount, "batch_group_count")                        \
  V(kOperandPrecision, "operand_precision")                       \
  V(kAlgorithm, "algorithm")                                      \
  V(kLhsBatchDims, "lhs_batch_dims")                              \
  V(kLhsContractingDims, "lhs_contracting_dims")                  \
  V(kRhsBatchDims, "rhs_batch_dims")                              \
  V(kRhsContractingDims, "rhs_contracting_dims")                  \
  V(kDirection, "direction")                                      \
  V(kType, "type")                                                \
  V(kOrder, "order")                                              \
  V(kOffsetDims, "offset_dims")                                   \
  V(kCollapsedSliceDims, "collapsed_slice_dims")                  \
  V(kStartIndexMap, "start_index_map")                            \
  V(kIndexVectorDim, "index_vector_dim")                          \
  V(kSliceSizes, "slice_sizes")                                   \
  V(kIndicesAreSorted, "indices_are_sorted")                      \
  V(kOperandBatchingDims, "operand_batching_dims")                \
  V(kStartIndicesBatchingDims, "start_indices_batching_dims")     \
  V(kUpdateWindowDims, "update_window_dims")                      \
  V(kInsertedWindowDims, "inserted_window_dims")                  \
  V(kScatterDimsToOperandDims, "scatter_dims_to_operand_dims")    \
  V(kUniqueIndices, "unique_indices")                             \
  V(kInputBatchingDims, "input_batching_dims")                    \
  V(kScatterIndicesBatchingDims, "scatter_indices_batching_dims") \
  V(kIsStable, "is_stable")                                       \
  V(kK, "k")                                                      \
  V(kLargest, "largest")                                          \
  V(kKind, "kind")                                                \
  V(kCalls, "calls")                                              \
  V(kToApply, "to_apply")                                         \
  V(kCondition, "condition")                                      \
  V(kBody, "body")                                                \
  V(kSelect, "select")                                            \
  V(kScatter, "scatter")                                          \
  V(kTrueComputation, "true_computation")                         \
  V(kFalseComputation, "false_computation")                       \
  V(kBranchComputations, "branch_computations")                   \
  V(kCalledComputations, "called_computations")                   \
  V(kCustomCallTarget, "custom_call_target")                      \
  V(kDistribution, "distribution")                                \
  V(kEpsilon, "epsilon")                                          \
  V(kFeatureIndex, "feature_index")                               \
  V(kFftType, "fft_type")                                         \
  V(kFftLength, "fft_length")                                     \
  V(kExponentBits, "exponent_bits")                               \
  V(kMantissaBits, "mantissa_bits")                               \
  V(kNumCarries, "num_carries")                                   \
  V(kIsReverse, "is_reverse")                                     \
  V(kIsAssociative, "is_associative")                             \
  V(kIndex, "index")                                              \
  V(kIotaDimension, "iota_dimension")                             \
  V(kControlPredecessors, "control-predecessors")                 \
  V(kSourceTargetPairs, "source_target_pairs")                    \
  V(kDelta, "delta")                                              \
  V(kDomain, "domain")

enum AttrId : int {
#define HLOGYM_ATTR_ENUM(id, text) id,
  HLOGYM_ATTRIBUTE_LIST(HLOGYM_ATTR_ENUM)
#undef HLOGYM_ATTR_ENUM
      kNumAttrIds
};
static_assert(kNumAttrIds <= 128, "PendingInstruction::seen holds 128 bits");

constexpr std::string_view kAttrNames[] = {
#define HLOGYM_ATTR_NAME(id, text) text,
    HLOGYM_ATTRIBUTE_LIST(HLOGYM_ATTR_NAME)
#undef HLOGYM_ATTR_NAME
};

std::optional<AttrId> LookupAttr(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, AttrId>();
    for (int i = 0; i < kNumAttrIds; ++i) map->emplace(ToAbsl(kAttrNames[i]), AttrId(i));
    return map;
  }();
  auto it = by_name->find(ToAbsl(name));
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

// Opcodes whose `dimensions=` is Instruction::dimensions().
// clang-format off
bool UsesDimensions(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kReverse:
    case Opcode::kReduce: case Opcode::kConcatenate: case Opcode::kSort:
    case Opcode::kMap: case Opcode::kScan: case Opcode::kAllGather:
    case Opcode::kAllGatherStart: case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
      return true;
    default:
      return false;
  }
}
// clang-format on

// Opcodes whose `to_apply=` is their (only) called computation.
// clang-format off
bool UsesToApply(Opcode op) {
  switch (op) {
    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kScatter:
    case Opcode::kSort: case Opcode::kMap: case Opcode::kCall: case Opcode::kScan:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter: case Opcode::kCustomCall:
      return true;
    default:
      return false;
  }
}
// clang-format on

bool IsDot(Opcode op) { return op == Opcode::kDot || op == Opcode::kRaggedDot; }
bool IsBatchNorm(Opcode op) {
  return op == Opcode::kBatchNormTraining || op == Opcode::kBatchNormInference ||
         op == Opcode::kBatchNormGrad;
}

// The required attributes of an opcode (conditional and broadcast, whose
// needs depend on their operands, are checked separately).
#define HLOGYM_REQUIRE(...)                              \
  {                                                      \
    static constexpr AttrId kRequired[] = {__VA_ARGS__}; \
    return kRequired;                                    \
  }
// clang-format off
absl::Span<const AttrId> RequiredAttrs(Opcode op) {
  switch (op) {
    case Opcode::kIota: HLOGYM_REQUIRE(kIotaDimension)
    case Opcode::kCompare: HLOGYM_REQUIRE(kDirection)
    case Opcode::kTranspose: case Opcode::kReverse: case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
    case Opcode::kAllGather: case Opcode::kAllGatherStart:
      HLOGYM_REQUIRE(kDimensions)
    case Opcode::kSlice: HLOGYM_REQUIRE(kSlice)
    case Opcode::kDynamicSlice: HLOGYM_REQUIRE(kDynamicSliceSizes)
    case Opcode::kPad: HLOGYM_REQUIRE(kPadding)
    case Opcode::kReduce: case Opcode::kSort: HLOGYM_REQUIRE(kDimensions, kToApply)
    case Opcode::kReduceWindow: case Opcode::kMap: case Opcode::kCall:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart:
      HLOGYM_REQUIRE(kToApply)
    case Opcode::kReduceScatter: HLOGYM_REQUIRE(kToApply, kDimensions)
    case Opcode::kSelectAndScatter: HLOGYM_REQUIRE(kSelect, kScatter)
    case Opcode::kConvolution: HLOGYM_REQUIRE(kDimLabels)
    case Opcode::kGather:
      HLOGYM_REQUIRE(kOffsetDims, kCollapsedSliceDims, kStartIndexMap, kIndexVectorDim,
                     kSliceSizes)
    case Opcode::kScatter:
      HLOGYM_REQUIRE(kUpdateWindowDims, kInsertedWindowDims, kScatterDimsToOperandDims,
                     kIndexVectorDim, kToApply)
    case Opcode::kTopK: HLOGYM_REQUIRE(kK)
    case Opcode::kScan: HLOGYM_REQUIRE(kToApply, kDimensions, kNumCarries)
    case Opcode::kGetTupleElement: HLOGYM_REQUIRE(kIndex)
    case Opcode::kWhile: HLOGYM_REQUIRE(kCondition, kBody)
    case Opcode::kFusion: HLOGYM_REQUIRE(kKind, kCalls)
    case Opcode::kCustomCall: HLOGYM_REQUIRE(kCustomCallTarget)
    case Opcode::kBatchNormTraining: case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      HLOGYM_REQUIRE(kEpsilon, kFeatureIndex)
    case Opcode::kFft: HLOGYM_REQUIRE(kFftType, kFftLength)
    case Opcode::kRng: HLOGYM_REQUIRE(kDistribution)
    case Opcode::kRngBitGenerator: HLOGYM_REQUIRE(kAlgorithm)
    case Opcode::kRngGetAndUpdateState: HLOGYM_REQUIRE(kDelta)
    case Opcode::kReducePrecision: HLOGYM_REQUIRE(kExponentBits, kMantissaBits)
    case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart:
      HLOGYM_REQUIRE(kSourceTargetPairs)
    case Opcode::kAsyncStart: HLOGYM_REQUIRE(kCalls)
    case Opcode::kDomain: HLOGYM_REQUIRE(kDomain)
    default:
      return {};
  }
}
// clang-format on
#undef HLOGYM_REQUIRE

template <typename Enum, typename NameFn, size_t N>
std::optional<Enum> EnumFromName(std::string_view text, const Enum (&values)[N], NameFn name_of) {
  for (Enum v : values) {
    if (name_of(v) == text) return v;
  }
  return std::nullopt;
}

}  // namespace

absl::Status HloParser::ParseAttributes(ComputationScope& scope, PendingInstruction& pending) {
  while (EatIf(TokenKind::kComma)) {
    const Token name = lexer_.peek();
    if (name.kind != TokenKind::kIdent) return Expected("an attribute name");
    lexer_.Next();
    if (!EatIf(TokenKind::kEqual)) {
      return Expected(Cat("'=' after attribute name '", name.text, "'"));
    }
    RETURN_IF_ERROR(ParseOneAttribute(scope, pending, name.text, name.offset));
  }
  return absl::OkStatus();
}

absl::Status HloParser::ParseOneAttribute(ComputationScope& scope, PendingInstruction& pending,
                                          std::string_view name, size_t name_offset) {
  Instruction* inst = pending.inst;
  const Opcode op = pending.opcode;
  const std::optional<AttrId> id = LookupAttr(name);
  auto duplicate = [&] { return ErrorAt(name_offset, Cat("duplicate attribute '", name, "'")); };
  auto bad_enum = [&](std::string_view value, std::string_view expected) {
    return ErrorAt(name_offset, Cat("unknown ", name, " '", value, "' (expected ", expected, ")"));
  };
  if (id) {
    if (pending.seen[*id]) return duplicate();
    pending.seen.set(*id);
  }
  switch (id.value_or(kNumAttrIds)) {
    case kDimensions: {
      if (!UsesDimensions(op)) break;
      std::vector<int64_t> dims;  // the list is inline in the instruction
      RETURN_IF_ERROR(ParseIntList(&dims));
      inst->mutable_dimensions().assign(dims.begin(), dims.end());
      return absl::OkStatus();
    }
    case kSlice:
      if (op != Opcode::kSlice) break;
      return ParseSliceRanges(&inst->mutable_attrs<SliceAttrs>());
    case kDynamicSliceSizes:
      if (op != Opcode::kDynamicSlice) break;
      return ParseIntList(&inst->mutable_attrs<DynamicSliceAttrs>().sizes);
    case kPadding:
      if (op != Opcode::kPad) break;
      return ParsePadding(&inst->mutable_attrs<PadAttrs>().padding);
    case kWindow:
      if (op == Opcode::kConvolution) {
        return ParseWindow(&inst->mutable_attrs<ConvolutionAttrs>().window);
      }
      if (op == Opcode::kReduceWindow || op == Opcode::kSelectAndScatter) {
        return ParseWindow(&inst->mutable_attrs<WindowAttrs>().window);
      }
      break;
    case kDimLabels:
      if (op != Opcode::kConvolution) break;
      return ParseDimLabels(&inst->mutable_attrs<ConvolutionAttrs>().dims);
    case kFeatureGroupCount:
      if (op != Opcode::kConvolution) break;
      return ParseInt64(&inst->mutable_attrs<ConvolutionAttrs>().feature_group_count);
    case kBatchGroupCount:
      if (op != Opcode::kConvolution) break;
      return ParseInt64(&inst->mutable_attrs<ConvolutionAttrs>().batch_group_count);
    case kOperandPrecision:
      if (IsDot(op)) return ParsePrecisionList(&inst->mutable_attrs<DotAttrs>().precision);
      if (op == Opcode::kConvolution) {
        return ParsePrecisionList(&inst->mutable_attrs<ConvolutionAttrs>().precision);
      }
      break;
    case kAlgorithm: {
      if (!IsDot(op) && op != Opcode::kRngBitGenerator) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("an algorithm name", &value));
      if (IsDot(op)) {
        inst->mutable_attrs<DotAttrs>().algorithm = std::string(value);
        return absl::OkStatus();
      }
      static constexpr RngAlgorithm kAll[] = {RngAlgorithm::kDefault, RngAlgorithm::kThreeFry,
                                              RngAlgorithm::kPhilox};
      std::optional<RngAlgorithm> a = EnumFromName(value, kAll, RngAlgorithmName);
      if (!a) return bad_enum(value, "rng_default, rng_three_fry or rng_philox");
      inst->mutable_attrs<RngBitGeneratorAttrs>().algorithm = *a;
      return absl::OkStatus();
    }
    case kLhsBatchDims:
    case kLhsContractingDims:
    case kRhsBatchDims:
    case kRhsContractingDims: {
      if (!IsDot(op)) break;
      DotDimensions& dims = inst->mutable_attrs<DotAttrs>().dims;
      std::vector<int64_t>* target = *id == kLhsBatchDims         ? &dims.lhs_batch
                                     : *id == kLhsContractingDims ? &dims.lhs_contracting
                                     : *id == kRhsBatchDims       ? &dims.rhs_batch
                                                                  : &dims.rhs_contracting;
      return ParseIntList(target);
    }
    case kDirection: {
      if (op != Opcode::kCompare) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("a comparison direction", &value));
      static constexpr ComparisonDirection kAll[] = {
          ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kGe,
          ComparisonDirection::kGt, ComparisonDirection::kLe, ComparisonDirection::kLt};
      std::optional<ComparisonDirection> d = EnumFromName(value, kAll, ComparisonDirectionName);
      if (!d) return bad_enum(value, "EQ, NE, GE, GT, LE or LT");
      inst->mutable_attrs<CompareAttrs>().direction = *d;
      return absl::OkStatus();
    }
    case kType: {
      if (op != Opcode::kCompare) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("a comparison type", &value));
      static constexpr ComparisonType kAll[] = {ComparisonType::kFloat, ComparisonType::kTotalOrder,
                                                ComparisonType::kSigned, ComparisonType::kUnsigned};
      std::optional<ComparisonType> t = EnumFromName(value, kAll, ComparisonTypeName);
      if (!t) return bad_enum(value, "FLOAT, TOTALORDER, SIGNED or UNSIGNED");
      inst->mutable_attrs<CompareAttrs>().type = *t;
      return absl::OkStatus();
    }
    case kOrder:
      // Newer XLA writes `order=TOTAL` for a total-order compare. The text
      // stays verbatim; the typed type says what it means.
      if (op == Opcode::kCompare && AtIdent("TOTAL")) {
        CompareAttrs& attrs = inst->mutable_attrs<CompareAttrs>();
        if (attrs.type == ComparisonType::kDefault) attrs.type = ComparisonType::kTotalOrder;
      }
      break;
    case kOffsetDims:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().dims.offset_dims);
    case kCollapsedSliceDims:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().dims.collapsed_slice_dims);
    case kStartIndexMap:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().dims.start_index_map);
    case kSliceSizes:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().slice_sizes);
    case kOperandBatchingDims:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().dims.operand_batching_dims);
    case kStartIndicesBatchingDims:
      if (op != Opcode::kGather) break;
      return ParseIntList(&inst->mutable_attrs<GatherAttrs>().dims.start_indices_batching_dims);
    case kIndexVectorDim:
      if (op == Opcode::kGather) {
        return ParseInt64(&inst->mutable_attrs<GatherAttrs>().dims.index_vector_dim);
      }
      if (op == Opcode::kScatter) {
        return ParseInt64(&inst->mutable_attrs<ScatterAttrs>().dims.index_vector_dim);
      }
      break;
    case kIndicesAreSorted:
      if (op == Opcode::kGather) {
        return ParseBool(&inst->mutable_attrs<GatherAttrs>().indices_are_sorted);
      }
      if (op == Opcode::kScatter) {
        return ParseBool(&inst->mutable_attrs<ScatterAttrs>().indices_are_sorted);
      }
      break;
    case kUpdateWindowDims:
      if (op != Opcode::kScatter) break;
      return ParseIntList(&inst->mutable_attrs<ScatterAttrs>().dims.update_window_dims);
    case kInsertedWindowDims:
      if (op != Opcode::kScatter) break;
      return ParseIntList(&inst->mutable_attrs<ScatterAttrs>().dims.inserted_window_dims);
    case kScatterDimsToOperandDims:
      if (op != Opcode::kScatter) break;
      return ParseIntList(&inst->mutable_attrs<ScatterAttrs>().dims.scatter_dims_to_operand_dims);
    case kInputBatchingDims:
      if (op != Opcode::kScatter) break;
      return ParseIntList(&inst->mutable_attrs<ScatterAttrs>().dims.input_batching_dims);
    case kScatterIndicesBatchingDims:
      if (op != Opcode::kScatter) break;
      return ParseIntList(&inst->mutable_attrs<ScatterAttrs>().dims.scatter_indices_batching_dims);
    case kUniqueIndices:
      if (op != Opcode::kScatter) break;
      return ParseBool(&inst->mutable_attrs<ScatterAttrs>().unique_indices);
    case kIsStable:
      if (op != Opcode::kSort) break;
      return ParseBool(&inst->mutable_attrs<SortAttrs>().is_stable);
    case kK:
      if (op != Opcode::kTopK) break;
      return ParseInt64(&inst->mutable_attrs<TopKAttrs>().k);
    case kLargest:
      if (op != Opcode::kTopK) break;
      return ParseBool(&inst->mutable_attrs<TopKAttrs>().largest);
    case kKind: {
      if (op != Opcode::kFusion) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("a fusion kind", &value));
      static constexpr FusionKind kAll[] = {FusionKind::kLoop, FusionKind::kInput,
                                            FusionKind::kOutput, FusionKind::kCustom};
      std::optional<FusionKind> k = EnumFromName(value, kAll, FusionKindName);
      if (!k) return bad_enum(value, "kLoop, kInput, kOutput or kCustom");
      inst->mutable_attrs<FusionAttrs>().kind = *k;
      return absl::OkStatus();
    }
    case kCalls:
      if (op == Opcode::kFusion || op == Opcode::kAsyncStart) {
        return ParseComputationRef(pending, name, &pending.calls);
      }
      if (op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) {
        // Inherited from the async-start; older XLA writes it here too.
        Computation* calls;
        RETURN_IF_ERROR(ParseComputationRef(pending, name, &calls));
        const Instruction* start = inst->operand_count() == 1 ? inst->operand(0) : nullptr;
        while (start != nullptr && start->opcode() == Opcode::kAsyncUpdate &&
               start->operand_count() == 1) {
          start = start->operand(0);
        }
        if (start == nullptr || start->opcode() != Opcode::kAsyncStart ||
            start->called_computations().empty() || start->called_computations()[0] != calls) {
          return ErrorAt(name_offset,
                         Cat("calls='", calls->name(), "' differs from its async-start's"));
        }
        return absl::OkStatus();
      }
      break;
    case kToApply:
      if (!UsesToApply(op)) break;
      return ParseComputationRef(pending, name, &pending.to_apply);
    case kCondition:
      if (op != Opcode::kWhile) break;
      return ParseComputationRef(pending, name, &pending.condition);
    case kBody:
      if (op != Opcode::kWhile) break;
      return ParseComputationRef(pending, name, &pending.body);
    case kSelect:
      if (op != Opcode::kSelectAndScatter) break;
      return ParseComputationRef(pending, name, &pending.select);
    case kScatter:
      if (op != Opcode::kSelectAndScatter) break;
      return ParseComputationRef(pending, name, &pending.scatter);
    case kTrueComputation:
      if (op != Opcode::kConditional) break;
      return ParseComputationRef(pending, name, &pending.true_computation);
    case kFalseComputation:
      if (op != Opcode::kConditional) break;
      return ParseComputationRef(pending, name, &pending.false_computation);
    case kBranchComputations:
      if (op != Opcode::kConditional) break;
      return ParseComputationList(pending, name, &pending.branch_computations);
    case kCalledComputations:
      if (op != Opcode::kCustomCall) break;
      return ParseComputationList(pending, name, &pending.called_computations);
    case kCustomCallTarget:
      if (op != Opcode::kCustomCall) break;
      return ParseQuotedString(&inst->mutable_attrs<CustomCallAttrs>().target);
    case kDistribution: {
      if (op != Opcode::kRng) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("a distribution", &value));
      static constexpr RngDistribution kAll[] = {RngDistribution::kUniform,
                                                 RngDistribution::kNormal};
      std::optional<RngDistribution> d = EnumFromName(value, kAll, RngDistributionName);
      if (!d) return bad_enum(value, "rng_uniform or rng_normal");
      inst->mutable_attrs<RngAttrs>().distribution = *d;
      return absl::OkStatus();
    }
    case kEpsilon:
      if (!IsBatchNorm(op)) break;
      return ParseDouble(&inst->mutable_attrs<BatchNormAttrs>().epsilon);
    case kFeatureIndex:
      if (!IsBatchNorm(op)) break;
      return ParseInt64(&inst->mutable_attrs<BatchNormAttrs>().feature_index);
    case kFftType: {
      if (op != Opcode::kFft) break;
      std::string_view value;
      RETURN_IF_ERROR(ParseEnumIdent("an FFT type", &value));
      static constexpr FftType kAll[] = {FftType::kFft, FftType::kIfft, FftType::kRfft,
                                         FftType::kIrfft};
      std::optional<FftType> t = EnumFromName(value, kAll, FftTypeName);
      if (!t) return bad_enum(value, "FFT, IFFT, RFFT or IRFFT");
      inst->mutable_attrs<FftAttrs>().type = *t;
      return absl::OkStatus();
    }
    case kFftLength:
      if (op != Opcode::kFft) break;
      return ParseIntList(&inst->mutable_attrs<FftAttrs>().length);
    case kExponentBits:
      if (op != Opcode::kReducePrecision) break;
      return ParseInt64(&inst->mutable_attrs<ReducePrecisionAttrs>().exponent_bits);
    case kMantissaBits:
      if (op != Opcode::kReducePrecision) break;
      return ParseInt64(&inst->mutable_attrs<ReducePrecisionAttrs>().mantissa_bits);
    case kNumCarries:
      if (op != Opcode::kScan) break;
      return ParseInt64(&inst->mutable_attrs<ScanAttrs>().num_carries);
    case kIsReverse:
      if (op != Opcode::kScan) break;
      return ParseBool(&inst->mutable_attrs<ScanAttrs>().is_reverse);
    case kIsAssociative:
      if (op != Opcode::kScan) break;
      return ParseBool(&inst->mutable_attrs<ScanAttrs>().is_associative);
    case kIndex:
    case kIotaDimension: {
      const Opcode owner = *id == kIndex ? Opcode::kGetTupleElement : Opcode::kIota;
      if (op != owner) break;
      int64_t value;
      RETURN_IF_ERROR(ParseInt64(&value));
      inst->set_index(value);
      return absl::OkStatus();
    }
    case kControlPredecessors:
      return ParseInstructionRefList(scope, &pending.control_predecessors);
    default:
      break;
  }

  // Not modeled for this opcode (or not at all): kept verbatim.
  if (!id) {
    for (const RawAttribute& raw : inst->raw_attributes()) {
      if (raw.name == name) return duplicate();
    }
    if (pending.async_raw_attributes != nullptr) {
      for (const RawAttribute& raw : *pending.async_raw_attributes) {
        if (raw.name == name) return duplicate();
      }
    }
  }
  RawAttribute raw{std::string(name), std::string()};
  RETURN_IF_ERROR(ParseRawValue(&raw.value));
  if (pending.is_async_wrapped) {
    const AsyncAttributeHome home = HomeOfSugaredAttribute(name);
    if (home != AsyncAttributeHome::kWrapped) pending.async_raw_attributes->push_back(raw);
    if (home == AsyncAttributeHome::kAsync) return absl::OkStatus();
  }
  inst->mutable_raw_attributes().push_back(std::move(raw));
  return absl::OkStatus();
}

absl::Status HloParser::FinishAttributes(PendingInstruction& pending) {
  Instruction* inst = pending.inst;
  const Opcode op = pending.opcode;
  auto missing = [&](std::string_view attribute) {
    return ErrorAt(pending.offset,
                   Cat("'", pending.name.empty() ? OpcodeName(op) : pending.name, "' (",
                       OpcodeName(op), ") is missing required attribute '", attribute, "'"));
  };
  for (AttrId id : RequiredAttrs(op)) {
    if (!pending.seen[id]) return missing(kAttrNames[id]);
  }
  if (op == Opcode::kBroadcast && !pending.seen[kDimensions] &&
      inst->operand(0)->shape().rank() != 0) {
    return missing("dimensions");
  }

  std::vector<Computation*> called;
  if (UsesToApply(op) && pending.to_apply != nullptr) {
    if (!pending.called_computations.empty()) {
      return ErrorAt(pending.offset, "custom-call takes to_apply or called_computations, not both");
    }
    called = {pending.to_apply};
  }
  switch (op) {
    case Opcode::kFusion:
      if (pending.calls->fusion_instruction() != nullptr) {
        return ErrorAt(pending.offset, Cat("computation '", pending.calls->name(),
                                           "' is already the fused computation of '",
                                           pending.calls->fusion_instruction()->name(), "'"));
      }
      pending.calls->set_fusion_instruction(inst);
      called = {pending.calls};
      break;
    case Opcode::kAsyncStart:
      called = {pending.calls};
      break;
    case Opcode::kWhile:
      called = {pending.condition, pending.body};
      break;
    case Opcode::kSelectAndScatter:
      called = {pending.select, pending.scatter};
      break;
    case Opcode::kCustomCall:
      if (!pending.called_computations.empty()) called = pending.called_computations;
      break;
    case Opcode::kConditional: {
      const bool has_pair = pending.seen[kTrueComputation] || pending.seen[kFalseComputation];
      if (pending.seen[kBranchComputations]) {
        if (has_pair) {
          return ErrorAt(pending.offset,
                         "conditional takes branch_computations or "
                         "true_computation/false_computation, not both");
        }
        called = pending.branch_computations;
        break;
      }
      if (!has_pair && inst->operand_count() > 0 &&
          inst->operand(0)->shape().element_type() != PrimitiveType::kPred) {
        return missing("branch_computations");
      }
      if (pending.true_computation == nullptr) return missing("true_computation");
      if (pending.false_computation == nullptr) return missing("false_computation");
      called = {pending.true_computation, pending.false_computation};
      break;
    }
    default:
      break;
  }
  if (!called.empty()) inst->set_called_computations(std::move(called));
  return absl::OkStatus();
}

}  // namespace hlogym::text_internal

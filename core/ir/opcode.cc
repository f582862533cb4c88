#include "core/ir/opcode.h"

#include <array>

#include "absl/container/flat_hash_map.h"

namespace hlogym {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr std::array<OpcodeInfo, kNumOpcodes> kOpcodeInfo = {{
#define HLOGYM_OPCODE_INFO(enum_name, text, arity) {text, arity},
    HLOGYM_OPCODE_LIST(HLOGYM_OPCODE_INFO)
#undef HLOGYM_OPCODE_INFO
}};

}  // namespace

std::string_view OpcodeName(Opcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].name;
}

int OpcodeArity(Opcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].arity;
}

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<std::string_view, Opcode>();
    for (int i = 0; i < kNumOpcodes; ++i) {
      map->emplace(kOpcodeInfo[i].name, static_cast<Opcode>(i));
    }
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

bool IsElementwiseUnary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh:
    case Opcode::kAsin: case Opcode::kAsinh: case Opcode::kAtan:
    case Opcode::kAtanh: case Opcode::kBitcastConvert: case Opcode::kCbrt:
    case Opcode::kCeil: case Opcode::kClz: case Opcode::kConvert:
    case Opcode::kCopy: case Opcode::kCos: case Opcode::kCosh:
    case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kImag: case Opcode::kIsFinite:
    case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kNegate: case Opcode::kNot: case Opcode::kPopulationCount:
    case Opcode::kReal: case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt: case Opcode::kSign: case Opcode::kSin:
    case Opcode::kSinh: case Opcode::kSqrt: case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2:
    case Opcode::kCompare: case Opcode::kComplex: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMulhi:
    case Opcode::kMultiply: case Opcode::kOr: case Opcode::kPower:
    case Opcode::kRemainder: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
    case Opcode::kStochasticConvert: case Opcode::kSubtract: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(Opcode opcode) {
  return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) ||
         opcode == Opcode::kSelect || opcode == Opcode::kClamp;
}

bool IsCommutative(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum:
    case Opcode::kMinimum: case Opcode::kAnd: case Opcode::kOr:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool HasSideEffect(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAfterAll: case Opcode::kInfeed: case Opcode::kOutfeed:
    case Opcode::kRecv: case Opcode::kRecvDone: case Opcode::kSend:
    case Opcode::kSendDone: case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState: case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
      return true;
    default:
      return false;
  }
}

}  // namespace hlogym

#include "backend/host_ops.h"

namespace hlogym {

std::unique_ptr<HostOp> MakeNativeHostOp(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kScatter: return MakeScatter(instruction);
    case Opcode::kTopK: return MakeTopK(instruction);
    case Opcode::kScan: return MakeScan(instruction);
    case Opcode::kSelectAndScatter: return MakeSelectAndScatter(instruction);
    case Opcode::kSort: return MakeSort(instruction);
    default: return nullptr;
  }
}

}  // namespace hlogym

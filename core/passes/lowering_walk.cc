#include "core/passes/lowering_walk.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

// Whether every array in `shape` is row-major (or has no layout): the
// lowerings build row-major values, and replace an instruction only where
// that keeps its users reading what they read.
bool RowMajor(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (!RowMajor(element)) return false;
    }
    return true;
  }
  return !shape.IsArray() || !shape.has_layout() ||
         shape.layout() == Layout::RowMajor(shape.rank());
}

}  // namespace

std::string CommonLoweringRefusal(const Instruction& inst) {
  if (inst.parent() != nullptr && inst.parent()->IsFusionComputation()) {
    return "inside a fused computation";
  }
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) {
    return "control dependencies";
  }
  bool row_major = RowMajor(inst.shape());
  for (const Instruction* operand : inst.operands()) row_major &= RowMajor(operand->shape());
  return row_major ? "" : "a layout other than row-major";
}

absl::StatusOr<bool> LowerEach(Module& module, Rewriter& rewriter, std::string_view pass,
                               Opcode opcode, const std::function<bool(const Instruction&)>& lowers,
                               const std::function<absl::Status(Instruction*)>& lower) {
  if (rewriter.dry()) {
    return absl::UnimplementedError(
        absl::StrCat("not supported: ", std::string(pass),
                     " in dry mode (it is a backend's lowering, not a choice)"));
  }
  std::vector<Instruction*> found;
  for (const auto& computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == opcode && lowers(*inst)) found.push_back(inst.get());
    }
  }
  for (Instruction* inst : found) RETURN_IF_ERROR(lower(inst));
  return !found.empty();
}

}  // namespace hlogym

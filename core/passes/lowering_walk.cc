#include "core/passes/lowering_walk.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace hlogym {

absl::StatusOr<bool> LowerEach(Module& module, Rewriter& rewriter, std::string_view pass,
                               Opcode opcode,
                               const std::function<bool(const Instruction&)>& lowers,
                               const std::function<absl::Status(Instruction*)>& lower) {
  if (rewriter.dry()) {
    return absl::UnimplementedError(absl::StrCat(
        "not supported: ", std::string(pass), " in dry mode (it is a backend's lowering, not a choice)"));
  }
  std::vector<Instruction*> found;
  for (const auto& computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == opcode && inst->control_predecessors().empty() &&
          inst->control_successors().empty() && lowers(*inst)) {
        found.push_back(inst.get());
      }
    }
  }
  for (Instruction* inst : found) RETURN_IF_ERROR(lower(inst));
  return !found.empty();
}

}  // namespace hlogym

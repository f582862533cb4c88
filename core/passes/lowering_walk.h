// The walk the backend lowerings share (conv-to-gemm, scan-blocking,
// select-and-scatter-to-scatter, topk-to-reductions): they run in apply mode
// only, and each rewrites the instructions of one opcode that sit outside
// fused computations and have no control dependencies.
#pragma once

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

// Gives `lower` each such instruction of `opcode` that `lowers` accepts (in
// a snapshot taken first); whether any was lowered. In dry mode, an error
// naming `pass`.
absl::StatusOr<bool> LowerEach(Module& module, Rewriter& rewriter, std::string_view pass,
                               Opcode opcode,
                               const std::function<bool(const Instruction&)>& lowers,
                               const std::function<absl::Status(Instruction*)>& lower);

}  // namespace hlogym

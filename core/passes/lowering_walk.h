// The walk the backend lowerings share (conv-to-gemm, scan-blocking,
// select-and-scatter-to-scatter, topk-to-reductions): they run in apply mode
// only, and each rewrites instructions of one opcode, leaving those
// CommonLoweringRefusal names.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

// Why no lowering takes `inst`, whatever its opcode; "" when none of these
// holds: it sits in a fused computation, has control dependencies, or has
// an operand or result that is not row-major (the values a lowering builds
// are).
std::string CommonLoweringRefusal(const Instruction& inst);

// Gives `lower` each instruction of `opcode` outside fused computations that
// `lowers` accepts (in a snapshot taken first); whether any was lowered. In
// dry mode, an error naming `pass`.
absl::StatusOr<bool> LowerEach(Module& module, Rewriter& rewriter, std::string_view pass,
                               Opcode opcode, const std::function<bool(const Instruction&)>& lowers,
                               const std::function<absl::Status(Instruction*)>& lower);

}  // namespace hlogym

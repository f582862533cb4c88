// Constant folding ("constant-folding"): an instruction whose operands are
// all constants is evaluated by the reference interpreter and replaced by a
// constant. Like XLA it leaves broadcasts, iotas, parameters, side effects,
// control flow and large results alone (over kMaxFoldedElements elements,
// lower than XLA's 45M so folding stays fast).
#pragma once

#include "core/rewrite/pass.h"

namespace hlogym {

inline constexpr int64_t kMaxFoldedElements = 1 << 20;

class ConstantFoldingPass : public Pass {
 public:
  std::string_view name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
};

}  // namespace hlogym

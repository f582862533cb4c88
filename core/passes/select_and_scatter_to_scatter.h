// Select-and-scatter as a reduce-window and a scatter
// ("select-and-scatter-to-scatter"), the lowering a GPU compiler uses so
// that a max-pool's gradient runs as two kernels rather than on the host:
// a variadic reduce-window picks each window's selected element, as the
// select computation picks it (the first valid element of the window in
// row-major order, replaced by each later one that select does not keep
// over it), carried as its flat position in the operand; a scatter then
// combines each source element into a broadcast of the init value at that
// position with the scatter computation. Windows with no valid element get
// position -1, which the scatter skips, as select-and-scatter drops their
// source. Apply mode only; windows with dilations are left, as are the
// instructions CommonLoweringRefusal names (core/passes/lowering_walk.h);
// SelectAndScatterRefusal says why.
#pragma once

#include <functional>
#include <string>

#include "core/ir/instruction.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class SelectAndScatterToScatterPass : public Pass {
 public:
  // `wanted`: which of the select-and-scatters it could lower it lowers (a
  // backend's choice, e.g. by element type); all when empty.
  explicit SelectAndScatterToScatterPass(std::function<bool(const Instruction&)> wanted = nullptr)
      : wanted_(std::move(wanted)) {}
  std::string_view name() const override { return "select-and-scatter-to-scatter"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  bool idempotent() const override { return true; }

 private:
  std::function<bool(const Instruction&)> wanted_;
};

// Why the pass leaves `select_and_scatter` as it is; "" when it lowers it.
std::string SelectAndScatterRefusal(const Instruction& select_and_scatter);

}  // namespace hlogym

// Pass: a module transformation that makes every change through a Rewriter,
// so the same code runs in apply mode and in dry mode.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

class Pass {
 public:
  virtual ~Pass() = default;
  // The name configs use ("fusion", "algsimp", "cse", ...).
  virtual std::string_view name() const = 0;
  // Walks the module and asks `rewriter` for each rewrite. Passes iterate over
  // snapshots (instructions added during the pass are not revisited) and skip
  // instructions the rewriter removed. Returns whether anything was rewritten
  // (apply mode) or offered (dry mode).
  virtual absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) = 0;
  // Whether an apply-mode run on the module its own apply-mode run just
  // left always changes nothing. A fixed-point pipeline then skips running
  // it again while no other pass has changed the module since.
  virtual bool idempotent() const { return false; }
};

// Runs `pass` in apply mode. Returns whether the module changed.
absl::StatusOr<bool> RunPass(Pass& pass, Module& module);

// Runs `pass` in dry mode and builds the alternative graph. Returns the
// number of alternatives nodes created (0: the pass had nothing to offer).
// On error the candidates it added are pruned again.
absl::StatusOr<int64_t> RunDryPass(Pass& pass, Module& module);

}  // namespace hlogym

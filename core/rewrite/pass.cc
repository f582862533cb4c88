#include "core/rewrite/pass.h"

#include "core/base/status_macros.h"
#include "core/rewrite/prune.h"

namespace hlogym {

absl::StatusOr<bool> RunPass(Pass& pass, Module& module) {
  Rewriter rewriter(&module, RewriteMode::kApply);
  absl::StatusOr<bool> changed = pass.Run(module, rewriter);
  // Free what was unlinked even when the pass failed part-way.
  absl::StatusOr<int64_t> finished = rewriter.Finish();
  if (!changed.ok()) return changed.status();
  if (!finished.ok()) return finished.status();
  return *changed || rewriter.rewrite_count() > 0;
}

absl::StatusOr<int64_t> RunDryPass(Pass& pass, Module& module) {
  Rewriter rewriter(&module, RewriteMode::kDry);
  absl::StatusOr<bool> offered = pass.Run(module, rewriter);
  if (!offered.ok()) {
    Prune(module);  // drop the unused candidates
    return offered.status();
  }
  return rewriter.Finish();
}

}  // namespace hlogym

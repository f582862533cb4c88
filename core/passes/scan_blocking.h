// Scan in blocks ("scan-blocking"), a backend's lowering for cumulative
// scans over long rows with few rows: a GPU scan kernel runs one thread per
// row, each walking its row in order, so cumsum over 4096 rows of 4096 had
// 4096 threads (12x XLA's time on the H100). A scan of the cumulative form
// (one input, one carry, a body (x, c) -> (y, y) with y = x op c, op one of
// add, multiply, maximum, minimum) marked is_associative becomes:
//   1. the same scan within blocks of T elements (the row reshaped to
//      [B, T]), from op's identity: B times the threads, T steps each;
//   2. the same scan of the blocks' totals from the original carry: the
//      value through each block, and the final carry;
//   3. y = op(in-block result, the value through the block before, or the
//      carry for the first), one loop fusion.
// Both scans keep the cumulative form, which every target runs as a kernel.
// Sums are then grouped by block, so floating-point results differ from the
// sequential order by rounding (which is_associative allows). Rows shorter
// than kMinLength, scans with many rows already (kMaxRows) and lengths
// without a divisor in [kMinBlock, kMaxBlock] are left, as are the scans
// CommonLoweringRefusal names (core/passes/lowering_walk.h);
// ScanBlockingRefusal says why. Apply mode only.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/instruction.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class ScanBlockingPass : public Pass {
 public:
  static constexpr int64_t kMinLength = 256;
  static constexpr int64_t kMaxRows = 65536;
  static constexpr int64_t kMinBlock = 16;
  static constexpr int64_t kMaxBlock = 128;

  std::string_view name() const override { return "scan-blocking"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  bool idempotent() const override { return true; }
};

// Why the pass leaves `scan` as it is; "" when it lowers it.
std::string ScanBlockingRefusal(const Instruction& scan);

}  // namespace hlogym

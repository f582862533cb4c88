// Convolution as a matrix product ("conv-to-gemm"), the lowering a GPU
// compiler uses for convolutions it has no library call for: each
// convolution becomes an im2col loop fusion (the input under every window
// position, one row per batch element and output position), a loop fusion
// packing the kernel to [window position x input feature, output feature],
// one dot (batched over feature groups) and a loop fusion putting the
// product into the convolution's dimension order. The dot then runs where
// the backend runs dots best (cuBLAS on the GPU), instead of an elemental
// kernel that rereads its operands once per output element.
//
// The im2col rows are gathered by strided slices of the padded input, one
// per window position, or, when the output has fewer positions than the
// window (a backward-filter convolution: the window is the whole image),
// one per output position. Convolutions needing more than kMaxSlices such
// slices or with batch_group_count > 1 are left as they are, as are those
// CommonLoweringRefusal names (core/passes/lowering_walk.h);
// ConvolutionToGemmRefusal says why. Apply mode only: a lowering, not a
// choice for an agent.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/instruction.h"
#include "core/rewrite/pass.h"

namespace hlogym {

class ConvolutionToGemmPass : public Pass {
 public:
  // The most slices one im2col fusion holds (an elemental concatenate picks
  // among its operands per element).
  static constexpr int64_t kMaxSlices = 64;

  std::string_view name() const override { return "conv-to-gemm"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override;
  bool idempotent() const override { return true; }
};

// Why the pass leaves `conv` as it is; "" when it rewrites it.
std::string ConvolutionToGemmRefusal(const Instruction& conv);

}  // namespace hlogym

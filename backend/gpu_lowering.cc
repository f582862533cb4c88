#include "backend/gpu_lowering.h"

#include <cstdlib>
#include <string_view>

#include "core/base/status_macros.h"
#include "core/passes/convolution_to_gemm.h"

namespace hlogym {
namespace {

bool ConvolutionsStayElemental() {
  const char* choice = std::getenv("HLOGYM_GPU_CONVOLUTION");
  return choice != nullptr && std::string_view(choice) == "elemental";
}

bool HasLowerableConvolution(const Module& module) {
  for (const auto& computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kConvolution && ConvolutionToGemmRefusal(*inst).empty()) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> LowerForGpu(const Module& module) {
  if (ConvolutionsStayElemental() || !HasLowerableConvolution(module)) return nullptr;
  std::unique_ptr<Module> lowered = module.Clone();
  ConvolutionToGemmPass pass;
  RETURN_IF_ERROR(RunPass(pass, *lowered).status());
  return lowered;
}

}  // namespace hlogym

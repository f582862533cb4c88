#include "backend/gpu_lowering.h"

#include <cstdlib>
#include <string_view>

#include "core/base/status_macros.h"
#include "core/passes/convolution_to_gemm.h"
#include "core/passes/select_and_scatter_to_scatter.h"
#include "core/passes/topk_to_reductions.h"

namespace hlogym {
namespace {

bool ConvolutionsStayElemental() {
  const char* choice = std::getenv("HLOGYM_GPU_CONVOLUTION");
  return choice != nullptr && std::string_view(choice) == "elemental";
}

// Whether the scatter a select-and-scatter becomes is one the GPU kernel
// emitter takes (IsGpuScatter: 32- and 64-bit elements); others stay on the
// host's select-and-scatter.
bool ScattersOnTheGpu(const Instruction& select_and_scatter) {
  const PrimitiveType type = select_and_scatter.shape().element_type();
  const int width = ByteWidth(type);
  return (width == 4 || width == 8) && (IsFloat(type) || IsInteger(type));
}

bool Lowers(const Instruction& inst) {
  if (inst.opcode() == Opcode::kConvolution) {
    return !ConvolutionsStayElemental() && ConvolutionToGemmRefusal(inst).empty();
  }
  if (inst.opcode() == Opcode::kTopK) return TopKRefusal(inst).empty();
  return inst.opcode() == Opcode::kSelectAndScatter && ScattersOnTheGpu(inst) &&
         SelectAndScatterRefusal(inst).empty();
}

bool HasLowerable(const Module& module) {
  for (const auto& computation : module.computations()) {
    if (computation->IsFusionComputation()) continue;
    for (const auto& inst : computation->instructions()) {
      if (Lowers(*inst)) return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> LowerForGpu(const Module& module) {
  if (!HasLowerable(module)) return nullptr;
  std::unique_ptr<Module> lowered = module.Clone();
  if (!ConvolutionsStayElemental()) {
    ConvolutionToGemmPass convolutions;
    RETURN_IF_ERROR(RunPass(convolutions, *lowered).status());
  }
  SelectAndScatterToScatterPass select_and_scatters(ScattersOnTheGpu);
  RETURN_IF_ERROR(RunPass(select_and_scatters, *lowered).status());
  TopKToReductionsPass topks;
  RETURN_IF_ERROR(RunPass(topks, *lowered).status());
  return lowered;
}

}  // namespace hlogym

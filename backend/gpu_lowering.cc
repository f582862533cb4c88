#include "backend/gpu_lowering.h"

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"
#include "core/passes/convolution_to_gemm.h"
#include "core/passes/scan_blocking.h"
#include "core/passes/select_and_scatter_to_scatter.h"
#include "core/passes/topk_to_reductions.h"

namespace hlogym {
namespace {

// Whether the scatter a select-and-scatter becomes is one the GPU kernel
// emitter takes (IsGpuScatter: 32- and 64-bit elements); others stay on the
// host's select-and-scatter.
bool ScattersOnTheGpu(const Instruction& select_and_scatter) {
  const PrimitiveType type = select_and_scatter.shape().element_type();
  const int width = ByteWidth(type);
  return (width == 4 || width == 8) && (IsFloat(type) || IsInteger(type));
}

struct Lowering {
  std::string name;  // the pass's
  // Whether the pass rewrites `inst` (as the GPU wants it).
  std::function<bool(const Instruction&)> lowers;
  std::function<std::unique_ptr<Pass>()> make;
};

const std::vector<Lowering>& Lowerings() {
  static const std::vector<Lowering>* lowerings = new std::vector<Lowering>{
      {"conv-to-gemm",
       [](const Instruction& i) {
         return i.opcode() == Opcode::kConvolution && ConvolutionToGemmRefusal(i).empty();
       },
       [] { return std::make_unique<ConvolutionToGemmPass>(); }},
      {"scan-blocking",
       [](const Instruction& i) {
         return i.opcode() == Opcode::kScan && ScanBlockingRefusal(i).empty();
       },
       [] { return std::make_unique<ScanBlockingPass>(); }},
      {"select-and-scatter-to-scatter",
       [](const Instruction& i) {
         return i.opcode() == Opcode::kSelectAndScatter && ScattersOnTheGpu(i) &&
                SelectAndScatterRefusal(i).empty();
       },
       [] { return std::make_unique<SelectAndScatterToScatterPass>(ScattersOnTheGpu); }},
      {"topk-to-reductions",
       [](const Instruction& i) { return i.opcode() == Opcode::kTopK && TopKRefusal(i).empty(); },
       [] { return std::make_unique<TopKToReductionsPass>(); }},
  };
  return *lowerings;
}

// The lowerings HLOGYM_GPU_LOWERINGS names (all when unset; "none" for none).
absl::StatusOr<std::vector<const Lowering*>> Enabled() {
  std::vector<const Lowering*> enabled;
  const char* names = std::getenv("HLOGYM_GPU_LOWERINGS");
  if (names == nullptr) {
    for (const Lowering& l : Lowerings()) enabled.push_back(&l);
    return enabled;
  }
  if (std::string(names) == "none") return enabled;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipEmpty())) {
    const auto it = std::find_if(Lowerings().begin(), Lowerings().end(),
                                 [&](const Lowering& l) { return l.name == name; });
    if (it == Lowerings().end()) {
      std::vector<std::string> known;
      for (const Lowering& l : Lowerings()) known.push_back(l.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "HLOGYM_GPU_LOWERINGS names `", name, "`, which is no GPU lowering: use none or some of ",
          absl::StrJoin(known, ",")));
    }
    enabled.push_back(&*it);
  }
  return enabled;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> LowerForGpu(const Module& module) {
  ASSIGN_OR_RETURN(std::vector<const Lowering*> enabled, Enabled());
  std::vector<const Lowering*> wanted;
  for (const Lowering* l : enabled) {
    bool applies = false;
    for (const auto& computation : module.computations()) {
      if (computation->IsFusionComputation()) continue;
      for (const auto& inst : computation->instructions()) applies = applies || l->lowers(*inst);
    }
    if (applies) wanted.push_back(l);
  }
  if (wanted.empty()) return nullptr;
  std::unique_ptr<Module> lowered = module.Clone();
  for (const Lowering* l : wanted) {
    std::unique_ptr<Pass> pass = l->make();
    RETURN_IF_ERROR(RunPass(*pass, *lowered).status());
  }
  return lowered;
}

}  // namespace hlogym

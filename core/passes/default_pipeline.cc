#include "core/passes/default_pipeline.h"

#include <cstdlib>

#include "core/base/status_macros.h"
#include "core/passes/pass_registry.h"

namespace hlogym {

std::vector<PipelineStage> DefaultPipelineStages() {
  return {
      {"pre", {"call-inliner", "tuple-simplifier"}, 1},
      {"simplification", DefaultSimplificationSpecs(), -1},
      // As XLA's legacy fusion pipeline (one HloPassFix around instruction
      // fusion and multi-output fusion): fusions made by multi-output fusion
      // can take producers (scalar constants) that plain ops could not.
      {"fusion", {"fusion(mode=xla)", "multi-output-fusion(mode=xla)"}, -1},
      {"horizontal-fusion", {"horizontal-fusion(mode=xla)", "fusion(mode=xla)"}, -1},
      {"cleanup", {"cse", "dce"}, 1},
  };
}

std::vector<std::string> DefaultSimplificationSpecs() {
  return {"algsimp", "constant-folding", "cse", "dce"};
}

std::vector<std::string> DefaultPipelineSpecs() {
  std::vector<std::string> specs;
  for (const PipelineStage& stage : DefaultPipelineStages()) {
    specs.insert(specs.end(), stage.specs.begin(), stage.specs.end());
  }
  return specs;
}

absl::StatusOr<Pipeline> BuildPipeline(const std::string& name,
                                       const std::vector<PipelineStage>& stages) {
  Pipeline pipeline(name);
  for (const PipelineStage& stage : stages) {
    Pipeline nested(stage.name, stage.loop_count);
    for (const std::string& spec : stage.specs) {
      ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(spec));
      nested.AddPass(std::move(pass));
    }
    pipeline.AddPipeline(std::move(nested));
  }
  return pipeline;
}

Pipeline DefaultPipeline() {
  absl::StatusOr<Pipeline> pipeline = BuildPipeline("default", DefaultPipelineStages());
  if (!pipeline.ok()) std::abort();  // built-in specs: a programming error
  return *std::move(pipeline);
}

}  // namespace hlogym

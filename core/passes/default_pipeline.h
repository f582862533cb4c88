// The default pipeline: XLA:GPU's simplification and fusion heuristics
// without dry mode. It is the baseline every agent is compared with.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/rewrite/pipeline.h"

namespace hlogym {

// One stage of the default pipeline: its pass specs, run in order,
// loop_count times (-1: to a fixed point, capped at kFixedPointLimit).
struct PipelineStage {
  std::string name;
  std::vector<std::string> specs;
  int loop_count = 1;
};

// The stages, the one place the default pipeline is written down:
//   pre:             call-inliner, tuple-simplifier
//   simplification:  [algsimp, constant-folding, cse, dce] to a fixed point
//   fusion:          [fusion(mode=xla), multi-output-fusion(mode=xla)] to a
//                    fixed point (XLA's legacy HloPassFix around both)
//   horizontal:      [horizontal-fusion(mode=xla), fusion(mode=xla)] to a
//                    fixed point (the new fusions take scalar constants)
//   cleanup:         cse, dce
std::vector<PipelineStage> DefaultPipelineStages();

// The stages' pass specs in order, flattened (each listed once), for
// configs and agents that run the same passes.
std::vector<std::string> DefaultPipelineSpecs();

// The simplification stage's specs (kept for callers of the earlier API).
std::vector<std::string> DefaultSimplificationSpecs();

// Builds a pipeline from stages; fails on an unknown pass spec.
absl::StatusOr<Pipeline> BuildPipeline(const std::string& name,
                                       const std::vector<PipelineStage>& stages);

// The default pipeline (apply mode only). Its passes are all built in, so
// building it cannot fail.
Pipeline DefaultPipeline();

}  // namespace hlogym

// The default pipeline: XLA's simplification and fusion heuristics without
// dry mode. It is the baseline every agent is compared with.
#pragma once

#include <string>
#include <vector>

#include "core/rewrite/pipeline.h"

namespace hlogym {

// Simplification passes run to a fixed point before fusion.
std::vector<std::string> DefaultSimplificationSpecs();
// call-inliner, tuple-simplifier, the simplification loop, fusion(mode=xla)
// to a fixed point, then cse and dce.
Pipeline DefaultPipeline();

}  // namespace hlogym

// Graph limits: whether a module's observation fits an environment's padded
// arrays (N_max, E_max, A_max, K_max), checked when a reset or step produces
// the graph, so that an oversized graph is an error naming the limit and the
// benchmark, never a truncated observation or an out-of-range action row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/features/graph_features.h"
#include "core/ir/module.h"
#include "core/rewrite/decisions.h"

namespace hlogym {

// What an observation of `module` would hold; the same counts as
// CountGraph, computed in one pass over the instructions without ordering
// them (cheap enough to run at every step).
struct GraphSize {
  int64_t nodes = 0;
  int64_t edges = 0;
  int64_t alternatives = 0;
  int64_t max_choices = 0;  // the most operands of one alternatives node
};
GraphSize MeasureGraph(const Module& module, NodeScope scope = NodeScope::kAll);
// The same, and FindAlternatives(module) into `*alternatives` from the same
// pass, with node indices counted over `scope`'s nodes: an env step does
// both over every instruction, most of them in candidates' fused
// computations, and the walk is one cache miss after another (each walk was
// ~3% of a gpt2 step). Only computations holding an alternatives node are
// ordered.
// With `entry_order`, the entry's MakePostOrder() goes there when the walk
// makes it (the entry holds an alternatives node); it is cleared otherwise.
GraphSize MeasureGraph(const Module& module, std::vector<AlternativeNode>* alternatives,
                       std::vector<Instruction*>* entry_order = nullptr,
                       NodeScope scope = NodeScope::kAll);

// OK when the graph fits; otherwise RESOURCE_EXHAUSTED naming the benchmark,
// the env, the module and every limit it exceeds, e.g. "benchmark
// `random_beta` (module `jit__lambda`) does not fit env `fusion-v0`: 1961
// alternatives but max_alternatives is 1024; raise max_alternatives in the
// env config or leave this module out of the dataset".
absl::Status CheckGraphFits(const GraphSize& size, const FeatureLimits& limits,
                            const std::string& env_id, const std::string& benchmark,
                            const std::string& module_name);

}  // namespace hlogym

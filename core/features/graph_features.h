// Graph features: a module (usually an alternative graph) as padded node,
// edge and alternative arrays, written straight into caller-owned buffers
// (the environment pool's batch rows). Nodes are numbered in NodeOrder, so
// node indices match decisions. docs/observation.md documents every column.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "core/ir/module.h"
#include "core/ir/node_order.h"

namespace hlogym {

struct FeatureLimits {
  int64_t max_nodes = 4096;         // N_max
  int64_t max_edges = 16384;        // E_max
  int64_t max_alternatives = 1024;  // A_max
  int64_t max_choices = 8;          // K_max
};

// Number of dimensions stored per shape; larger ranks keep their first 8.
inline constexpr int kMaxFeatureDims = 8;

// Columns of node_features[N_max, kNodeFeatureCount] (float32).
enum NodeFeature : int {
  kNodeOpcode = 0,        // Opcode enum value (also in node_opcode)
  kNodeElementType,       // PrimitiveType enum value
  kNodeRank,              // -1 for tuples, 0 for scalars and tokens
  kNodeDims,              // kMaxFeatureDims columns: dims, 0-padded
  kNodeLogElements = kNodeDims + kMaxFeatureDims,  // log2(1 + elements)
  kNodeLogBytes,          // log2(1 + bytes of the result)
  kNodeTupleSize,         // elements of a tuple result, else 0
  kNodeInFusion,          // 1 inside a fused computation
  kNodeComputation,       // index of its computation in module order (among those observed)
  kNodeIsEntry,           // 1 in the entry computation
  kNodeIsRoot,            // 1 for a computation's root
  kNodeOperandCount,
  kNodeUserCount,
  kNodeIsAlternatives,    // 1 for an `alternatives` node
  kNodeIsCandidate,       // 1 if operand k>0 of some alternatives node
  kNodeAttrs,             // kNodeAttrCount columns, per opcode family
};
inline constexpr int kNodeAttrCount = 24;
inline constexpr int kNodeFeatureCount = kNodeAttrs + kNodeAttrCount;

// Columns of edge_features[E_max, kEdgeFeatureCount] (float32). An edge goes
// from a producer to its consumer.
enum EdgeFeature : int {
  kEdgeOperandIndex = 0,  // operand position at the consumer (-1: not operand)
  kEdgeType,              // EdgeType
  kEdgeElementType,       // producer's element type
  kEdgeRank,              // producer's rank (-1 tuple)
  kEdgeLogElements,       // log2(1 + producer's elements)
  kEdgeDims,              // kMaxFeatureDims columns: producer's dims
};
inline constexpr int kEdgeFeatureCount = kEdgeDims + kMaxFeatureDims;

enum class EdgeType : int {
  kOperand = 0,       // ordinary data edge
  kCandidate = 1,     // operand k>0 of an alternatives node
  kCall = 2,          // a called computation's root -> the calling instruction
  kControl = 3,       // control dependency
};

// One environment's observation: pointers to its rows of the batch buffers.
// Everything past the used count is written as padding (zeros, masks 0,
// edge indices -1), so reused buffers never leak stale data.
struct ObservationView {
  float* node_features;       // [N_max, kNodeFeatureCount]
  int32_t* node_opcode;       // [N_max]
  uint8_t* node_mask;         // [N_max]
  int32_t* edge_index;        // [2, E_max]: row 0 sources, row 1 targets
  float* edge_features;       // [E_max, kEdgeFeatureCount]
  uint8_t* edge_mask;         // [E_max]
  int32_t* in_edge_offsets;   // [N_max + 1]: CSR by target node
  int32_t* alt_nodes;         // [A_max] node index of each alternatives node
  uint8_t* alt_valid;         // [A_max]
  int32_t* alt_num_choices;   // [A_max]
  uint8_t* alt_mask;          // [A_max, K_max]: 1 for legal choices
};

struct GraphCounts {
  int64_t nodes = 0;
  int64_t edges = 0;
  int64_t alternatives = 0;
};

// Which threads write a graph's rows. kArena: a large graph's rows in
// chunks on the current TBB arena's threads that are free, for a sync pool
// step, whose threads done with their envs would otherwise wait for its
// largest env. Not for an async pool, whose threads always have envs to
// step: a thread taking a chunk there makes the writer wait for it (14%
// fewer async steps at 16 envs on 2 threads; docs/benchmarks.md, "Stop 33").
enum class RowWriters { kCallingThread, kArena };

// Counts what WriteObservation would write, without writing.
GraphCounts CountGraph(const Module& module, NodeScope scope = NodeScope::kAll);

// Writes the module's nodes in `scope` into `view`. Fails, naming the limit,
// if the graph does not fit (never truncates); the view is then left all
// padding.
absl::StatusOr<GraphCounts> WriteObservation(const Module& module,
                                             const FeatureLimits& limits,
                                             const ObservationView& view,
                                             NodeScope scope = NodeScope::kAll);

// The same for a view written again and again (an environment pool's batch
// rows): `extent` says how much of the view the last write used (all of it
// is padding past that), so only [0, max(this, last)) is cleared, not the
// whole padded view; it is then set to this write's counts (zero on error).
// A fresh view needs all padding and *extent = {}.
absl::StatusOr<GraphCounts> WriteObservation(
    const Module& module, const FeatureLimits& limits, const ObservationView& view,
    GraphCounts* extent, RowWriters writers = RowWriters::kCallingThread,
    NodeScope scope = NodeScope::kAll);

}  // namespace hlogym

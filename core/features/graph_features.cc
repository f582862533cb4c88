#include "core/features/graph_features.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/base/parallel.h"
#include "core/base/prefetch.h"
#include "core/features/attribute_features.h"
#include "core/ir/node_order.h"
#include "core/ir/unique_id_index.h"

namespace hlogym {
namespace {

// log2(1 + n) as a float, for sizes: a module's nodes share few distinct
// element and byte counts, and two log2 calls per node were 1.3% of a pool
// step (perf, 16 envs). Direct-mapped by a multiplicative hash of n; a miss
// computes the same expression, so the values are the ones log2 gives.
class Log2Memo {
 public:
  float Of(int64_t n) {
    Slot& slot = slots_[(static_cast<uint64_t>(n) * 0x9e3779b97f4a7c15ull) >> (64 - kBits)];
    if (slot.key != n) {
      slot.key = n;
      slot.value = static_cast<float>(std::log2(1.0 + static_cast<double>(n)));
    }
    return slot.value;
  }

 private:
  static constexpr int kBits = 8;
  struct Slot {
    int64_t key = -1;  // sizes are never negative
    float value = 0.f;
  };
  Slot slots_[1 << kBits];
};

// Writes a shape's type, rank, dims and size at the given columns.
void PutShape(const Shape& shape, float* type, float* rank, float* dims,
              float* log_elements, Log2Memo& log2_of) {
  *type = static_cast<float>(shape.element_type());
  if (shape.IsTuple()) {
    *rank = -1.f;
    *log_elements = 0.f;
    return;
  }
  *rank = static_cast<float>(shape.rank());
  const int64_t n = std::min<int64_t>(shape.rank(), kMaxFeatureDims);
  for (int64_t i = 0; i < n; ++i) dims[i] = static_cast<float>(shape.dim(i));
  *log_elements = shape.IsArray() ? log2_of.Of(shape.element_count()) : 0.f;
}

// A large graph's instructions are out of cache by the time each pass below
// reaches them (a 20K-node module is several MiB of them): each pass
// prefetches the instruction a few nodes ahead, its first two lines (opcode,
// shape, operands).
constexpr size_t kNodeBytesRead = 2 * kCacheLine;

// Every edge of the graph, grouped by target in node order.
struct Edge {
  int32_t source;
  int32_t target;
  int32_t operand_index;
  EdgeType type;
};

// The graph in node order with the lookups the arrays need. One per thread,
// reused: a pool writes an observation per env step, and fresh vectors and a
// hash map of up to 32K instructions were a malloc (often a
// malloc_consolidate) each, for every one of them.
struct Graph {
  std::vector<Instruction*> nodes;   // NodeOrder
  std::vector<int32_t> computation;  // per node: its computation's index in module order
  std::vector<int32_t> first_edge;   // per node, and one past: CSR offsets by target
  std::vector<uint8_t> candidate;    // per node: operand k>0 of an alternatives node
  std::vector<Edge> edges;
  std::vector<int32_t> alternatives;  // node indices

  // Node index by instruction: by unique id where the nodes' ids are
  // distinct and dense enough (the usual case inside a module), else hashed
  // by address. Both give the same indices.
  std::vector<int32_t> by_id;
  int64_t id_base = 0;
  bool use_map = false;
  absl::flat_hash_map<const Instruction*, int32_t> by_address;

  // -1 when `inst` is no node of the graph.
  int32_t Find(const Instruction* inst) const {
    if (use_map) {
      auto it = by_address.find(inst);
      return it == by_address.end() ? -1 : it->second;
    }
    const int64_t slot = inst->unique_id() - id_base;
    if (slot < 0 || slot >= static_cast<int64_t>(by_id.size())) return -1;
    const int32_t i = by_id[static_cast<size_t>(slot)];
    // An instruction from elsewhere may share an id with a node.
    return i >= 0 && nodes[static_cast<size_t>(i)] == inst ? i : -1;
  }
  // For operands and control predecessors, which are always nodes (throws
  // std::out_of_range otherwise, as a map's at() would).
  int32_t At(const Instruction* inst) const {
    const int32_t i = Find(inst);
    if (i < 0) throw std::out_of_range("operand outside the module's computations");
    return i;
  }
  void Index();
};

void Graph::Index() {
  const int64_t n = static_cast<int64_t>(nodes.size());
  use_map = false;
  by_id.clear();
  if (n == 0) return;
  if (IndexByUniqueId(nodes, 64 * n + 4096, int32_t{-1}, int32_t{0}, by_id, id_base)) {
    for (int64_t i = 0; i < n; ++i) {
      by_id[static_cast<size_t>(nodes[i]->unique_id() - id_base)] = static_cast<int32_t>(i);
    }
    return;
  }
  use_map = true;
  by_address.clear();
  by_address.reserve(nodes.size());
  for (int64_t i = 0; i < n; ++i) by_address[nodes[i]] = static_cast<int32_t>(i);
}

// The calling thread's graph of `module` (valid until its next call). A
// call edge needs its callee's root to be a node, so none goes into a
// computation out of `scope`.
const Graph& BuildGraph(const Module& module, NodeScope scope) {
  thread_local Graph g;
  FillNodeOrder(module, g.nodes, &g.computation, scope);
  g.first_edge.clear();
  g.edges.clear();
  g.alternatives.clear();
  g.Index();
  const size_t n = g.nodes.size();
  g.candidate.assign(n, 0);
  g.first_edge.reserve(n + 1);
  for (size_t t = 0; t < n; ++t) {
    g.first_edge.push_back(static_cast<int32_t>(g.edges.size()));
    PrefetchAhead(g.nodes, t, kNodeBytesRead);
    const Instruction* inst = g.nodes[t];
    const int32_t target = static_cast<int32_t>(t);
    const bool is_alt = inst->opcode() == Opcode::kAlternatives;
    if (is_alt) g.alternatives.push_back(target);
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const int32_t source = g.At(inst->operand(k));
      EdgeType type = EdgeType::kOperand;
      if (is_alt && k > 0) {
        type = EdgeType::kCandidate;
        g.candidate[source] = 1;
      }
      g.edges.push_back({source, target, static_cast<int32_t>(k), type});
    }
    for (const Computation* callee : inst->called_computations()) {
      if (callee == nullptr || callee->root() == nullptr) continue;
      const int32_t root = g.Find(callee->root());
      if (root >= 0) g.edges.push_back({root, target, -1, EdgeType::kCall});
    }
    for (const Instruction* pred : inst->control_predecessors()) {
      g.edges.push_back({g.At(pred), target, -1, EdgeType::kControl});
    }
  }
  g.first_edge.push_back(static_cast<int32_t>(g.edges.size()));
  return g;
}

// Writes padding over nodes [0, n), edges [0, e) and alternative slots
// [0, a), and all of in_edge_offsets.
void ClearPrefix(const FeatureLimits& l, const ObservationView& v, const GraphCounts& upto) {
  const int64_t n = std::min(upto.nodes, l.max_nodes);
  const int64_t e = std::min(upto.edges, l.max_edges);
  const int64_t a = std::min(upto.alternatives, l.max_alternatives);
  std::fill_n(v.node_features, n * kNodeFeatureCount, 0.f);
  std::fill_n(v.node_opcode, n, -1);
  std::fill_n(v.node_mask, n, 0);
  std::fill_n(v.edge_index, e, -1);
  std::fill_n(v.edge_index + l.max_edges, e, -1);
  std::fill_n(v.edge_features, e * kEdgeFeatureCount, 0.f);
  std::fill_n(v.edge_mask, e, 0);
  std::fill_n(v.in_edge_offsets, l.max_nodes + 1, 0);
  std::fill_n(v.alt_nodes, a, -1);
  std::fill_n(v.alt_valid, a, 0);
  std::fill_n(v.alt_num_choices, a, 0);
  std::fill_n(v.alt_mask, a * l.max_choices, 0);
}

// Writes padding over nodes [from.nodes, to.nodes), edges [from.edges,
// to.edges) and slots [from.alternatives, to.alternatives): what the last
// write used past this one. in_edge_offsets is not touched.
void ClearBetween(const FeatureLimits& l, const ObservationView& v, const GraphCounts& from,
                  const GraphCounts& to) {
  const int64_t n0 = from.nodes, n1 = std::min(to.nodes, l.max_nodes);
  const int64_t e0 = from.edges, e1 = std::min(to.edges, l.max_edges);
  const int64_t a0 = from.alternatives, a1 = std::min(to.alternatives, l.max_alternatives);
  if (n1 > n0) {
    std::fill(v.node_features + n0 * kNodeFeatureCount, v.node_features + n1 * kNodeFeatureCount,
              0.f);
    std::fill(v.node_opcode + n0, v.node_opcode + n1, -1);
    std::fill(v.node_mask + n0, v.node_mask + n1, 0);
  }
  if (e1 > e0) {
    std::fill(v.edge_index + e0, v.edge_index + e1, -1);
    std::fill(v.edge_index + l.max_edges + e0, v.edge_index + l.max_edges + e1, -1);
    std::fill(v.edge_features + e0 * kEdgeFeatureCount, v.edge_features + e1 * kEdgeFeatureCount,
              0.f);
    std::fill(v.edge_mask + e0, v.edge_mask + e1, 0);
  }
  if (a1 > a0) {
    std::fill(v.alt_nodes + a0, v.alt_nodes + a1, -1);
    std::fill(v.alt_valid + a0, v.alt_valid + a1, 0);
    std::fill(v.alt_num_choices + a0, v.alt_num_choices + a1, 0);
    std::fill(v.alt_mask + a0 * l.max_choices, v.alt_mask + a1 * l.max_choices, 0);
  }
}

// Rows per chunk of a parallel write: a few hundred microseconds of rows,
// so that a chunk outweighs handing it to another thread (an edge row is a
// quarter of a node row's work).
constexpr int64_t kNodeRowsPerChunk = 2048;
constexpr int64_t kEdgeRowsPerChunk = 4 * kNodeRowsPerChunk;

// Writes the rows of nodes [lo, hi).
void WriteNodeRows(const Graph& g, const ObservationView& view, int64_t lo, int64_t hi) {
  thread_local Log2Memo log2_of;
  for (int64_t i = lo; i < hi; ++i) {
    PrefetchAhead(g.nodes, static_cast<size_t>(i), kNodeBytesRead);
    const Instruction* inst = g.nodes[i];
    float* f = view.node_features + i * kNodeFeatureCount;
    std::fill_n(f, kNodeAttrs, 0.f);  // EncodeAttributes writes all its columns
    const Shape& shape = inst->shape();
    f[kNodeOpcode] = static_cast<float>(inst->opcode());
    PutShape(shape, &f[kNodeElementType], &f[kNodeRank], &f[kNodeDims],
             &f[kNodeLogElements], log2_of);
    f[kNodeLogBytes] = log2_of.Of(shape.byte_size());
    f[kNodeTupleSize] = shape.IsTuple() ? static_cast<float>(shape.tuple_size()) : 0.f;
    const Computation* comp = inst->parent();
    f[kNodeInFusion] = comp->IsFusionComputation() ? 1.f : 0.f;
    f[kNodeComputation] = static_cast<float>(g.computation[i]);
    f[kNodeIsEntry] = comp->IsEntry() ? 1.f : 0.f;
    f[kNodeIsRoot] = inst->IsRoot() ? 1.f : 0.f;
    f[kNodeOperandCount] = static_cast<float>(inst->operand_count());
    f[kNodeUserCount] = static_cast<float>(inst->user_count());
    f[kNodeIsAlternatives] = inst->opcode() == Opcode::kAlternatives ? 1.f : 0.f;
    f[kNodeIsCandidate] = g.candidate[i] ? 1.f : 0.f;
    EncodeAttributes(*inst, f + kNodeAttrs);
    view.node_opcode[i] = static_cast<int32_t>(inst->opcode());
    view.node_mask[i] = 1;
  }
}

// Writes the rows of edges [lo, hi); their producers' node rows must be
// written.
void WriteEdgeRows(const Graph& g, const FeatureLimits& limits, const ObservationView& view,
                   int64_t lo, int64_t hi) {
  for (int64_t j = lo; j < hi; ++j) {
    const Edge& edge = g.edges[j];
    view.edge_index[j] = edge.source;
    view.edge_index[limits.max_edges + j] = edge.target;
    view.edge_mask[j] = 1;
    float* f = view.edge_features + j * kEdgeFeatureCount;
    f[kEdgeOperandIndex] = static_cast<float>(edge.operand_index);
    f[kEdgeType] = static_cast<float>(edge.type);
    // The producer's shape columns, as PutShape wrote them into its node's
    // row (no second log2 per edge).
    const float* p = view.node_features + static_cast<int64_t>(edge.source) * kNodeFeatureCount;
    f[kEdgeElementType] = p[kNodeElementType];
    f[kEdgeRank] = p[kNodeRank];
    f[kEdgeLogElements] = p[kNodeLogElements];
    std::copy_n(p + kNodeDims, kMaxFeatureDims, f + kEdgeDims);
  }
}

GraphCounts Whole(const FeatureLimits& l) {
  return {l.max_nodes, l.max_edges, l.max_alternatives};
}

}  // namespace

GraphCounts CountGraph(const Module& module, NodeScope scope) {
  const Graph& g = BuildGraph(module, scope);
  return {static_cast<int64_t>(g.nodes.size()), static_cast<int64_t>(g.edges.size()),
          static_cast<int64_t>(g.alternatives.size())};
}

absl::StatusOr<GraphCounts> WriteObservation(const Module& module,
                                             const FeatureLimits& limits,
                                             const ObservationView& view, NodeScope scope) {
  GraphCounts whole = Whole(limits);
  return WriteObservation(module, limits, view, &whole, RowWriters::kCallingThread, scope);
}

absl::StatusOr<GraphCounts> WriteObservation(const Module& module,
                                             const FeatureLimits& limits,
                                             const ObservationView& view, GraphCounts* extent,
                                             RowWriters writers, NodeScope scope) {
  const GraphCounts last = extent != nullptr ? *extent : Whole(limits);
  const Graph& g = BuildGraph(module, scope);
  const int64_t n = static_cast<int64_t>(g.nodes.size());
  const int64_t e = static_cast<int64_t>(g.edges.size());
  const int64_t a = static_cast<int64_t>(g.alternatives.size());
  auto too_big = [&](const char* what, int64_t count, const char* limit, int64_t max) {
    ClearPrefix(limits, view, last);
    if (extent != nullptr) *extent = GraphCounts();
    return absl::ResourceExhaustedError(absl::StrCat(
        "module `", module.name(), "` has ", count, " ", what, " but ", limit,
        " is ", max, "; raise ", limit, " in the env config"));
  };
  if (n > limits.max_nodes) return too_big("nodes", n, "max_nodes", limits.max_nodes);
  if (e > limits.max_edges) return too_big("edges", e, "max_edges", limits.max_edges);
  if (a > limits.max_alternatives) {
    return too_big("alternatives", a, "max_alternatives", limits.max_alternatives);
  }
  for (int32_t node : g.alternatives) {
    const int64_t k = g.nodes[node]->operand_count();
    if (k > limits.max_choices) {
      return too_big("choices at one alternatives node", k, "max_choices",
                     limits.max_choices);
    }
  }
  // Each node, edge and slot of the graph is written whole below (its row
  // zeroed first where not every column is set); past them, padding goes
  // only over what the last write used. Everything further is padding
  // already. Writing in one pass, rather than clearing the prefix and
  // writing it again, touches each byte once.
  ClearBetween(limits, view, {n, e, a}, last);
  if (extent != nullptr) *extent = GraphCounts{n, e, a};

  // With kArena, in chunks on whichever of the arena's threads are free: a
  // sync pool step waits for its largest env (a gpt2 step with 20-40K
  // nodes), and a thread done with its own envs takes part of that one's
  // rows. Each chunk writes its own rows, so the arrays are the same.
  if (writers == RowWriters::kArena) {
    ParallelForIsolated(0, n, kNodeRowsPerChunk, [&](int64_t lo, int64_t hi) {
      WriteNodeRows(g, view, lo, hi);
    });
    // After every node row: an edge row copies its producer's shape columns.
    ParallelForIsolated(0, e, kEdgeRowsPerChunk, [&](int64_t lo, int64_t hi) {
      WriteEdgeRows(g, limits, view, lo, hi);
    });
  } else {
    WriteNodeRows(g, view, 0, n);
    WriteEdgeRows(g, limits, view, 0, e);
  }

  // CSR offsets by target (edges are grouped by target in node order);
  // padding nodes get empty ranges at the end, so every entry past the
  // graph's nodes holds its edge count. Past the last write's nodes they
  // hold its edge count already.
  int32_t* offsets = view.in_edge_offsets;
  std::copy(g.first_edge.begin(), g.first_edge.end(), offsets);
  const int64_t written_tail = std::min(std::max(n, last.nodes), limits.max_nodes);
  std::fill(offsets + n + 1, offsets + written_tail + 1, static_cast<int32_t>(e));
  if (last.edges != e) {
    std::fill(offsets + written_tail + 1, offsets + limits.max_nodes + 1,
              static_cast<int32_t>(e));
  }

  for (int64_t s = 0; s < a; ++s) {
    const int32_t node = g.alternatives[s];
    const int64_t k = g.nodes[node]->operand_count();
    view.alt_nodes[s] = node;
    view.alt_valid[s] = 1;
    view.alt_num_choices[s] = static_cast<int32_t>(k);
    uint8_t* mask = view.alt_mask + s * limits.max_choices;
    std::fill_n(mask, k, 1);
    std::fill(mask + k, mask + limits.max_choices, 0);
  }
  return GraphCounts{n, e, a};
}

}  // namespace hlogym

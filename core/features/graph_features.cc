#include "core/features/graph_features.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/features/attribute_features.h"
#include "core/ir/node_order.h"

namespace hlogym {
namespace {

// Writes a shape's type, rank, dims and size at the given columns.
void PutShape(const Shape& shape, float* type, float* rank, float* dims,
              float* log_elements) {
  *type = static_cast<float>(shape.element_type());
  if (shape.IsTuple()) {
    *rank = -1.f;
    *log_elements = 0.f;
    return;
  }
  *rank = static_cast<float>(shape.rank());
  const int64_t n = std::min<int64_t>(shape.rank(), kMaxFeatureDims);
  for (int64_t i = 0; i < n; ++i) dims[i] = static_cast<float>(shape.dim(i));
  *log_elements = shape.IsArray()
                      ? static_cast<float>(std::log2(1.0 + shape.element_count()))
                      : 0.f;
}

// Every edge of the graph, grouped by target in node order.
struct Edge {
  int32_t source;
  int32_t target;
  int32_t operand_index;
  EdgeType type;
};

struct Graph {
  std::vector<Instruction*> nodes;
  absl::flat_hash_map<const Instruction*, int32_t> index;
  std::vector<Edge> edges;
  std::vector<int32_t> alternatives;  // node indices
};

Graph BuildGraph(const Module& module) {
  Graph g;
  g.nodes = NodeOrder(module);
  g.index.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    g.index[g.nodes[i]] = static_cast<int32_t>(i);
  }
  for (size_t t = 0; t < g.nodes.size(); ++t) {
    const Instruction* inst = g.nodes[t];
    const int32_t target = static_cast<int32_t>(t);
    const bool is_alt = inst->opcode() == Opcode::kAlternatives;
    if (is_alt) g.alternatives.push_back(target);
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      EdgeType type = is_alt && k > 0 ? EdgeType::kCandidate : EdgeType::kOperand;
      g.edges.push_back({g.index.at(inst->operand(k)), target,
                         static_cast<int32_t>(k), type});
    }
    for (const Computation* callee : inst->called_computations()) {
      if (callee == nullptr || callee->root() == nullptr) continue;
      auto it = g.index.find(callee->root());
      if (it != g.index.end()) g.edges.push_back({it->second, target, -1, EdgeType::kCall});
    }
    for (const Instruction* pred : inst->control_predecessors()) {
      g.edges.push_back({g.index.at(pred), target, -1, EdgeType::kControl});
    }
  }
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

GraphCounts Whole(const FeatureLimits& l) {
  return {l.max_nodes, l.max_edges, l.max_alternatives};
}

}  // namespace

GraphCounts CountGraph(const Module& module) {
  Graph g = BuildGraph(module);
  return {static_cast<int64_t>(g.nodes.size()), static_cast<int64_t>(g.edges.size()),
          static_cast<int64_t>(g.alternatives.size())};
}

absl::StatusOr<GraphCounts> WriteObservation(const Module& module,
                                             const FeatureLimits& limits,
                                             const ObservationView& view) {
  GraphCounts whole = Whole(limits);
  return WriteObservation(module, limits, view, &whole);
}

absl::StatusOr<GraphCounts> WriteObservation(const Module& module,
                                             const FeatureLimits& limits,
                                             const ObservationView& view,
                                             GraphCounts* extent) {
  const GraphCounts last = extent != nullptr ? *extent : Whole(limits);
  Graph g = BuildGraph(module);
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
  // Everything this write leaves alone past its counts is padding already.
  ClearPrefix(limits, view,
              {std::max(n, last.nodes), std::max(e, last.edges), std::max(a, last.alternatives)});
  if (extent != nullptr) *extent = GraphCounts{n, e, a};

  // Operands k>0 of alternatives nodes are candidate roots.
  absl::flat_hash_set<const Instruction*> candidates;
  for (int32_t node : g.alternatives) {
    const Instruction* alt = g.nodes[node];
    for (int64_t k = 1; k < alt->operand_count(); ++k) candidates.insert(alt->operand(k));
  }
  absl::flat_hash_map<const Computation*, int32_t> computation_index;
  for (size_t i = 0; i < module.computations().size(); ++i) {
    computation_index[module.computations()[i].get()] = static_cast<int32_t>(i);
  }

  for (int64_t i = 0; i < n; ++i) {
    const Instruction* inst = g.nodes[i];
    float* f = view.node_features + i * kNodeFeatureCount;
    const Shape& shape = inst->shape();
    f[kNodeOpcode] = static_cast<float>(inst->opcode());
    PutShape(shape, &f[kNodeElementType], &f[kNodeRank], &f[kNodeDims],
             &f[kNodeLogElements]);
    f[kNodeLogBytes] = static_cast<float>(std::log2(1.0 + shape.byte_size()));
    f[kNodeTupleSize] = shape.IsTuple() ? static_cast<float>(shape.tuple_size()) : 0.f;
    const Computation* comp = inst->parent();
    f[kNodeInFusion] = comp->IsFusionComputation() ? 1.f : 0.f;
    f[kNodeComputation] = static_cast<float>(computation_index.at(comp));
    f[kNodeIsEntry] = comp->IsEntry() ? 1.f : 0.f;
    f[kNodeIsRoot] = inst->IsRoot() ? 1.f : 0.f;
    f[kNodeOperandCount] = static_cast<float>(inst->operand_count());
    f[kNodeUserCount] = static_cast<float>(inst->user_count());
    f[kNodeIsAlternatives] = inst->opcode() == Opcode::kAlternatives ? 1.f : 0.f;
    f[kNodeIsCandidate] = candidates.contains(inst) ? 1.f : 0.f;
    EncodeAttributes(*inst, f + kNodeAttrs);
    view.node_opcode[i] = static_cast<int32_t>(inst->opcode());
    view.node_mask[i] = 1;
  }

  int32_t* offsets = view.in_edge_offsets;
  for (int64_t j = 0; j < e; ++j) {
    const Edge& edge = g.edges[j];
    view.edge_index[j] = edge.source;
    view.edge_index[limits.max_edges + j] = edge.target;
    view.edge_mask[j] = 1;
    float* f = view.edge_features + j * kEdgeFeatureCount;
    f[kEdgeOperandIndex] = static_cast<float>(edge.operand_index);
    f[kEdgeType] = static_cast<float>(edge.type);
    PutShape(g.nodes[edge.source]->shape(), &f[kEdgeElementType], &f[kEdgeRank],
             &f[kEdgeDims], &f[kEdgeLogElements]);
    ++offsets[edge.target + 1];
  }
  // Edges are grouped by target already; prefix sums give the CSR offsets,
  // and padding nodes get empty ranges at the end.
  for (int64_t i = 0; i < limits.max_nodes; ++i) offsets[i + 1] += offsets[i];

  for (int64_t s = 0; s < a; ++s) {
    const int32_t node = g.alternatives[s];
    const int64_t k = g.nodes[node]->operand_count();
    view.alt_nodes[s] = node;
    view.alt_valid[s] = 1;
    view.alt_num_choices[s] = static_cast<int32_t>(k);
    std::fill_n(view.alt_mask + s * limits.max_choices, k, 1);
  }
  return GraphCounts{n, e, a};
}

}  // namespace hlogym

// Tests of the graph observation: node/edge/alternative arrays and limits.
#include <algorithm>
#include <vector>

#include "core/features/graph_features.h"
#include "core/ir/module.h"
#include "core/ir/node_order.h"
#include "core/rewrite/decisions.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/pass.h"
#include "gtest/gtest.h"
#include "oneapi/tbb/task_arena.h"
#include "tests/core/fusion_test_util.h"

namespace hlogym {
namespace {

// Owns buffers for one observation and the view onto them.
struct Buffers {
  explicit Buffers(const FeatureLimits& l)
      : node_features(l.max_nodes * kNodeFeatureCount, 7.f),
        node_opcode(l.max_nodes, 7), node_mask(l.max_nodes, 7),
        edge_index(2 * l.max_edges, 7), edge_features(l.max_edges * kEdgeFeatureCount, 7.f),
        edge_mask(l.max_edges, 7), in_edge_offsets(l.max_nodes + 1, 7),
        alt_nodes(l.max_alternatives, 7), alt_valid(l.max_alternatives, 7),
        alt_num_choices(l.max_alternatives, 7),
        alt_mask(l.max_alternatives * l.max_choices, 7) {}
  ObservationView view() {
    return {node_features.data(), node_opcode.data(), node_mask.data(),
            edge_index.data(), edge_features.data(), edge_mask.data(),
            in_edge_offsets.data(), alt_nodes.data(), alt_valid.data(),
            alt_num_choices.data(), alt_mask.data()};
  }
  std::vector<float> node_features;
  std::vector<int32_t> node_opcode;
  std::vector<uint8_t> node_mask;
  std::vector<int32_t> edge_index;
  std::vector<float> edge_features;
  std::vector<uint8_t> edge_mask;
  std::vector<int32_t> in_edge_offsets;
  std::vector<int32_t> alt_nodes;
  std::vector<uint8_t> alt_valid;
  std::vector<int32_t> alt_num_choices;
  std::vector<uint8_t> alt_mask;
};

// main(p: f32[4,8]) = add(negate(p), p) ; root is the add.
std::unique_ptr<Module> MakeModule() {
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Shape s = Shape::Array(PrimitiveType::kF32, {4, 8});
  Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* neg = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* add = comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {neg, p}));
  comp->set_root(add);
  module->set_entry(module->AddComputation(std::move(comp)));
  return module;
}

// Offers copy(negate(x)) as a replacement of every negate.
class OfferCopyPass : public Pass {
 public:
  std::string_view name() const override { return "offer-copy"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    for (Instruction* inst : module.entry()->MakePostOrder()) {
      if (inst->opcode() != Opcode::kNegate) continue;
      Instruction* copy = rewriter.Add(
          module.entry(), Instruction::Create(Opcode::kCopy, inst->shape(), {inst}));
      if (absl::Status s = rewriter.Replace(inst, copy); !s.ok()) return s;
    }
    return true;
  }
};

TEST(GraphFeaturesTest, NodesAndEdgesOfAPlainModule) {
  auto module = MakeModule();
  FeatureLimits limits{8, 8, 2, 3};
  Buffers b(limits);
  GraphCounts counts = WriteObservation(*module, limits, b.view()).value();
  EXPECT_EQ(counts.nodes, 3);
  EXPECT_EQ(counts.edges, 3);
  EXPECT_EQ(counts.alternatives, 0);
  // Node 0 is the parameter, 1 the negate, 2 the add (post-order).
  EXPECT_EQ(b.node_opcode[0], static_cast<int>(Opcode::kParameter));
  EXPECT_EQ(b.node_opcode[2], static_cast<int>(Opcode::kAdd));
  EXPECT_EQ(b.node_opcode[3], -1);
  const float* add = &b.node_features[2 * kNodeFeatureCount];
  EXPECT_EQ(add[kNodeRank], 2.f);
  EXPECT_EQ(add[kNodeDims], 4.f);
  EXPECT_EQ(add[kNodeDims + 1], 8.f);
  EXPECT_EQ(add[kNodeDims + 2], 0.f);
  EXPECT_FLOAT_EQ(add[kNodeLogElements], std::log2(33.f));
  EXPECT_EQ(add[kNodeIsRoot], 1.f);
  EXPECT_EQ(add[kNodeOperandCount], 2.f);
  EXPECT_EQ(b.node_features[0 * kNodeFeatureCount + kNodeUserCount], 2.f);
  EXPECT_EQ((std::vector<uint8_t>(b.node_mask.begin(), b.node_mask.begin() + 4)),
            (std::vector<uint8_t>{1, 1, 1, 0}));
  // Edges: p->neg (operand 0), neg->add (0), p->add (1); padding is -1.
  EXPECT_EQ(b.edge_index[0], 0);
  EXPECT_EQ(b.edge_index[8 + 0], 1);
  EXPECT_EQ(b.edge_index[1], 1);
  EXPECT_EQ(b.edge_index[8 + 1], 2);
  EXPECT_EQ(b.edge_index[2], 0);
  EXPECT_EQ(b.edge_index[8 + 2], 2);
  EXPECT_EQ(b.edge_index[3], -1);
  EXPECT_EQ(b.edge_features[2 * kEdgeFeatureCount + kEdgeOperandIndex], 1.f);
  EXPECT_EQ(b.edge_mask[2], 1);
  EXPECT_EQ(b.edge_mask[3], 0);
  // CSR by target: node 0 has none, node 1 one, node 2 two; padding empty.
  EXPECT_EQ(std::vector<int32_t>(b.in_edge_offsets.begin(), b.in_edge_offsets.end()),
            (std::vector<int32_t>{0, 0, 1, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(b.alt_valid[0], 0);
  EXPECT_EQ(b.alt_nodes[0], -1);
}

TEST(GraphFeaturesTest, AlternativesAreListedWithTheirMasks) {
  auto module = MakeModule();
  OfferCopyPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 1);
  FeatureLimits limits{8, 8, 2, 3};
  Buffers b(limits);
  GraphCounts counts = WriteObservation(*module, limits, b.view()).value();
  EXPECT_EQ(counts.alternatives, 1);
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_EQ(b.alt_nodes[0], alts[0].node_index);
  EXPECT_EQ(b.node_opcode[b.alt_nodes[0]], static_cast<int>(Opcode::kAlternatives));
  EXPECT_EQ(b.alt_valid[0], 1);
  EXPECT_EQ(b.alt_valid[1], 0);
  EXPECT_EQ(b.alt_num_choices[0], 2);
  EXPECT_EQ((std::vector<uint8_t>(b.alt_mask.begin(), b.alt_mask.begin() + 6)),
            (std::vector<uint8_t>{1, 1, 0, 0, 0, 0}));
  // The copy is a candidate root, reached by a candidate edge.
  std::vector<Instruction*> order = NodeOrder(*module);
  int copy_index = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i]->opcode() == Opcode::kCopy) copy_index = static_cast<int>(i);
  }
  ASSERT_GE(copy_index, 0);
  EXPECT_EQ(b.node_features[copy_index * kNodeFeatureCount + kNodeIsCandidate], 1.f);
  bool found = false;
  for (int j = 0; j < counts.edges; ++j) {
    if (b.edge_index[j] == copy_index && b.edge_index[8 + j] == b.alt_nodes[0]) {
      EXPECT_EQ(b.edge_features[j * kEdgeFeatureCount + kEdgeType],
                static_cast<float>(EdgeType::kCandidate));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// Nodes are found by unique id where the module's ids are distinct and dense,
// else by address: ids far apart, or shared, give the same observation.
TEST(GraphFeaturesTest, SparseOrSharedUniqueIdsGiveTheSameObservation) {
  auto module = MakeModule();
  OfferCopyPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 1);
  const FeatureLimits limits{8, 8, 2, 3};
  Buffers dense(limits);
  ASSERT_TRUE(WriteObservation(*module, limits, dense.view()).ok());
  const std::vector<Instruction*> order = NodeOrder(*module);
  ASSERT_GE(order.size(), 4u);
  auto expect_same = [&](const char* what) {
    Buffers b(limits);
    ASSERT_TRUE(WriteObservation(*module, limits, b.view()).ok()) << what;
    EXPECT_EQ(b.node_features, dense.node_features) << what;
    EXPECT_EQ(b.edge_index, dense.edge_index) << what;
    EXPECT_EQ(b.edge_features, dense.edge_features) << what;
    EXPECT_EQ(b.in_edge_offsets, dense.in_edge_offsets) << what;
    EXPECT_EQ(b.alt_nodes, dense.alt_nodes) << what;
    EXPECT_EQ(b.alt_mask, dense.alt_mask) << what;
  };
  for (size_t i = 0; i < order.size(); ++i) {
    order[i]->set_unique_id(static_cast<int64_t>(i) * 1000000);
  }
  expect_same("ids a million apart");
  for (Instruction* inst : order) inst->set_unique_id(5);
  expect_same("one id shared by all");
  for (size_t i = 0; i < order.size(); ++i) {
    order[i]->set_unique_id(static_cast<int64_t>(order.size() - i));
  }
  expect_same("ids reversed");
}

// A large graph's rows are written in chunks on the arena's free threads:
// the arrays must be those one thread writes (chunks meeting at their
// bounds, every edge row after its producer's node row).
TEST(GraphFeaturesTest, RowsWrittenOnManyThreadsAreThoseOfOne) {
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  const Shape s = Shape::Array(PrimitiveType::kF32, {4, 8});
  Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* last = p;
  for (int i = 0; i < 6000; ++i) {
    last = comp->AddInstruction(i % 2 == 0 ? Instruction::Create(Opcode::kNegate, s, {last})
                                           : Instruction::Create(Opcode::kAdd, s, {last, p}));
  }
  comp->set_root(last);
  module->set_entry(module->AddComputation(std::move(comp)));
  OfferCopyPass pass;  // 3000 alternatives: 12001 nodes
  ASSERT_EQ(RunDryPass(pass, *module).value(), 3000);
  const FeatureLimits limits{16384, 32768, 4096, 3};
  auto write = [&](int threads) {
    auto b = std::make_unique<Buffers>(limits);
    GraphCounts extent = {limits.max_nodes, limits.max_edges, limits.max_alternatives};
    tbb::task_arena arena(threads);
    arena.execute([&] {
      EXPECT_EQ(
          WriteObservation(*module, limits, b->view(), &extent, RowWriters::kArena).value().nodes,
          12001);
    });
    return b;
  };
  const std::unique_ptr<Buffers> one = write(1);
  const std::unique_ptr<Buffers> many = write(4);
  EXPECT_EQ(many->node_features, one->node_features);
  EXPECT_EQ(many->node_opcode, one->node_opcode);
  EXPECT_EQ(many->node_mask, one->node_mask);
  EXPECT_EQ(many->edge_index, one->edge_index);
  EXPECT_EQ(many->edge_features, one->edge_features);
  EXPECT_EQ(many->edge_mask, one->edge_mask);
  EXPECT_EQ(many->in_edge_offsets, one->in_edge_offsets);
  EXPECT_EQ(many->alt_mask, one->alt_mask);
  // The last node's row is written, not padding.
  EXPECT_EQ(one->node_mask[12000], 1);
  EXPECT_EQ(one->node_mask[12001], 0);
}

TEST(GraphFeaturesTest, GraphsThatDoNotFitAreErrorsNamingTheLimit) {
  auto module = MakeModule();
  Buffers b(FeatureLimits{2, 8, 2, 3});
  absl::Status nodes = WriteObservation(*module, {2, 8, 2, 3}, b.view()).status();
  EXPECT_NE(nodes.message().find("has 3 nodes but max_nodes is 2"), std::string::npos)
      << nodes;
  EXPECT_EQ(b.node_mask[0], 0);  // left as padding
  Buffers b2(FeatureLimits{8, 2, 2, 3});
  absl::Status edges = WriteObservation(*module, {8, 2, 2, 3}, b2.view()).status();
  EXPECT_NE(edges.message().find("max_edges is 2"), std::string::npos) << edges;
  OfferCopyPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 1);
  Buffers b3(FeatureLimits{8, 8, 2, 1});
  absl::Status choices = WriteObservation(*module, {8, 8, 2, 1}, b3.view()).status();
  EXPECT_NE(choices.message().find("max_choices is 1"), std::string::npos) << choices;
}

// A fusion candidate's fused computation repeats its members' bodies, which
// are nodes already, so an observation may leave it out: every node the
// entry reaches otherwise stays, in the same order, and the reducer stays
// though the candidate's copy of the reduce calls it too (the original
// reduce calls it).
TEST(GraphFeaturesTest, CandidateBodiesCanBeLeftOut) {
  std::unique_ptr<Module> parsed = fusion_test::ParseWithReducers(R"(
ENTRY main {
  x = f32[16,32] parameter(0)
  zero = f32[] constant(0)
  e = f32[16,32] exponential(x)
  n = f32[16,32] negate(e)
  ROOT r = f32[16] reduce(n, zero), dimensions={1}, to_apply=add_f32
})");
  ASSERT_NE(parsed, nullptr);
  Module& module = *parsed;
  ASSERT_GE(RunDryPass(*CreatePass("fusion").value(), module).value(), 2);
  // Left out: the candidates' fused computations, and max_f32, which
  // nothing calls (a module pruned after declining every alternative would
  // not have it either).
  const Computation* uncalled = module.FindComputation("max_f32");
  ASSERT_NE(uncalled, nullptr);
  std::vector<Instruction*> expected;
  int64_t in_bodies = 0;
  for (Instruction* inst : NodeOrder(module)) {
    const Instruction* fusion = inst->parent()->fusion_instruction();
    if (fusion != nullptr && IsCandidate(*fusion)) {
      ++in_bodies;
    } else if (inst->parent() != uncalled) {
      expected.push_back(inst);
    }
  }
  ASSERT_GT(in_bodies, 0);
  const NodeScope scope = NodeScope::kWithoutCandidateBodies;
  std::vector<Instruction*> order;
  std::vector<int32_t> computations;
  FillNodeOrder(module, order, &computations, scope);
  EXPECT_EQ(order, expected);
  const Instruction* reducer_root = module.FindComputation("add_f32")->root();
  EXPECT_NE(std::find(order.begin(), order.end(), reducer_root), order.end());
  // The computations left are numbered one after another from 0.
  ASSERT_EQ(computations.size(), order.size());
  EXPECT_EQ(computations.front(), 0);
  for (size_t i = 1; i < computations.size(); ++i) {
    EXPECT_LE(computations[i] - computations[i - 1], 1);
    EXPECT_EQ(computations[i] == computations[i - 1],
              order[i]->parent() == order[i - 1]->parent());
  }

  const FeatureLimits limits{64, 256, 8, 4};
  Buffers b(limits);
  const GraphCounts counts = WriteObservation(module, limits, b.view(), scope).value();
  EXPECT_EQ(counts.nodes, static_cast<int64_t>(order.size()));
  const GraphCounts counted = CountGraph(module, scope);
  EXPECT_EQ(counted.nodes, counts.nodes);
  EXPECT_EQ(counted.edges, counts.edges);
  EXPECT_EQ(counted.alternatives, counts.alternatives);
  EXPECT_EQ(counts.alternatives, CountGraph(module).alternatives);
  for (int64_t s = 0; s < counts.alternatives; ++s) {
    EXPECT_EQ(b.node_opcode[b.alt_nodes[s]], static_cast<int32_t>(Opcode::kAlternatives));
  }
  // Candidates stay as nodes, without call edges (their bodies are gone);
  // the original reduce keeps its call edge from the reducer's root.
  int64_t candidates = 0, calls = 0;
  for (int64_t i = 0; i < counts.nodes; ++i) {
    candidates += b.node_features[i * kNodeFeatureCount + kNodeIsCandidate] == 1.f;
  }
  for (int64_t j = 0; j < counts.edges; ++j) {
    if (b.edge_features[j * kEdgeFeatureCount + kEdgeType] != static_cast<float>(EdgeType::kCall)) {
      continue;
    }
    ++calls;
    const int32_t target = b.edge_index[limits.max_edges + j];
    EXPECT_EQ(b.node_features[target * kNodeFeatureCount + kNodeIsCandidate], 0.f);
    EXPECT_EQ(order[target]->opcode(), Opcode::kReduce);
    EXPECT_EQ(order[b.edge_index[j]], reducer_root);
  }
  EXPECT_GE(candidates, 2);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hlogym

// Graph limits: a graph larger than the observation (N_max, E_max, A_max,
// K_max) is an error naming the limit and the benchmark, at the reset or
// step that produces it; the environment is left as it was and the pool goes
// on with the other environments.
#include "envs/graph_limits.h"

#include <string>

#include "core/ir/node_order.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/text/printer.h"
#include "envs/env_config.h"
#include "envs/env_pool.h"
#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

using testing::TestBenchmarks;
using testing::TestSpec;

const std::string kData = std::string(HLOGYM_SOURCE_DIR) + "/data";

// Offers to rewrite every exponential(x) as exponential(negate(negate(x))):
// exact, and each accepted offer grows the graph by two nodes, so a step can
// produce a graph larger than the one reset showed.
class WidenExponentials : public Pass {
 public:
  std::string_view name() const override { return "test-widen-exp"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    bool changed = false;
    for (const auto& comp : module.computations()) {
      for (Instruction* inst : comp->MakePostOrder()) {
        if (inst->opcode() != Opcode::kExp) continue;
        Instruction* x = inst->operand(0);
        Instruction* n1 = rewriter.Add(
            comp.get(), Instruction::Create(Opcode::kNegate, x->shape(), {x}));
        Instruction* n2 = rewriter.Add(
            comp.get(), Instruction::Create(Opcode::kNegate, x->shape(), {n1}));
        Instruction* e = rewriter.Add(
            comp.get(), Instruction::Create(Opcode::kExp, inst->shape(), {n2}));
        if (absl::Status s = rewriter.Replace(inst, e); !s.ok()) return s;
        changed = true;
      }
    }
    return changed;
  }
};

void RegisterWidenPass() {
  static const bool registered = [] {
    (void)RegisterPass({"test-widen-exp", "test only",
                        [](PassOptions&) -> absl::StatusOr<std::unique_ptr<Pass>> {
                          return std::make_unique<WidenExponentials>();
                        }});
    return true;
  }();
  (void)registered;
}

TEST(GraphLimitsTest, MeasureGraphCountsWhatTheObservationHolds) {
  RegisterWidenPass();
  auto benchmarks = TestBenchmarks();
  for (int64_t b = 0; b < benchmarks->size(); ++b) {
    std::unique_ptr<Module> module = benchmarks->source(b).Clone();
    for (const char* spec : {"test-double-negation", "test-widen-exp"}) {
      ASSERT_TRUE(RunDryPass(*CreatePass(spec).value(), *module).ok());
      const GraphSize size = MeasureGraph(*module);
      const GraphCounts counts = CountGraph(*module);
      EXPECT_EQ(size.nodes, counts.nodes) << spec;
      EXPECT_EQ(size.edges, counts.edges) << spec;
      EXPECT_EQ(size.alternatives, counts.alternatives) << spec;
    }
  }
  // Real modules with fused computations, calls and fusion offers.
  auto corpus = BenchmarkSet::Load({kData + "/corpus/small/hlo/softmax_4096x1024_small.hlo",
                                    kData + "/corpus/small/hlo/layernorm_8192x1024_small.hlo"},
                                   {"algsimp", "dce"},
                                   std::make_shared<CostModelSource>(H100Device()))
                    .value();
  for (int64_t b = 0; b < corpus->size(); ++b) {
    std::unique_ptr<Module> module = corpus->Prepared(b).value()->module->Clone();
    for (int round = 0; round < 2; ++round) {
      ASSERT_GT(RunDryPass(*CreatePass("fusion").value(), *module).value(), 0);
      for (NodeScope scope : {NodeScope::kAll, NodeScope::kWithoutCandidateBodies}) {
        const GraphSize size = MeasureGraph(*module, scope);
        const GraphCounts counts = CountGraph(*module, scope);
        EXPECT_EQ(size.nodes, counts.nodes) << corpus->name(b);
        EXPECT_EQ(size.edges, counts.edges) << corpus->name(b);
        EXPECT_EQ(size.alternatives, counts.alternatives) << corpus->name(b);
      }
      // Fusion candidates have bodies to leave out.
      EXPECT_LT(MeasureGraph(*module, NodeScope::kWithoutCandidateBodies).nodes,
                MeasureGraph(*module).nodes)
          << corpus->name(b);
      const GraphSize size = MeasureGraph(*module);
      std::vector<int64_t> take(size.alternatives, 1);
      ASSERT_TRUE(ApplyChoices(*module, take).ok());
    }
  }
}

// The walk that measures also finds the alternatives nodes, as
// FindAlternatives does: the same nodes, indices and order, and the same size.
TEST(GraphLimitsTest, MeasureGraphFindsTheAlternativesFindAlternativesFinds) {
  auto corpus = BenchmarkSet::Load({kData + "/corpus/small/hlo/softmax_4096x1024_small.hlo",
                                    kData + "/corpus/small/hlo/layernorm_8192x1024_small.hlo"},
                                   {"algsimp", "dce"},
                                   std::make_shared<CostModelSource>(H100Device()))
                    .value();
  int64_t checked = 0;
  for (int64_t b = 0; b < corpus->size(); ++b) {
    std::unique_ptr<Module> module = corpus->Prepared(b).value()->module->Clone();
    // Measured before each dry pass and with its alternatives in place.
    for (int round = 0; round < 4; ++round) {
      std::vector<AlternativeNode> found = {{nullptr, -7}};  // replaced, not appended to
      const GraphSize with = MeasureGraph(*module, &found);
      const GraphSize without = MeasureGraph(*module);
      EXPECT_EQ(with.nodes, without.nodes);
      EXPECT_EQ(with.edges, without.edges);
      EXPECT_EQ(with.alternatives, without.alternatives);
      EXPECT_EQ(with.max_choices, without.max_choices);
      const std::vector<AlternativeNode> expected = FindAlternatives(*module);
      ASSERT_EQ(found.size(), expected.size()) << corpus->name(b) << " round " << round;
      for (size_t i = 0; i < found.size(); ++i) {
        EXPECT_EQ(found[i].node, expected[i].node);
        EXPECT_EQ(found[i].node_index, expected[i].node_index);
      }
      checked += static_cast<int64_t>(found.size());
      // Without candidates' bodies: the same nodes, indexed in that order.
      std::vector<AlternativeNode> found_in_scope;
      MeasureGraph(*module, &found_in_scope, nullptr, NodeScope::kWithoutCandidateBodies);
      std::vector<Instruction*> order;
      FillNodeOrder(*module, order, nullptr, NodeScope::kWithoutCandidateBodies);
      ASSERT_EQ(found_in_scope.size(), expected.size());
      for (size_t i = 0; i < found_in_scope.size(); ++i) {
        EXPECT_EQ(found_in_scope[i].node, expected[i].node);
        ASSERT_LT(found_in_scope[i].node_index, static_cast<int64_t>(order.size()));
        EXPECT_EQ(order[found_in_scope[i].node_index], expected[i].node);
      }
      // The entry's post-order comes out when the entry was ordered (it holds
      // the alternatives), and is empty otherwise.
      std::vector<Instruction*> entry_order = {module->entry()->root()};  // replaced
      MeasureGraph(*module, &found, &entry_order);
      if (expected.empty()) {
        EXPECT_TRUE(entry_order.empty());
      } else {
        EXPECT_EQ(entry_order, module->entry()->MakePostOrder());
      }
      if (!expected.empty()) {
        ASSERT_TRUE(ApplyChoices(*module, std::vector<int64_t>(expected.size(), 1)).ok());
      } else if (RunDryPass(*CreatePass("fusion").value(), *module).value() == 0) {
        break;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(GraphLimitsTest, ErrorNamesEveryLimitExceeded) {
  GraphSize size{10, 20, 3, 5};
  EXPECT_TRUE(CheckGraphFits(size, {10, 20, 3, 5}, "e", "b", "m").ok());
  absl::Status s = CheckGraphFits(size, {9, 20, 2, 4}, "fusion-v0", "bench", "mod");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "benchmark `bench` (module `mod`) does not fit env `fusion-v0`: 10 nodes but "
            "max_nodes is 9, 3 alternatives but max_alternatives is 2, 5 choices at one "
            "alternatives node but max_choices is 4; raise max_nodes, max_alternatives, "
            "max_choices in the env config or leave this module out of the dataset");
}

TEST(GraphLimitsTest, ResetThatDoesNotFitKeepsTheEpisodeInProgress) {
  EnvSpec spec = TestSpec();
  spec.limits.max_alternatives = 2;  // negations3 offers 3
  auto env = HloRewriteEnv::Create(spec, TestBenchmarks(), 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 1).ok());
  ASSERT_TRUE(env->Step({1, 0}).ok());
  const uint64_t fingerprint = env->info().fingerprint;
  absl::Status s = env->Reset(std::nullopt, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "benchmark `negations3` (module `negations`) does not fit env `test-v0`: 3 "
            "alternatives but max_alternatives is 2; raise max_alternatives in the env "
            "config or leave this module out of the dataset");
  EXPECT_EQ(env->info().benchmark, 1);
  EXPECT_EQ(env->info().step, 1);
  EXPECT_EQ(env->info().fingerprint, fingerprint);
  EXPECT_EQ(env->record().choices.size(), 1u);
  EXPECT_EQ(env->choice_counts().size(), 1u);
  ASSERT_TRUE(env->Step({1}).ok());  // the episode goes on
}

TEST(GraphLimitsTest, StepThatGrowsPastTheLimitChangesNothing) {
  RegisterWidenPass();
  EnvSpec spec = TestSpec();
  spec.dry_passes = {"test-widen-exp"};
  // negations1 with its offer: 8 nodes; each accepted offer adds 2.
  spec.limits = {11, 64, 8, 4};
  auto env = HloRewriteEnv::Create(spec, TestBenchmarks(), 1).value();
  ASSERT_TRUE(env->Reset(std::nullopt, 0).ok());
  ASSERT_TRUE(env->Step({1}).ok());  // 10 nodes
  const EnvInfo before = env->info();
  const std::string text = PrintModule(env->module());
  absl::StatusOr<double> reward = env->Step({1});
  ASSERT_FALSE(reward.ok());
  EXPECT_EQ(reward.status().message(),
            "benchmark `negations1` (module `negations`) does not fit env `test-v0`: 12 "
            "nodes but max_nodes is 11; raise max_nodes in the env config or leave this "
            "module out of the dataset");
  // The step worked on a copy: same module, same facts.
  EXPECT_EQ(PrintModule(env->module()), text);
  EXPECT_EQ(env->info().fingerprint, before.fingerprint);
  EXPECT_EQ(env->info().step, 1);
  EXPECT_EQ(env->info().current_runtime, before.current_runtime);
  EXPECT_EQ(env->record().choices.size(), 1u);
  EXPECT_EQ(env->choice_counts(), std::vector<int32_t>{2});
  EXPECT_TRUE(env->Step({0}).ok());  // keeping the original fits
  EXPECT_EQ(env->info().step, 2);
}

TEST(GraphLimitsTest, PoolShowsTheErrorAndGoesOnWithTheOtherEnvs) {
  RegisterWidenPass();
  EnvSpec spec = TestSpec();
  spec.limits.max_alternatives = 2;
  auto pool = EnvPool::Create(spec, TestBenchmarks(), {4, 0, 2, /*seed=*/0}).value();
  std::shared_ptr<Batch> batch = pool->Reset(3, {}).value();
  const int64_t width = spec.limits.max_alternatives;
  const std::string message =
      "benchmark `negations3` (module `negations`) does not fit env `test-v0`: 3 "
      "alternatives but max_alternatives is 2; raise max_alternatives in the env config "
      "or leave this module out of the dataset";
  // Over many resets every env draws negations3 now and then; those rows carry
  // the error and an empty observation, the others are ordinary.
  int failed = 0, fine = 0;
  for (int step = 0; step < 40; ++step) {
    for (int64_t e = 0; e < batch->size(); ++e) {
      const ObservationView obs = batch->Observation(e);
      if (!batch->errors()[e].empty()) {
        ++failed;
        EXPECT_EQ(batch->errors()[e], message);
        EXPECT_TRUE(batch->truncated(e));
        EXPECT_EQ(batch->benchmark(e), -1);
        EXPECT_EQ(obs.node_mask[0], 0);
        EXPECT_EQ(obs.alt_nodes[0], -1);
      } else {
        ++fine;
        EXPECT_NE(batch->benchmark(e), 2);
        EXPECT_EQ(obs.node_mask[0], 1);
        EXPECT_LE(batch->num_alternatives(e), width);
      }
    }
    batch = pool->Step(std::vector<int64_t>(4 * width, 0)).value();
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(fine, 0);
}

TEST(GraphLimitsTest, RandomBetaUnderFusionNamesMaxAlternatives) {
  // The dataset module random_beta offers 1961 fusions on 17284 nodes under
  // fusion-v0; widened node and edge limits leave max_alternatives exceeded.
  EnvConfig config = LoadEnvConfig(std::string(HLOGYM_SOURCE_DIR) + "/configs/fusion-v0.yaml")
                         .value();
  auto benchmarks =
      BenchmarkSet::Load({kData + "/dataset/hlo/random_beta.hlo"}, config.pre_passes,
                         std::make_shared<CostModelSource>(H100Device()))
          .value();
  EnvSpec spec;
  spec.id = config.id;
  spec.dry_passes = config.dry_passes;
  spec.dry_stages = config.dry_stages;
  spec.post_passes = config.post_passes;
  spec.limits = {32768, 131072, config.max_alternatives, config.max_choices};
  auto env = HloRewriteEnv::Create(spec, benchmarks, 0).value();
  absl::Status s = env->Reset();
  EXPECT_EQ(s.message(),
            "benchmark `random_beta` (module `jit__lambda`) does not fit env `fusion-v0`: "
            "1961 alternatives but max_alternatives is 1024; raise max_alternatives in "
            "the env config or leave this module out of the dataset");
  EXPECT_FALSE(env->in_episode());
}

}  // namespace
}  // namespace hlogym

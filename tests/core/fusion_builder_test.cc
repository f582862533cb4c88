// The fusion builder (members inlined into one fused computation, only what
// the wanted outputs need) and RemoveDeadFusionOutputs.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/fingerprint.h"
#include "core/ir/name_registry.h"
#include "core/passes/fusion_builder.h"
#include "core/passes/fusion_outputs.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "tests/core/fusion_test_util.h"

namespace hlogym {
namespace {

using fusion_test::CheckAgainst;
using fusion_test::CountFusedOpcode;
using fusion_test::CountOpcode;
using fusion_test::Dry;
using fusion_test::Fusions;
using fusion_test::ParseWithReducers;
using fusion_test::RandomEpisode;

Instruction* Find(const Module& module, std::string_view name) {
  for (const auto& inst : module.entry()->instructions()) {
    if (inst->name() == name) return inst.get();
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// A three-output fusion m (negate, exponential, reduce of x) whose second
// output nobody reads, and a consumer of its first.
constexpr std::string_view kThreeOutputs = R"(
fc {
  a = f32[8,4] parameter(0)
  zero = f32[] constant(0)
  n = f32[8,4] negate(a)
  e = f32[8,4] exponential(a)
  r = f32[8] reduce(a, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[8,4], f32[8,4], f32[8]) tuple(n, e, r)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  m = (f32[8,4], f32[8,4], f32[8]) fusion(x), kind=kInput, calls=fc
  g0 = f32[8,4] get-tuple-element(m), index=0
  g2 = f32[8] get-tuple-element(m), index=2
  c = f32[8,4] abs(g0)
  ROOT out = (f32[8,4], f32[8]) tuple(c, g2)
}
)";

TEST(FusionBuilderTest, CarriesOnlyTheOutputsItIsAskedFor) {
  auto module = ParseWithReducers(kThreeOutputs);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  Instruction* m = Find(*module, "m");
  Instruction* c = Find(*module, "c");
  Rewriter rewriter(module.get(), RewriteMode::kApply);
  FusionAnalysis analysis(*module, /*dry=*/false);
  // Outputs read: 0 and 2; the exponential is not carried.
  std::vector<FusedValue> outputs = MemberOutputs(m, analysis);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].index, 0);
  EXPECT_EQ(outputs[1].index, 2);
  // Producer-consumer merge of m into c, exporting m's read outputs as well.
  outputs.insert(outputs.begin(), FusedValue{c, -1});
  absl::StatusOr<Instruction*> fused = BuildFusion(rewriter, {{m, c}, outputs});
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ((*fused)->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(CountFusedOpcode(**fused, Opcode::kExp), 0);
  EXPECT_EQ(CountFusedOpcode(**fused, Opcode::kNegate), 1);
  EXPECT_EQ(CountFusedOpcode(**fused, Opcode::kAbs), 1);
  EXPECT_EQ((*fused)->shape().tuple_size(), 3);
  EXPECT_EQ((*fused)->operand_count(), 1);
  ASSERT_TRUE(ReplaceMemberByOutputs(rewriter, analysis, c, *fused, outputs).ok());
  ASSERT_TRUE(ReplaceMemberByOutputs(rewriter, analysis, m, *fused, outputs).ok());
  ASSERT_TRUE(rewriter.Finish().ok());
  EXPECT_EQ(Fusions(*module).size(), 1u);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

// Two siblings of x and y merged as (a, b) or as (b, a): the same fused
// computation (parameters numbered from the root, outputs ordered by what
// they compute) and the same operands, whichever order the members came in.
// FusedBodyOrders hands out each body's MakePostOrder(), made once, and a
// fusion built with it is the one built without it.
TEST(FusionBuilderTest, BodyOrdersAreThePostOrdersAndBuildTheSameFusion) {
  std::string printed[2];
  for (int with_orders = 0; with_orders < 2; ++with_orders) {
    auto module = ParseWithReducers(kThreeOutputs);
    ASSERT_NE(module, nullptr);
    Instruction* m = Find(*module, "m");
    Instruction* c = Find(*module, "c");
    FusedBodyOrders orders;
    if (with_orders == 1) {
      const std::vector<Instruction*>& order = orders.Of(*m->fused_computation());
      EXPECT_EQ(order, m->fused_computation()->MakePostOrder());
      EXPECT_EQ(&orders.Of(*m->fused_computation()), &order);  // made once
    }
    Rewriter rewriter(module.get(), RewriteMode::kDry);
    FusionAnalysis analysis(*module, /*dry=*/true);
    std::vector<FusedValue> outputs = MemberOutputs(m, analysis);
    outputs.insert(outputs.begin(), FusedValue{c, -1});
    absl::StatusOr<Instruction*> fused =
        BuildFusion(rewriter, {{m, c}, outputs}, nullptr, with_orders == 1 ? &orders : nullptr);
    ASSERT_TRUE(fused.ok()) << fused.status();
    printed[with_orders] = PrintModule(*module);
  }
  EXPECT_EQ(printed[0], printed[1]);
}

// Every candidate a dry fusion pass builds on the corpus twins is stored in
// post-order and known to be (no walk is needed to order it), with parameter
// k named param_k, whichever order its parameters were first made in.
TEST(FusionBuilderTest, CandidateBodiesAreStoredInPostOrder) {
  int64_t bodies = 0, renumbered = 0;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> module = fusion_test::LoadFile(path);
    ASSERT_NE(module, nullptr) << path;
    for (const char* spec : {"fusion", "multi-output-fusion", "horizontal-fusion"}) {
      if (Dry(spec, *module) <= 0) continue;
      for (const auto& computation : module->computations()) {
        if (!computation->IsFusionComputation()) continue;
        ++bodies;
        EXPECT_TRUE(computation->stored_in_post_order()) << computation->name();
        absl::flat_hash_set<const Instruction*> before;
        bool first_made_in_order = true;
        int64_t next_number = 0;
        for (const auto& inst : computation->instructions()) {
          for (const Instruction* operand : inst->operands()) {
            EXPECT_TRUE(before.contains(operand))
                << path.stem() << ": `" << inst->name() << "` is stored before its operand `"
                << operand->name() << "`";
          }
          before.insert(inst.get());
          if (inst->opcode() != Opcode::kParameter) continue;
          const int64_t k = inst->parameter_number();
          first_made_in_order &= k == next_number++;
          EXPECT_EQ(computation->parameter(k), inst.get());
          EXPECT_EQ(NameStem(inst->name()), absl::StrCat("param_", k)) << inst->name();
        }
        renumbered += !first_made_in_order;
      }
      break;  // one pass's candidates per module
    }
  }
  EXPECT_GT(bodies, 1000);
  // The case this is about: parameters numbered in another order than made.
  EXPECT_GT(renumbered, 50);
}

TEST(FusionBuilderTest, MergeOrderDoesNotChangeTheFusion) {
  constexpr std::string_view kSiblings = R"(
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  z = f32[8] parameter(2)
  a = f32[8] multiply(z, y)
  b = f32[8] add(x, y)
  ROOT out = (f32[8], f32[8]) tuple(a, b)
}
)";
  std::vector<uint64_t> fingerprints;
  std::vector<std::vector<std::string>> operand_names;
  for (const bool swapped : {false, true}) {
    auto module = ParseWithReducers(kSiblings);
    ASSERT_NE(module, nullptr);
    auto original = module->Clone();
    Instruction* a = Find(*module, "a");
    Instruction* b = Find(*module, "b");
    Rewriter rewriter(module.get(), RewriteMode::kApply);
    FusionAnalysis analysis(*module, /*dry=*/false);
    std::vector<Instruction*> members = swapped ? std::vector<Instruction*>{b, a}
                                                : std::vector<Instruction*>{a, b};
    std::vector<FusedValue> outputs = {{members[0], -1}, {members[1], -1}};
    std::vector<FusedValue> order;
    absl::StatusOr<Instruction*> fused = BuildFusion(rewriter, {members, outputs}, &order);
    ASSERT_TRUE(fused.ok()) << fused.status();
    ASSERT_EQ(order.size(), 2u);
    // The order says which output is which: the fused root computes them so.
    const Instruction* root = (*fused)->fused_computation()->root();
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_EQ(root->operand(i)->opcode(), order[i].member->opcode());
    }
    fingerprints.push_back(Fingerprint(*(*fused)->fused_computation()));
    std::vector<std::string> names;
    for (const Instruction* operand : (*fused)->operands()) names.push_back(operand->name());
    operand_names.push_back(names);
    ASSERT_TRUE(ReplaceMemberByOutputs(rewriter, analysis, a, *fused, order).ok());
    ASSERT_TRUE(ReplaceMemberByOutputs(rewriter, analysis, b, *fused, order).ok());
    ASSERT_TRUE(rewriter.Finish().ok());
    EXPECT_EQ(CheckAgainst(*original, *module), "");
  }
  EXPECT_EQ(fingerprints[0], fingerprints[1]);
  EXPECT_EQ(operand_names[0], operand_names[1]);
}

TEST(FusionBuilderTest, NonEmittableMergesAddNothing) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  x = f32[8,4] parameter(0)
  zero = f32[] constant(0)
  r = f32[8] reduce(x, zero), dimensions={1}, to_apply=add_f32
  ROOT b = f32[8,4] broadcast(r), dimensions={0}
}
)");
  ASSERT_NE(module, nullptr);
  const int64_t computations = module->computation_count();
  const int64_t instructions = module->entry()->instruction_count();
  Rewriter rewriter(module.get(), RewriteMode::kApply);
  Instruction* r = Find(*module, "r");
  Instruction* b = Find(*module, "b");
  absl::StatusOr<Instruction*> fused = BuildFusion(rewriter, {{r, b}, {{b, -1}}});
  ASSERT_FALSE(fused.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(fused.status())) << fused.status();
  EXPECT_NE(std::string(fused.status().message()).find("not an epilogue op"), std::string::npos);
  EXPECT_EQ(module->computation_count(), computations);
  EXPECT_EQ(module->entry()->instruction_count(), instructions);
  // A malformed spec is a different error.
  absl::StatusOr<Instruction*> bad = BuildFusion(rewriter, {{b}, {{r, -1}}});
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

TEST(RemoveDeadFusionOutputsTest, DropsUnreadOutputsAndRenumbers) {
  auto module = ParseWithReducers(kThreeOutputs);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  EXPECT_EQ(RemoveDeadFusionOutputs(*module), 1);
  const Instruction* m = Find(*module, "m");
  ASSERT_TRUE(m->shape().IsTuple());
  EXPECT_EQ(m->shape().tuple_size(), 2);
  EXPECT_EQ(Find(*module, "g2")->tuple_index(), 1);
  EXPECT_EQ(CountFusedOpcode(*m, Opcode::kExp), 0);
  EXPECT_EQ(m->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
  EXPECT_EQ(RemoveDeadFusionOutputs(*module), 0);  // nothing left to drop
}

TEST(RemoveDeadFusionOutputsTest, OneOutputLeftBecomesTheValueAndTheKindFollows) {
  auto module = ParseWithReducers(R"(
fc {
  a = f32[8,4] parameter(0)
  zero = f32[] constant(0)
  n = f32[8,4] negate(a)
  r = f32[8] reduce(a, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[8,4], f32[8]) tuple(n, r)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  m = (f32[8,4], f32[8]) fusion(x), kind=kInput, calls=fc
  g0 = f32[8,4] get-tuple-element(m), index=0
  ROOT c = f32[8,4] abs(g0)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  EXPECT_EQ(RemoveDeadFusionOutputs(*module), 1);
  const Instruction* m = Find(*module, "m");
  EXPECT_FALSE(m->shape().IsTuple());
  EXPECT_EQ(m->fusion_kind(), FusionKind::kLoop);  // the reduction is gone
  EXPECT_EQ(CountFusedOpcode(*m, Opcode::kReduce), 0);
  EXPECT_EQ(module->entry()->root()->operand(0), m);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kGetTupleElement), 0);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(RemoveDeadFusionOutputsTest, KeepsRandomMultiOutputEpisodesSmall) {
  // Per-use decisions leave merged fusions with unread outputs; dropping
  // them after each round keeps the module near its size.
  constexpr std::string_view kSiblings = R"(
ENTRY main {
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  a = f32[16,8] negate(x)
  b = f32[16,8] multiply(x, y)
  c = f32[16,8] exponential(x)
  d = f32[16,8] abs(x)
  ROOT t = (f32[16,8], f32[16,8], f32[16,8], f32[16,8]) tuple(a, b, c, d)
}
)";
  auto original = ParseWithReducers(kSiblings);
  ASSERT_NE(original, nullptr);
  for (uint64_t seed = 0; seed < 4; ++seed) {
    auto module = original->Clone();
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 12; ++round) {
      if (Dry("multi-output-fusion(mode=general)", *module) == 0) break;
      std::vector<int64_t> choices;
      for (const AlternativeNode& alt : FindAlternatives(*module)) {
        choices.push_back(std::uniform_int_distribution<int64_t>(0, alt.num_choices() - 1)(rng));
      }
      ASSERT_TRUE(ApplyChoices(*module, choices).ok());
      RemoveDeadFusionOutputs(*module);
      Prune(*module);
      // (Without dropping dead outputs it reaches 33 here.)
      EXPECT_LE(module->instruction_count(), 22) << "seed " << seed << " round " << round;
    }
    EXPECT_EQ(CheckAgainst(*original, *module), "") << "seed " << seed;
  }
}

}  // namespace
}  // namespace hlogym

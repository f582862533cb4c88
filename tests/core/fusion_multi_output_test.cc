// Multi-output fusion ("multi-output-fusion"): sibling and producer-consumer
// merges in apply mode, the candidates of dry mode, and correctness of every
// combination of choices.
#include "core/passes/multi_output_fusion.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "tests/core/fusion_test_util.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using fusion_test::Apply;
using fusion_test::ApplyToFixedPoint;
using fusion_test::CheckAgainst;
using fusion_test::CountFusedOpcode;
using fusion_test::CountOpcode;
using fusion_test::Dry;
using fusion_test::Fusions;
using fusion_test::ParseWithReducers;
using fusion_test::RandomEpisode;

// Two loop fusions and a reduction, all reading x; a dot keeps them apart
// from the producer-consumer kind.
constexpr std::string_view kSiblings = R"(
f_neg {
  a = f32[16,8] parameter(0)
  n = f32[16,8] negate(a)
  ROOT e = f32[16,8] exponential(n)
}
f_abs {
  a = f32[16,8] parameter(0)
  b = f32[16,8] parameter(1)
  ab = f32[16,8] abs(a)
  ROOT m = f32[16,8] multiply(ab, b)
}
ENTRY main {
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  zero = f32[] constant(0)
  l1 = f32[16,8] fusion(x), kind=kLoop, calls=f_neg
  l2 = f32[16,8] fusion(x, y), kind=kLoop, calls=f_abs
  r = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[16,8], f32[16,8], f32[16]) tuple(l1, l2, r)
}
)";

TEST(MultiOutputFusionTest, SiblingsReadingOneInputBecomeOneKernel) {
  auto module = ParseWithReducers(kSiblings);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("multi-output-fusion", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  const Instruction* mof = fusions[0];
  // The reduction reads x; the loops' outputs are its side outputs.
  EXPECT_EQ(mof->fusion_kind(), FusionKind::kInput);
  ASSERT_TRUE(mof->shape().IsTuple());
  EXPECT_EQ(mof->shape().tuple_size(), 3);
  EXPECT_EQ(mof->fused_computation()->root()->opcode(), Opcode::kTuple);
  EXPECT_EQ(CountFusedOpcode(*mof, Opcode::kReduce), 1);
  // x is read once: it is one operand.
  EXPECT_EQ(std::count(mof->operands().begin(), mof->operands().end(),
                       module->entry()->parameter(0)), 1);
  // Every user reads an element.
  for (const Instruction* user : mof->users()) {
    EXPECT_EQ(user->opcode(), Opcode::kGetTupleElement);
  }
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(MultiOutputFusionTest, TheMergeObserverSeesEveryMergeOfAnApplyRun) {
  // One run merges the three siblings pair by pair: the second merge takes
  // in the fusion the first made. Dry mode merges nothing, so reports none.
  auto module = ParseWithReducers(kSiblings);
  ASSERT_NE(module, nullptr);
  std::vector<std::pair<std::vector<int64_t>, int64_t>> merges;
  MultiOutputFusionPass pass;
  pass.set_merge_observer(
      [&](const std::vector<const Instruction*>& members, const Instruction& fusion) {
        std::vector<int64_t> ids;
        for (const Instruction* member : members) ids.push_back(member->unique_id());
        merges.emplace_back(ids, fusion.unique_id());
      });
  auto dry = module->Clone();
  ASSERT_TRUE(RunDryPass(pass, *dry).ok());
  EXPECT_TRUE(merges.empty());
  std::vector<int64_t> siblings;
  for (const char* name : {"l1", "l2", "r"}) {
    const Instruction* sibling = testing_util::FindInstruction(*module, name);
    ASSERT_NE(sibling, nullptr) << name;
    siblings.push_back(sibling->unique_id());
  }
  ASSERT_TRUE(RunPass(pass, *module).ok());
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  ASSERT_EQ(merges.size(), 2u);
  EXPECT_EQ(merges[1].second, fusions[0]->unique_id());
  std::vector<int64_t> members = merges[0].first;
  members.push_back(merges[1].first[0] == merges[0].second ? merges[1].first[1]
                                                           : merges[1].first[0]);
  EXPECT_TRUE(std::find(merges[1].first.begin(), merges[1].first.end(), merges[0].second) !=
              merges[1].first.end());
  std::sort(members.begin(), members.end());
  std::sort(siblings.begin(), siblings.end());
  EXPECT_EQ(members, siblings);
}

TEST(MultiOutputFusionTest, ReductionsOfOneInputShareTheirLoop) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  x = f32[16,8] parameter(0)
  zero = f32[] constant(0)
  sq = f32[16,8] multiply(x, x)
  s1 = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  s2 = f32[16] reduce(sq, zero), dimensions={1}, to_apply=add_f32
  s3 = f32[8] reduce(x, zero), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[16], f32[16], f32[8]) tuple(s1, s2, s3)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  ApplyToFixedPoint("multi-output-fusion", *module);
  // sum(x) and sum(x*x) over dimension 1 share one kernel; the column sum
  // reduces other dimensions and stays apart.
  std::vector<const Instruction*> fusions = Fusions(*module);
  int64_t two_reduction_kernels = 0;
  for (const Instruction* f : fusions) {
    two_reduction_kernels += CountFusedOpcode(*f, Opcode::kReduce) == 2;
  }
  EXPECT_EQ(two_reduction_kernels, 1);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(MultiOutputFusionTest, DependentSiblingsAreNotMerged) {
  // l2 reads l1's result: merging them would make the fusion read itself.
  auto module = ParseWithReducers(R"(
ENTRY main {
  x = f32[16] parameter(0)
  l1 = f32[16] negate(x)
  l2 = f32[16] add(x, l1)
  ROOT t = (f32[16], f32[16]) tuple(l1, l2)
}
)");
  ASSERT_NE(module, nullptr);
  // Siblings under x: (l1, l2), connected. The producer-consumer kind
  // (l1 into l2, exported) is what applies.
  ASSERT_TRUE(Apply("multi-output-fusion", *module));
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->shape().tuple_size(), 2);
  EXPECT_EQ(CountFusedOpcode(*fusions[0], Opcode::kNegate), 1);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kNegate), 0);
  auto original = ParseWithReducers(R"(
ENTRY main {
  x = f32[16] parameter(0)
  l1 = f32[16] negate(x)
  l2 = f32[16] add(x, l1)
  ROOT t = (f32[16], f32[16]) tuple(l1, l2)
}
)");
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(MultiOutputFusionTest, ProducerConsumerExportsTheProducer) {
  // p feeds the loop c and a dot: fused into c and returned, so the dot
  // reads it from the fusion and p is computed once.
  auto module = ParseWithReducers(R"(
ENTRY main {
  x = f32[8,8] parameter(0)
  w = f32[8,8] parameter(1)
  p = f32[8,8] exponential(x)
  c = f32[8,8] add(p, w)
  d = f32[8,8] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,8], f32[8,8]) tuple(c, d)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ASSERT_TRUE(Apply("multi-output-fusion", *module));
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->shape().tuple_size(), 2);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kExp), 0);
  const Instruction* dot = nullptr;
  for (const auto& inst : module->entry()->instructions()) {
    if (inst->opcode() == Opcode::kDot) dot = inst.get();
  }
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->operand(0)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(MultiOutputFusionTest, AdamLikeUpdatesMergeToOneKernelPerParameter) {
  // m' = 0.9m + 0.1g, v' = 0.99v + 0.01g², p' = p - m'/(sqrt(v')+eps): after
  // fusion each output is its own loop fusion reading g; sibling fusion run
  // to a fixed point merges the three.
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[64] parameter(0)
  g = f32[64] parameter(1)
  m = f32[64] parameter(2)
  v = f32[64] parameter(3)
  c09 = f32[] constant(0.9)
  c01 = f32[] constant(0.1)
  c099 = f32[] constant(0.99)
  c001 = f32[] constant(0.01)
  eps = f32[] constant(1e-8)
  b09 = f32[64] broadcast(c09), dimensions={}
  b01 = f32[64] broadcast(c01), dimensions={}
  b099 = f32[64] broadcast(c099), dimensions={}
  b001 = f32[64] broadcast(c001), dimensions={}
  beps = f32[64] broadcast(eps), dimensions={}
  m1 = f32[64] multiply(b09, m)
  m2 = f32[64] multiply(b01, g)
  mn = f32[64] add(m1, m2)
  g2 = f32[64] multiply(g, g)
  v1 = f32[64] multiply(b099, v)
  v2 = f32[64] multiply(b001, g2)
  vn = f32[64] add(v1, v2)
  sv = f32[64] sqrt(vn)
  de = f32[64] add(sv, beps)
  up = f32[64] divide(mn, de)
  pn = f32[64] subtract(p, up)
  ROOT t = (f32[64], f32[64], f32[64]) tuple(pn, mn, vn)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  EXPECT_EQ(Fusions(*module).size(), 3u);
  ApplyToFixedPoint("multi-output-fusion", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_EQ(fusions[0]->shape().tuple_size(), 3);
  EXPECT_EQ(fusions[0]->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(MultiOutputFusionTest, DryCandidatesAreGetTupleElementsAndAnyMixIsCorrect) {
  auto base = ParseWithReducers(kSiblings);
  ASSERT_NE(base, nullptr);
  Prune(*base);
  auto original = base->Clone();
  const std::string before = PrintModule(*base);
  {
    auto module = base->Clone();
    const int64_t offered = Dry("multi-output-fusion", *module);
    ASSERT_GT(offered, 0);
    for (const AlternativeNode& alt : FindAlternatives(*module)) {
      for (int64_t i = 1; i < alt.num_choices(); ++i) {
        EXPECT_EQ(alt.node->operand(i)->opcode(), Opcode::kGetTupleElement);
        EXPECT_EQ(alt.node->operand(i)->operand(0)->opcode(), Opcode::kFusion);
      }
    }
    std::vector<int64_t> zeros(offered, 0);
    ASSERT_TRUE(ApplyChoices(*module, zeros).ok());
    EXPECT_EQ(PrintModule(*module), before);
  }
  // Every combination of choices computes the same thing (some keep a
  // sibling and also compute it in the merged fusion: wasteful, correct).
  auto module = base->Clone();
  const int64_t offered = Dry("multi-output-fusion", *module);
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_EQ(static_cast<int64_t>(alts.size()), offered);
  ASSERT_LE(offered, 12);
  int64_t combinations = 1;
  for (const AlternativeNode& alt : alts) combinations *= alt.num_choices();
  ASSERT_LE(combinations, 4096);
  for (int64_t code = 0; code < combinations; ++code) {
    auto copy = base->Clone();
    ASSERT_EQ(Dry("multi-output-fusion", *copy), offered);
    std::vector<int64_t> choices;
    int64_t rest = code;
    for (const AlternativeNode& alt : FindAlternatives(*copy)) {
      choices.push_back(rest % alt.num_choices());
      rest /= alt.num_choices();
    }
    ASSERT_TRUE(ApplyChoices(*copy, choices).ok());
    ASSERT_EQ(CheckAgainst(*original, *copy), "") << "combination " << code;
  }
}

TEST(MultiOutputFusionTest, RandomDryEpisodesStayCorrect) {
  for (std::string_view spec : {"multi-output-fusion", "multi-output-fusion(mode=general)"}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      auto module = ParseWithReducers(kSiblings);
      ASSERT_NE(module, nullptr);
      auto original = module->Clone();
      ASSERT_TRUE(RandomEpisode(spec, *module, seed).ok());
      EXPECT_EQ(CheckAgainst(*original, *module), "") << spec << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace hlogym

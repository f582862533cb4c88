// Producer-consumer fusion ("fusion"): the structures apply mode makes (XLA's
// greedy order), what dry mode offers, and that every result verifies,
// emits and computes what the original computes.
#include "core/ir/node_order.h"
#include "core/passes/producer_consumer_fusion.h"
#include "core/rewrite/dependency_levels.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "tests/core/fusion_test_util.h"

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

constexpr std::string_view kSoftmax = R"(
ENTRY main {
  x = f32[16,32] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[16] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mxb = f32[16,32] broadcast(mx), dimensions={0}
  sub = f32[16,32] subtract(x, mxb)
  ex = f32[16,32] exponential(sub)
  zero = f32[] constant(0)
  sum = f32[16] reduce(ex, zero), dimensions={1}, to_apply=add_f32
  sumb = f32[16,32] broadcast(sum), dimensions={0}
  ROOT out = f32[16,32] divide(ex, sumb)
}
)";

// p -> negate -> exponential -> add(., p) -> multiply(., constant), built
// with the IR API.
std::unique_ptr<Module> ElementwiseChain() {
  auto module = std::make_unique<Module>("chain");
  auto comp = std::make_unique<Computation>("main");
  const Shape s = Shape::Array(PrimitiveType::kF32, {64});
  Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* n = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* e = comp->AddInstruction(Instruction::Create(Opcode::kExp, s, {n}));
  Instruction* a = comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {e, p}));
  Literal two(Shape::Scalar(PrimitiveType::kF32));
  two.SetFromDouble(0, 2.0);
  Instruction* c = comp->AddInstruction(Instruction::CreateConstant(std::move(two)));
  Instruction* cb = comp->AddInstruction(Instruction::Create(Opcode::kBroadcast, s, {c}));
  Instruction* m = comp->AddInstruction(Instruction::Create(Opcode::kMultiply, s, {a, cb}));
  comp->set_root(m);
  module->set_entry(module->AddComputation(std::move(comp)));
  return module;
}

TEST(ProducerConsumerFusionTest, ElementwiseChainBecomesOneLoopFusion) {
  std::unique_ptr<Module> module = ElementwiseChain();
  std::unique_ptr<Module> original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  const Computation* entry = module->entry();
  ASSERT_EQ(entry->root()->opcode(), Opcode::kFusion);
  EXPECT_EQ(entry->root()->fusion_kind(), FusionKind::kLoop);
  // Only the parameter is left outside; the scalar constant went inside too.
  EXPECT_EQ(entry->instruction_count(), 2);
  const Instruction& fusion = *entry->root();
  EXPECT_EQ(fusion.operand_count(), 1);
  EXPECT_EQ(CountFusedOpcode(fusion, Opcode::kExp), 1);
  EXPECT_EQ(CountFusedOpcode(fusion, Opcode::kConstant), 1);
  EXPECT_EQ(fusion.fused_computation()->fusion_instruction(), &fusion);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

// A chain as deep as a large module: the walk from a new producer to the
// consumer was recursive (a 200,000-deep chain overflowed the stack) and
// repeated for every producer added (32,000 took 24 s). Now one fusion of
// the whole chain, in linear time.
TEST(ProducerConsumerFusionTest, AChainOf150000FusesWithoutDeepRecursion) {
  constexpr int kDepth = 150000;
  auto module = std::make_unique<Module>("deep");
  auto comp = std::make_unique<Computation>("main");
  const Shape s = Shape::Array(PrimitiveType::kF32, {8});
  Instruction* value = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  for (int i = 0; i < kDepth; ++i) {
    const Opcode op = i % 2 == 0 ? Opcode::kExp : Opcode::kNegate;
    value = comp->AddInstruction(Instruction::Create(op, s, {value}));
  }
  comp->set_root(value);
  module->set_entry(module->AddComputation(std::move(comp)));
  ASSERT_TRUE(Apply("fusion", *module));
  const Instruction& fusion = *module->entry()->root();
  ASSERT_EQ(fusion.opcode(), Opcode::kFusion);
  EXPECT_EQ(module->entry()->instruction_count(), 2);
  EXPECT_EQ(CountFusedOpcode(fusion, Opcode::kExp), kDepth / 2);
  EXPECT_EQ(CountFusedOpcode(fusion, Opcode::kNegate), kDepth / 2);
}

TEST(ProducerConsumerFusionTest, SoftmaxChainFusesIntoTheReduction) {
  auto module = ParseWithReducers(kSoftmax);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion(mode=xla)", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  const Instruction* input = nullptr;
  for (const Instruction* f : fusions) {
    if (f->fusion_kind() == FusionKind::kInput) input = f;
  }
  ASSERT_NE(input, nullptr);
  // exp(x - broadcast(max)) is computed while the sum reads its input.
  EXPECT_EQ(input->fused_computation()->root()->opcode(), Opcode::kReduce);
  EXPECT_EQ(CountFusedOpcode(*input, Opcode::kExp), 1);
  EXPECT_EQ(CountFusedOpcode(*input, Opcode::kSubtract), 1);
  EXPECT_EQ(CountFusedOpcode(*input, Opcode::kBroadcast), 1);
  // The division (with exp duplicated: it is cheap on the GPU) is the root
  // loop fusion; the max reduction has nothing to fuse.
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(CountFusedOpcode(*root, Opcode::kDivide), 1);
  EXPECT_EQ(CountFusedOpcode(*root, Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kReduce), 1);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(ProducerConsumerFusionTest, ReductionTakesAConvertEpilogue) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  x = f32[16,32] parameter(0)
  zero = f32[] constant(0)
  sq = f32[16,32] multiply(x, x)
  r = f32[16] reduce(sq, zero), dimensions={1}, to_apply=add_f32
  ROOT c = f16[16] convert(r)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->fusion_kind(), FusionKind::kInput);
  EXPECT_EQ(root->fused_computation()->root()->opcode(), Opcode::kConvert);
  EXPECT_EQ(CountFusedOpcode(*root, Opcode::kMultiply), 1);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

constexpr std::string_view kSharedProducers = R"(
ENTRY main {
  p = f32[32] parameter(0)
  q = f32[32] parameter(1)
  b = f32[32] broadcast(q), dimensions={0}
  l = f32[32] log(p)
  u1 = f32[32] add(b, l)
  u2 = f32[32] multiply(b, l)
  ROOT t = (f32[32], f32[32]) tuple(u1, u2)
}
)";

TEST(ProducerConsumerFusionTest, CheapProducersAreDuplicatedExpensiveOnesAreNot) {
  auto module = ParseWithReducers(kSharedProducers);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion(mode=xla)", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  for (const Instruction* f : fusions) {
    EXPECT_EQ(CountFusedOpcode(*f, Opcode::kBroadcast), 1) << f->name();
    EXPECT_EQ(CountFusedOpcode(*f, Opcode::kLog), 0) << f->name();
  }
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kLog), 1);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kBroadcast), 0);
  EXPECT_EQ(CheckAgainst(*original, *module), "");

  // general mode duplicates the log too; may_duplicate=false copies nothing.
  auto general = ParseWithReducers(kSharedProducers);
  ApplyToFixedPoint("fusion(mode=general)", *general);
  EXPECT_EQ(CountOpcode(*general->entry(), Opcode::kLog), 0);
  EXPECT_EQ(CheckAgainst(*original, *general), "");
  auto no_dup = ParseWithReducers(kSharedProducers);
  ApplyToFixedPoint("fusion(mode=general, may_duplicate=false)", *no_dup);
  EXPECT_EQ(CountOpcode(*no_dup->entry(), Opcode::kLog), 1);
  EXPECT_EQ(CountOpcode(*no_dup->entry(), Opcode::kBroadcast), 1);
  EXPECT_EQ(CheckAgainst(*original, *no_dup), "");
}

// `a` is copied into both consumers' fusions (it stays for the other), so
// `l` keeps `a` as a reader outside each plan: copying the log in as well
// would duplicate it, which XLA's InstructionFusion refuses (and which one
// producer-consumer step at a time cannot do either).
constexpr std::string_view kExpensiveBehindACopy = R"(
ENTRY main {
  p = f32[32] parameter(0)
  l = f32[32] log(p)
  a = f32[32] add(l, p)
  n1 = f32[32] negate(a)
  n2 = f32[32] multiply(a, p)
  ROOT t = (f32[32], f32[32]) tuple(n1, n2)
}
)";

TEST(ProducerConsumerFusionTest, AnExpensiveProducerOfACopiedMemberIsNotCopied) {
  auto module = ParseWithReducers(kExpensiveBehindACopy);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion(mode=xla)", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 2u);
  for (const Instruction* f : fusions) {
    EXPECT_EQ(CountFusedOpcode(*f, Opcode::kAdd), 1) << f->name();
    EXPECT_EQ(CountFusedOpcode(*f, Opcode::kLog), 0) << f->name();
  }
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kLog), 1);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(ProducerConsumerFusionTest, MergesExistingFusions) {
  auto module = ParseWithReducers(R"(
f1 {
  a = f32[8] parameter(0)
  ROOT n = f32[8] negate(a)
}
f2 {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT s = f32[8] add(x, y)
}
ENTRY main {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  g = f32[8] fusion(p), kind=kLoop, calls=f1
  ROOT h = f32[8] fusion(g, q), kind=kLoop, calls=f2
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ASSERT_TRUE(Apply("fusion", *module));
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(module->entry()->instruction_count(), 3);  // p, q, the fusion
  EXPECT_EQ(root->operand_count(), 2);
  EXPECT_EQ(CountFusedOpcode(*root, Opcode::kNegate), 1);
  EXPECT_EQ(CountFusedOpcode(*root, Opcode::kAdd), 1);
  EXPECT_EQ(root->fused_computation()->parameter_count(), 2);
  // The old fused computations are gone from the module.
  EXPECT_EQ(module->FindComputation("f1"), nullptr);
  EXPECT_EQ(module->FindComputation("f2"), nullptr);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(ProducerConsumerFusionTest, FusesInsideWhileBodiesButNotInsideReducers) {
  auto module = ParseWithReducers(R"(
cond {
  cp = (s32[], f32[8]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[8]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bv = f32[8] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  ni = s32[] add(bi, one)
  e = f32[8] exponential(bv)
  h = f32[8] constant({0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
  m = f32[8] multiply(e, h)
  nv = f32[8] negate(m)
  ROOT r = (s32[], f32[8]) tuple(ni, nv)
}
ENTRY main {
  p = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, p)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  v = f32[8] get-tuple-element(w), index=1
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(v, zero), dimensions={0}, to_apply=add_f32
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  const Computation* body = module->FindComputation("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(CountOpcode(*body, Opcode::kFusion), 1);
  EXPECT_EQ(CountOpcode(*body, Opcode::kExp), 0);
  EXPECT_EQ(CountOpcode(*module->FindComputation("add_f32"), Opcode::kFusion), 0);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(ProducerConsumerFusionTest, DryModeOffersEveryLegalPair) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  a = f32[8] negate(p)
  b = f32[8] abs(q)
  ROOT c = f32[8] add(a, b)
}
)");
  ASSERT_NE(module, nullptr);
  Prune(*module);  // drops the unused reducers, as applying choices will
  const std::string before = PrintModule(*module);
  // One alternatives node (the root use of c), with two candidates: c with a
  // fused, and c with b fused.
  ASSERT_EQ(Dry("fusion", *module), 1);
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_EQ(alts.size(), 1u);
  EXPECT_EQ(alts[0].num_choices(), 3);
  for (int64_t i = 1; i < 3; ++i) {
    const Instruction* candidate = alts[0].node->operand(i);
    ASSERT_EQ(candidate->opcode(), Opcode::kFusion);
    EXPECT_EQ(candidate->fused_computation()->instruction_count(), 4);  // 2 params + 2 ops
  }
  // Choosing 0 restores the module exactly.
  ASSERT_TRUE(ApplyChoices(*module, {0}).ok());
  EXPECT_EQ(PrintModule(*module), before);
}

TEST(ProducerConsumerFusionTest, DryModeCandidatesAreOfferedPerUse) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  a = f32[8] negate(p)
  b = f32[8] exponential(a)
  c = f32[8] abs(b)
  d = f32[8] sine(b)
  ROOT t = (f32[8], f32[8]) tuple(c, d)
}
)");
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  // Uses: b's uses by c and d (candidate b∘a), c's and d's root-tuple uses
  // (candidates c∘b and d∘b).
  EXPECT_EQ(Dry("fusion", *module), 4);
  // Taking c∘b but keeping d: b is computed twice, and the module is right.
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  std::vector<int64_t> choices(alts.size(), 0);
  for (size_t i = 0; i < alts.size(); ++i) {
    const Instruction* original_value = alts[i].node->operand(0);
    if (original_value->name() == "c") choices[i] = 1;
  }
  ASSERT_TRUE(ApplyChoices(*module, choices).ok());
  EXPECT_EQ(Fusions(*module).size(), 1u);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

// The dry pass offers its candidates as reading only what the consumer
// depends on, so the Rewriter does not check them for cycles: on the small
// twins no alternatives node may hold a candidate that depends on the
// node's user.
TEST(ProducerConsumerFusionTest, DryCandidatesNeverDependOnTheirUser) {
  int64_t checked = 0;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> module = fusion_test::LoadFile(path);
    if (module == nullptr) continue;
    for (std::string_view spec : {"fusion", "fusion(mode=general)"}) {
      std::unique_ptr<Module> copy = module->Clone();
      ASSERT_GE(Dry(spec, *copy), 0) << path;
      for (const AlternativeNode& alt : FindAlternatives(*copy)) {
        for (const Instruction* user : alt.node->users()) {
          for (int64_t i = 1; i < alt.num_choices(); ++i) {
            EXPECT_FALSE(DependencyLevels::DependsOnByFullWalk(alt.node->operand(i), user))
                << path << ": " << alt.node->operand(i)->name() << " depends on "
                << user->name();
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(ProducerConsumerFusionTest, RandomDryEpisodesStayCorrect) {
  for (std::string_view spec : {"fusion", "fusion(mode=general)",
                                "fusion(mode=general, may_duplicate=false)"}) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      auto module = ParseWithReducers(kSoftmax);
      ASSERT_NE(module, nullptr);
      auto original = module->Clone();
      ASSERT_TRUE(RandomEpisode(spec, *module, seed).ok());
      EXPECT_EQ(CheckAgainst(*original, *module), "") << spec << " seed " << seed;
      // The episode ran to the end: nothing more is offered.
      EXPECT_EQ(Dry(spec, *module), 0) << spec << " seed " << seed;
    }
  }
}

TEST(ProducerConsumerFusionTest, ChoosingTheFirstCandidateEverywhereConverges) {
  // HloEnv's "always pick first" baseline: fuse until nothing is offered.
  auto module = ParseWithReducers(kSoftmax);
  auto original = module->Clone();
  for (int round = 0; round < 25; ++round) {
    if (Dry("fusion(mode=general)", *module) == 0) break;
    std::vector<int64_t> ones(FindAlternatives(*module).size(), 1);
    ASSERT_TRUE(ApplyChoices(*module, ones).ok());
  }
  EXPECT_EQ(Dry("fusion(mode=general)", *module), 0);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
  EXPECT_LE(Fusions(*module).size(), 3u);
}

TEST(ProducerConsumerFusionTest, BadOptionsAreErrors) {
  EXPECT_FALSE(CreatePass("fusion(mode=fast)").ok());
  EXPECT_FALSE(CreatePass("fusion(may_duplicate=maybe)").ok());
  EXPECT_FALSE(CreatePass("fusion(duplicate=true)").ok());
  EXPECT_TRUE(CreatePass("fusion(mode=general, may_duplicate=false)").ok());
}

}  // namespace
}  // namespace hlogym

// Tests of CSE, constant folding, call inlining and tuple simplification:
// what each rewrites and what it must leave alone, in apply mode and in dry
// mode (alternatives offered, all-zero choices restore the module, all-one
// choices give the apply-mode result), plus their registry entries.
#include "core/eval/interpreter.h"
#include "core/ir/fingerprint.h"
#include "core/passes/constant_folding.h"
#include "core/passes/cse.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "simplification_test_util.h"

namespace hlogym {
namespace {

using simplification_test::CheckEquivalent;
using simplification_test::CountOpcode;
using simplification_test::DryEpisode;
using simplification_test::EntryModule;
using simplification_test::Expr;
using simplification_test::Parse;
using simplification_test::RootExpr;
using simplification_test::RunDry;
using simplification_test::RunToFixedPoint;

// Runs `spec` once in apply mode.
bool RunOnce(std::string_view spec, Module& module) {
  auto pass = CreatePass(spec);
  EXPECT_TRUE(pass.ok()) << pass.status();
  absl::StatusOr<bool> changed = RunPass(**pass, module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  return changed.ok() && *changed;
}

// Checks the dry-mode contract of `spec` on `text`: it offers `offered`
// alternatives nodes; choosing 0 everywhere restores the module; choosing the
// first candidate everywhere (round after round) gives what apply mode gives.
void CheckDryContract(std::string_view spec, const std::string& text, int64_t offered) {
  auto original = Parse(text);
  ASSERT_NE(original, nullptr);
  Prune(*original);
  {
    auto module = original->Clone();
    const std::string before = PrintModule(*module);
    ASSERT_EQ(RunDry(spec, *module), offered) << spec;
    std::vector<int64_t> zeros(FindAlternatives(*module).size(), 0);
    ASSERT_TRUE(ApplyChoices(*module, zeros).ok());
    EXPECT_EQ(PrintModule(*module), before) << spec;
  }
  auto applied = original->Clone();
  RunToFixedPoint(spec, *applied);
  auto chosen = original->Clone();
  ASSERT_TRUE(DryEpisode(spec, *chosen, 1).ok());
  Prune(*chosen);
  EXPECT_EQ(Fingerprint(*chosen), Fingerprint(*applied))
      << spec << "\napply:\n" << PrintModule(*applied) << "\ndry:\n" << PrintModule(*chosen);
  EXPECT_EQ(CheckEquivalent(*original, *chosen), "") << spec;
  EXPECT_EQ(CheckEquivalent(*original, *applied), "") << spec;
}

constexpr char kReducers[] = R"(add_a {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_b {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
})";

// ---------------------------------------------------------------- CSE ----

TEST(CseTest, MergesIdenticalInstructions) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1)
  b = f32[4] add(p0, p1)
  ROOT r = f32[4] multiply(a, b))"));
  ASSERT_TRUE(RunOnce("cse", *module));
  EXPECT_EQ(RootExpr(*module), "multiply(add(p0,p1),add(p0,p1))");
  EXPECT_EQ(CountOpcode(*module, Opcode::kAdd), 1);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
}

TEST(CseTest, CommutativeOperandsInEitherOrder) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] maximum(p0, p1)
  b = f32[4] maximum(p1, p0)
  c = f32[4] subtract(p0, p1)
  d = f32[4] subtract(p1, p0)
  ROOT r = (f32[4], f32[4], f32[4], f32[4]) tuple(a, b, c, d))"));
  ASSERT_TRUE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kMaximum), 1);
  EXPECT_EQ(CountOpcode(*module, Opcode::kSubtract), 2);  // not commutative
}

TEST(CseTest, AttributesAndValuesDistinguish) {
  auto module = Parse(EntryModule(R"(p0 = f32[4,4] parameter(0)
  lt = pred[4,4] compare(p0, p0), direction=LT
  gt = pred[4,4] compare(p0, p0), direction=GT
  t1 = f32[4,4] transpose(p0), dimensions={1,0}
  t2 = f32[4,4] transpose(p0), dimensions={0,1}
  s1 = f32[2,4] slice(p0), slice={[0:2], [0:4]}
  s2 = f32[2,4] slice(p0), slice={[2:4], [0:4]}
  c1 = f32[] constant(1)
  c2 = f32[] constant(2)
  c3 = f32[] constant(1)
  b1 = f32[4,4] broadcast(c1), dimensions={}
  b3 = f32[4,4] broadcast(c3), dimensions={}
  ROOT r = (pred[4,4], pred[4,4], f32[4,4], f32[4,4], f32[2,4], f32[2,4], f32[], f32[4,4], f32[4,4]) tuple(lt, gt, t1, t2, s1, s2, c2, b1, b3))"));
  ASSERT_TRUE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kCompare), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kTranspose), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kSlice), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kConstant), 2);   // c1 and c3 merged
  EXPECT_EQ(CountOpcode(*module, Opcode::kBroadcast), 1);  // then b1 and b3
}

// Called computations compare by structure (fusion copies a consumer's
// fused computation, so equal fusions call distinct but equal computations).
TEST(CseTest, CalledComputationsCompareByStructure) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p0, z), dimensions={0}, to_apply=add_a
  r2 = f32[] reduce(p0, z), dimensions={0}, to_apply=add_b
  r3 = f32[] reduce(p0, z), dimensions={0}, to_apply=max_c
  r4 = f32[] reduce(p0, z), dimensions={0}, to_apply=sub_d
  r5 = f32[] reduce(p0, z), dimensions={0}, to_apply=sub_e
  ROOT r = (f32[], f32[], f32[], f32[], f32[]) tuple(r1, r2, r3, r4, r5))",
                                  std::string(kReducers) + R"(

max_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

sub_d {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}

sub_e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(b, a)
})"));
  ASSERT_TRUE(RunOnce("cse", *module));
  // r1 and r2 merge; max, a - b and b - a stay apart.
  EXPECT_EQ(CountOpcode(*module, Opcode::kReduce), 4);
}

// SameButOperands is CSE's test less the operands: the greedy lookahead's
// view (backend/cost_after_choices.cc) relies on it to rule out merges.
TEST(CseTest, SameButOperandsComparesAllButTheOperands) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  z = f32[] constant(0)
  r1 = f32[] reduce(p0, z), dimensions={0}, to_apply=add_a
  r2 = f32[] reduce(p1, z), dimensions={0}, to_apply=add_b
  r3 = f32[] reduce(p0, z), dimensions={0}, to_apply=max_c
  n1 = f32[4] negate(p0)
  n2 = f32[4] negate(p1)
  a1 = f32[4] abs(p0)
  ROOT r = (f32[], f32[], f32[], f32[4], f32[4], f32[4]) tuple(r1, r2, r3, n1, n2, a1))",
                                  std::string(kReducers) + R"(

max_c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
})"));
  ASSERT_NE(module, nullptr);
  auto named = [&](std::string_view name) -> const Instruction& {
    for (const auto& inst : module->entry()->instructions()) {
      if (inst->name() == name) return *inst;
    }
    ADD_FAILURE() << "no instruction " << name;
    return *module->entry()->root();
  };
  // Equal callees by structure, other operands: alike.
  EXPECT_TRUE(SameButOperands(named("r1"), named("r2")));
  EXPECT_TRUE(SameButOperands(named("n1"), named("n2")));
  // Another reducer, another opcode: never merged.
  EXPECT_FALSE(SameButOperands(named("r1"), named("r3")));
  EXPECT_FALSE(SameButOperands(named("n1"), named("a1")));
}

// A fusion or call whose computation has a side effect is never merged.
TEST(CseTest, CallsOfComputationsWithSideEffectsAreKept) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  c1 = f32[4] call(p0), to_apply=effect
  c2 = f32[4] call(p0), to_apply=effect
  ROOT r = (f32[4], f32[4]) tuple(c1, c2))", R"(effect {
  x = f32[4] parameter(0)
  ROOT e = f32[4] custom-call(x), custom_call_target="log_it", custom_call_has_side_effect=true
})"));
  EXPECT_FALSE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kCall), 2);
}

TEST(CseTest, MetadataDoesNotDistinguishOtherRawAttributesDo) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  a = f32[4] exponential(p0), metadata={op_name="a"}
  b = f32[4] exponential(p0), metadata={op_name="b"}
  c = f32[4] custom-call(p0), custom_call_target="foo", backend_config="x"
  d = f32[4] custom-call(p0), custom_call_target="foo", backend_config="y"
  e = f32[4] custom-call(p0), custom_call_target="foo", backend_config="x"
  ROOT r = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(a, b, c, d, e))"));
  ASSERT_TRUE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kExp), 1);
  EXPECT_EQ(CountOpcode(*module, Opcode::kCustomCall), 2);
}

TEST(CseTest, SideEffectsParametersAndElidedConstantsAreKept) {
  auto module = Parse(EntryModule(R"(p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  r1 = f32[4] rng(p0, p1), distribution=rng_uniform
  r2 = f32[4] rng(p0, p1), distribution=rng_uniform
  c1 = f32[4] custom-call(r1), custom_call_target="log", custom_call_has_side_effect=true
  c2 = f32[4] custom-call(r1), custom_call_target="log", custom_call_has_side_effect=true
  e1 = f32[8] constant({...})
  e2 = f32[8] constant({...})
  ROOT r = (f32[], f32[], f32[4], f32[4], f32[4], f32[4], f32[8], f32[8]) tuple(p0, p1, r1, r2, c1, c2, e1, e2))"));
  EXPECT_FALSE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kRng), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kCustomCall), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kConstant), 2);
}

TEST(CseTest, MergesInsideEveryComputation) {
  auto module = Parse(R"(HloModule m

body {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = f32[] add(a, b)
  y = f32[] add(b, a)
  ROOT s = f32[] multiply(x, y)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p0, z), dimensions={0}, to_apply=body
})");
  ASSERT_TRUE(RunOnce("cse", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kAdd), 1);
}

TEST(CseTest, DryModeInsideAFusedComputation) {
  const std::string text = R"(HloModule m

fused {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  x = f32[4] add(a, b)
  y = f32[4] add(b, a)
  ROOT m = f32[4] multiply(x, y)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT f = f32[4] fusion(p0, p1), kind=kLoop, calls=fused
})";
  CheckDryContract("cse", text, 1);
}

TEST(CseTest, DryModeFindsChainsOfDuplicates) {
  // b duplicates a, then n duplicates m once b is a: dry mode sees both.
  const std::string text = EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  a = f32[4] add(p0, p1)
  b = f32[4] add(p1, p0)
  m = f32[4] multiply(a, p0)
  n = f32[4] multiply(b, p0)
  ROOT r = (f32[4], f32[4]) tuple(m, n))");
  auto module = Parse(text);
  ASSERT_EQ(RunDry("cse", *module), 2);
  for (const AlternativeNode& alt : FindAlternatives(*module)) {
    ASSERT_EQ(alt.num_choices(), 2);
    EXPECT_EQ(alt.node->operand(0)->name() == "b" ? "a" : "m", alt.node->operand(1)->name());
  }
  CheckDryContract("cse", text, 2);
}

// ---------------------------------------------------- constant folding ----

TEST(ConstantFoldingTest, FoldsAChainInOneRun) {
  auto module = Parse(EntryModule(R"(a = f32[] constant(1.5)
  b = f32[] constant(2)
  s = f32[] add(a, b)
  ROOT n = f32[] negate(s))"));
  ASSERT_TRUE(RunOnce("constant-folding", *module));
  EXPECT_EQ(RootExpr(*module), "-3.5");
  EXPECT_EQ(module->entry()->instruction_count(), 1);
}

TEST(ConstantFoldingTest, FoldsArraysAndReductions) {
  auto module = Parse(EntryModule(R"(c = s32[4] constant({1, 2, 3, 4})
  z = s32[] constant(0)
  r = s32[] reduce(c, z), dimensions={0}, to_apply=add_s32
  t = s32[2,2] reshape(c)
  ROOT out = (s32[], s32[2,2]) tuple(r, t))",
                                  R"(add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
})"));
  ASSERT_TRUE(RunOnce("constant-folding", *module));
  EXPECT_EQ(RootExpr(*module), "tuple(10,{ {1, 2}, {3, 4} })");
}

TEST(ConstantFoldingTest, ElementwiseOverSplatsStaysASplat) {
  auto module = Parse(EntryModule(R"(a = f32[] constant(2)
  b = f32[] constant(3)
  ba = f32[1000,1000] broadcast(a), dimensions={}
  bb = f32[1000,1000] broadcast(b), dimensions={}
  ROOT m = f32[1000,1000] multiply(ba, bb))"));
  ASSERT_TRUE(RunOnce("constant-folding", *module));
  EXPECT_EQ(RootExpr(*module), "broadcast(6)");
}

TEST(ConstantFoldingTest, LeavesAloneWhatXlaLeavesAlone) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  i = s32[4] iota(), iota_dimension=0
  r = f32[4] rng(c, c), distribution=rng_uniform
  e = f32[4] constant({...})
  ne = f32[4] negate(e)
  x = f32[4] add(p0, b)
  k = s32[] constant(7)
  u = s32[] atan2(k, k)
  ROOT t = (f32[4], s32[4], f32[4], f32[4], f32[4], s32[]) tuple(b, i, r, ne, x, u))"));
  const std::string before = PrintModule(*module);
  EXPECT_FALSE(RunOnce("constant-folding", *module));  // atan2 on s32 fails to evaluate
  EXPECT_EQ(PrintModule(*module), before);
}

TEST(ConstantFoldingTest, LargeResultsAreNotFolded) {
  // Built directly: a constant of kMaxFoldedElements + 1 elements.
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Literal big(Shape::Array(PrimitiveType::kF32, {kMaxFoldedElements + 1}));
  Instruction* c = comp->AddInstruction(Instruction::CreateConstant(std::move(big)));
  Instruction* n = comp->AddInstruction(Instruction::Create(Opcode::kNegate, c->shape(), {c}));
  comp->set_root(n);
  module->set_entry(module->AddComputation(std::move(comp)));
  EXPECT_FALSE(RunOnce("constant-folding", *module));
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kNegate);
}

TEST(ConstantFoldingTest, DryModeOffersChains) {
  const std::string text = EntryModule(R"(p0 = f32[] parameter(0)
  a = f32[] constant(1.5)
  b = f32[] constant(2)
  s = f32[] add(a, b)
  n = f32[] negate(s)
  ROOT r = f32[] multiply(n, p0))");
  auto module = Parse(text);
  ASSERT_EQ(RunDry("constant-folding", *module), 2);  // s (used by n) and n
  const Instruction* n_alt = module->entry()->root()->operand(0);
  ASSERT_EQ(n_alt->opcode(), Opcode::kAlternatives);
  EXPECT_EQ(Expr(n_alt->operand(1)), "-3.5");
  CheckDryContract("constant-folding", text, 2);
}

// --------------------------------------------------------- call inliner ----

constexpr char kCallees[] = R"(g {
  x = f32[4] parameter(0)
  ROOT e = f32[4] exponential(x)
}

f {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  ROOT c = f32[4] call(s), to_apply=g
}

id {
  ROOT a = f32[4] parameter(0)
})";

TEST(CallInlinerTest, InlinesNestedCallsAndRemovesCallees) {
  const std::string text = EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[4] call(p0, p1), to_apply=f
  ROOT r = f32[4] negate(c))", kCallees);
  auto original = Parse(text);
  auto module = original->Clone();
  ASSERT_TRUE(RunOnce("call-inliner", *module));
  EXPECT_EQ(RootExpr(*module), "negate(exponential(add(p0,p1)))");
  EXPECT_EQ(module->computation_count(), 1);
  EXPECT_EQ(CheckEquivalent(*original, *module), "");
}

TEST(CallInlinerTest, InlinesEveryCallSite) {
  const std::string text = EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c1 = f32[4] call(p0, p1), to_apply=f
  c2 = f32[4] call(p1, p0), to_apply=f
  c3 = f32[4] call(c1), to_apply=id
  ROOT r = f32[4] add(c3, c2))", kCallees);
  auto original = Parse(text);
  auto module = original->Clone();
  ASSERT_TRUE(RunOnce("call-inliner", *module));
  EXPECT_EQ(RootExpr(*module), "add(exponential(add(p0,p1)),exponential(add(p1,p0)))");
  EXPECT_EQ(CountOpcode(*module, Opcode::kCall), 0);
  EXPECT_EQ(CheckEquivalent(*original, *module), "");  // includes Verify: unique names
}

TEST(CallInlinerTest, DryModeOffersTheInlinedBody) {
  const std::string text = EntryModule(R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c1 = f32[4] call(p0, p1), to_apply=f
  ROOT r = f32[4] negate(c1))", kCallees);
  auto module = Parse(text);
  // The entry's call to f, and f's call to g.
  ASSERT_EQ(RunDry("call-inliner", *module), 2);
  const Instruction* alt = module->entry()->root()->operand(0);
  ASSERT_EQ(alt->opcode(), Opcode::kAlternatives);
  EXPECT_EQ(Expr(alt->operand(1)), "call(add(p0,p1))");
  CheckDryContract("call-inliner", text, 2);
}

TEST(CallInlinerTest, SideEffectsAreInlinedOnlyInApplyMode) {
  const std::string text = EntryModule(R"(p0 = f32[4] parameter(0)
  ROOT c = f32[4] call(p0), to_apply=h)",
                                       R"(h {
  x = f32[4] parameter(0)
  l = f32[4] custom-call(x), custom_call_target="log", custom_call_has_side_effect=true
  ROOT n = f32[4] negate(x)
})");
  auto module = Parse(text);
  EXPECT_EQ(RunDry("call-inliner", *module), 0);
  ASSERT_TRUE(RunOnce("call-inliner", *module));
  EXPECT_EQ(CountOpcode(*module, Opcode::kCustomCall), 1);
  EXPECT_EQ(RootExpr(*module), "negate(p0)");
}

// ---------------------------------------------------- tuple simplifier ----

TEST(TupleSimplifierTest, ForwardsElementsAndRemovesRebuiltTuples) {
  const std::string text = EntryModule(R"(p0 = (f32[4], s32[2]) parameter(0)
  p1 = f32[4] parameter(1)
  g0 = f32[4] get-tuple-element(p0), index=0
  g1 = s32[2] get-tuple-element(p0), index=1
  t = (f32[4], s32[2]) tuple(g0, g1)
  u = (f32[4], f32[4]) tuple(p1, g0)
  x = f32[4] get-tuple-element(u), index=0
  ROOT r = ((f32[4], s32[2]), f32[4]) tuple(t, x))");
  auto module = Parse(text);
  ASSERT_TRUE(RunOnce("tuple-simplifier", *module));
  EXPECT_EQ(RootExpr(*module), "tuple(p0,p1)");
  CheckDryContract("tuple-simplifier", text, 2);
}

TEST(TupleSimplifierTest, KeepsTuplesThatAreNotRebuilt) {
  auto module = Parse(EntryModule(R"(p0 = (f32[4], f32[4]) parameter(0)
  g0 = f32[4] get-tuple-element(p0), index=0
  g1 = f32[4] get-tuple-element(p0), index=1
  swapped = (f32[4], f32[4]) tuple(g1, g0)
  partial = (f32[4]) tuple(g0)
  ROOT r = ((f32[4], f32[4]), (f32[4])) tuple(swapped, partial))"));
  EXPECT_FALSE(RunOnce("tuple-simplifier", *module));
}

TEST(TupleSimplifierTest, RootTupleOfTheEntryBecomesTheParameter) {
  auto module = Parse(EntryModule(R"(p0 = (f32[4], f32[4]) parameter(0)
  g0 = f32[4] get-tuple-element(p0), index=0
  g1 = f32[4] get-tuple-element(p0), index=1
  ROOT t = (f32[4], f32[4]) tuple(g0, g1))"));
  ASSERT_TRUE(RunOnce("tuple-simplifier", *module));
  EXPECT_EQ(RootExpr(*module), "p0");
  EXPECT_EQ(module->entry()->instruction_count(), 1);
}

// ------------------------------------------------------------ registry ----

TEST(SimplificationRegistryTest, EveryPassIsRegisteredWithADescription) {
  for (const char* name : {"algsimp", "cse", "constant-folding", "call-inliner",
                           "tuple-simplifier"}) {
    bool found = false;
    for (const PassInfo& info : RegisteredPasses()) {
      if (info.name == name) {
        found = true;
        EXPECT_FALSE(info.description.empty()) << name;
      }
    }
    EXPECT_TRUE(found) << name;
    auto pass = CreatePass(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    EXPECT_EQ((*pass)->name(), name);
    EXPECT_FALSE(CreatePass(std::string(name) + "(mode=fast)").ok()) << "takes no options";
  }
}

}  // namespace
}  // namespace hlogym

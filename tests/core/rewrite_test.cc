// Tests of the rewrite framework: the Rewriter in apply and dry mode,
// alternatives, decisions, pruning, and resumable pipelines.
#include <memory>

#include "core/ir/module.h"
#include "core/ir/node_order.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/pipeline.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

// Rewrites negate(negate(x)) to x, and offers exp(x) -> exp(x) * 1 as a
// second, longer candidate where it applies (to get two candidates per use).
class TestPass : public Pass {
 public:
  std::string_view name() const override { return "test"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    bool changed = false;
    for (const auto& comp : module.computations()) {
      for (Instruction* inst : comp->MakePostOrder()) {
        if (rewriter.IsRemoved(inst)) continue;
        if (inst->opcode() == Opcode::kNegate &&
            inst->operand(0)->opcode() == Opcode::kNegate) {
          Instruction* x = inst->operand(0)->operand(0);
          if (!rewriter.Replace(inst, x).ok()) return absl::InternalError("bad");
          changed = true;
          if (rewriter.dry()) {
            // A second candidate: abs(x) is wrong in general, which is fine
            // here: the test checks plumbing, not semantics.
            Instruction* abs = rewriter.Add(
                comp.get(), Instruction::Create(Opcode::kAbs, x->shape(), {x}));
            if (!rewriter.Replace(inst, abs).ok()) return absl::InternalError("bad");
          }
        }
      }
    }
    return changed;
  }
};

// main(p) = add(negate(negate(p)), negate(negate(p))) with the double
// negation shared: nn = negate(negate(p)); root = add(nn, exp(nn)).
std::unique_ptr<Module> MakeModule() {
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Shape s = Shape::Array(PrimitiveType::kF32, {4});
  Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* n1 = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* n2 = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {n1}));
  Instruction* e = comp->AddInstruction(Instruction::Create(Opcode::kExp, s, {n2}));
  Instruction* add = comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {n2, e}));
  comp->set_root(add);
  module->set_entry(module->AddComputation(std::move(comp)));
  return module;
}

int64_t CountOpcode(const Module& module, Opcode opcode) {
  int64_t n = 0;
  for (Instruction* inst : NodeOrder(module)) n += inst->opcode() == opcode;
  return n;
}

TEST(RewriterTest, ApplyModeRewritesAndRemovesDeadCode) {
  auto module = MakeModule();
  TestPass pass;
  ASSERT_TRUE(RunPass(pass, *module).value());
  EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 0);
  EXPECT_EQ(module->entry()->instruction_count(), 3);  // p, exp, add
  EXPECT_EQ(module->entry()->root()->operand(0), module->entry()->parameter(0));
  EXPECT_FALSE(RunPass(pass, *module).value());  // fixed point
}

TEST(RewriterTest, DryModeBuildsOneAlternativesNodePerUse) {
  auto module = MakeModule();
  TestPass pass;
  const int64_t before = module->entry()->instruction_count();
  ASSERT_EQ(RunDryPass(pass, *module).value(), 2);  // nn has two users
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_EQ(alts.size(), 2u);
  for (const AlternativeNode& alt : alts) {
    EXPECT_EQ(alt.num_choices(), 3);  // original, x, abs(x)
    EXPECT_EQ(alt.node->operand(0)->opcode(), Opcode::kNegate);
    EXPECT_EQ(alt.node->operand(1)->opcode(), Opcode::kParameter);
    EXPECT_EQ(alt.node->operand(2)->opcode(), Opcode::kAbs);
  }
  // Nothing original was removed: 2 alternatives + 1 abs were added.
  EXPECT_EQ(module->entry()->instruction_count(), before + 3);
}

TEST(RewriterTest, ChoosingZeroEverywhereRestoresTheOriginalGraph) {
  auto module = MakeModule();
  TestPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 2);
  ASSERT_TRUE(ApplyChoices(*module, {0, 0}).ok());
  EXPECT_EQ(CountOpcode(*module, Opcode::kAlternatives), 0);
  EXPECT_EQ(CountOpcode(*module, Opcode::kAbs), 0);
  EXPECT_EQ(module->entry()->instruction_count(), 5);
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kAdd);
}

TEST(RewriterTest, DecisionsSelectPerUse) {
  auto module = MakeModule();
  TestPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 2);
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  // The add's use takes x; the exp's use keeps the double negation.
  Instruction* root = module->entry()->root();
  std::vector<int64_t> decisions;
  for (const AlternativeNode& alt : alts) {
    bool used_by_root = alt.node->users()[0] == root;
    decisions.push_back(alt.node_index);
    decisions.push_back(used_by_root ? 1 : 0);
  }
  ASSERT_TRUE(ApplyDecisions(*module, decisions, 2, 2).ok());
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kExp);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode(), Opcode::kNegate);
  EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 2);
}

TEST(RewriterTest, BadDecisionsAreRejectedAndChangeNothing) {
  auto module = MakeModule();
  TestPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 2);
  const int64_t count = module->entry()->instruction_count();
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  const int64_t a = alts[0].node_index, b = alts[1].node_index;

  absl::Status wrong_shape = ApplyDecisions(*module, {a, 0, b}, 1, 3);
  EXPECT_NE(wrong_shape.message().find("[num_alternatives, 2] = [2, 2]"),
            std::string::npos) << wrong_shape;
  absl::Status too_few = ApplyDecisions(*module, {a, 0}, 1, 2);
  EXPECT_NE(too_few.message().find("expected 2 rows, got 1"), std::string::npos)
      << too_few;
  absl::Status not_alt = ApplyDecisions(*module, {0, 0, b, 0}, 2, 2);
  EXPECT_NE(not_alt.message().find("node 0 is not an alternatives node"),
            std::string::npos) << not_alt;
  absl::Status twice = ApplyDecisions(*module, {a, 0, a, 1}, 2, 2);
  EXPECT_NE(twice.message().find("decided twice"), std::string::npos) << twice;
  absl::Status range = ApplyDecisions(*module, {a, 0, b, 3}, 2, 2);
  EXPECT_NE(range.message().find("choice 3"), std::string::npos) << range;
  EXPECT_NE(range.message().find("has 3 choices (0..2)"), std::string::npos) << range;
  absl::Status choices = ApplyChoices(*module, {0, -1});
  EXPECT_FALSE(choices.ok());

  EXPECT_EQ(module->entry()->instruction_count(), count);
  EXPECT_EQ(FindAlternatives(*module).size(), 2u);
}

// A dry pass that offers one alternative per call until `budget` runs out.
class CountingDryPass : public Pass {
 public:
  explicit CountingDryPass(int* runs) : runs_(runs) {}
  std::string_view name() const override { return "counting"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    ++*runs_;
    Instruction* root = module.entry()->root();
    Instruction* copy = rewriter.Add(
        module.entry(), Instruction::Create(Opcode::kCopy, root->shape(), {root}));
    if (absl::Status s = rewriter.Replace(root, copy); !s.ok()) return s;
    return true;
  }

 private:
  int* runs_;
};

TEST(PipelineTest, DryPassHandsBackControlLoopCountTimes) {
  auto module = MakeModule();
  int runs = 0;
  Pipeline pipeline("p");
  pipeline.AddPass(CreatePass("dce").value());
  pipeline.AddDryPass(std::make_unique<CountingDryPass>(&runs), 7);
  pipeline.AddPass(CreatePass("dce").value());
  int pauses = 0;
  while (pipeline.Run(*module).value()) {
    ++pauses;
    std::vector<int64_t> choices(FindAlternatives(*module).size(), 1);
    ASSERT_TRUE(ApplyChoices(*module, choices).ok());
  }
  EXPECT_EQ(pauses, 7);
  EXPECT_EQ(runs, 7);
  EXPECT_EQ(CountOpcode(*module, Opcode::kCopy), 7);
  // A fresh run starts over.
  ASSERT_TRUE(pipeline.Run(*module).value());
  EXPECT_EQ(runs, 8);
}

TEST(PipelineTest, FixedPointPipelineResumesAfterTheDryPass) {
  auto module = MakeModule();
  TestPass test_pass;
  Pipeline pipeline("fixed", -1);
  pipeline.AddDryPass(std::make_unique<TestPass>());
  pipeline.AddPass(CreatePass("dce").value());
  int pauses = 0;
  while (pipeline.Run(*module).value()) {
    ++pauses;
    std::vector<int64_t> choices(FindAlternatives(*module).size(), 1);
    ASSERT_TRUE(ApplyChoices(*module, choices).ok());
  }
  EXPECT_EQ(pauses, 1);
  EXPECT_TRUE(pipeline.changed());
  EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 0);
}

TEST(PassRegistryTest, SpecsAreValidated) {
  EXPECT_TRUE(CreatePass("dce").ok());
  EXPECT_TRUE(CreatePass(" dce() ").ok());
  absl::Status unknown = CreatePass("fusoin").status();
  EXPECT_NE(unknown.message().find("unknown pass `fusoin`; known passes:"),
            std::string::npos) << unknown;
  absl::Status option = CreatePass("dce(agressive=true)").status();
  EXPECT_NE(option.message().find("pass `dce` has no option `agressive`"),
            std::string::npos) << option;
  EXPECT_FALSE(CreatePass("dce(").ok());
}

}  // namespace
}  // namespace hlogym

// Tests of the rewrite framework: the Rewriter in apply and dry mode,
// alternatives, decisions, pruning, and resumable pipelines.
#include <algorithm>
#include <memory>
#include <random>

#include "core/ir/module.h"
#include "core/ir/node_order.h"
#include "core/passes/pass_registry.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/dependency_levels.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/pipeline.h"
#include "gtest/gtest.h"
#include "tests/core/fusion_test_util.h"
#include "tests/core/choice_test_util.h"

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
int64_t CountOpcode(const Module& module, Opcode opcode) {
  int64_t n = 0;
  for (Instruction* inst : NodeOrder(module)) n += inst->opcode() == opcode;
  return n;
}

TEST(RewriterTest, ApplyModeRewritesAndRemovesDeadCode) {
  auto module = NegationChainModule();
  TestPass pass;
  ASSERT_TRUE(RunPass(pass, *module).value());
  EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 0);
  EXPECT_EQ(module->entry()->instruction_count(), 3);  // p, exp, add
  EXPECT_EQ(module->entry()->root()->operand(0), module->entry()->parameter(0));
  EXPECT_FALSE(RunPass(pass, *module).value());  // fixed point
}

// Apply mode frees what a rewrite unlinked in whichever computation holds
// it (Finish sweeps only those computations).
TEST(RewriterTest, ApplyModeFreesDeadCodeInEveryComputation) {
  auto module = std::make_unique<Module>("m");
  const Shape s = Shape::Array(PrimitiveType::kF32, {4});
  auto callee = std::make_unique<Computation>("f");
  Instruction* p = callee->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* n1 = callee->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* n2 = callee->AddInstruction(Instruction::Create(Opcode::kNegate, s, {n1}));
  callee->set_root(callee->AddInstruction(Instruction::Create(Opcode::kExp, s, {n2})));
  Computation* f = module->AddComputation(std::move(callee));
  auto main = std::make_unique<Computation>("main");
  Instruction* q = main->AddInstruction(Instruction::CreateParameter(0, s, "q"));
  auto call = Instruction::Create(Opcode::kCall, s, {q});
  call->set_called_computations({f});
  main->set_root(main->AddInstruction(std::move(call)));
  module->set_entry(module->AddComputation(std::move(main)));
  TestPass pass;
  ASSERT_TRUE(RunPass(pass, *module).value());
  EXPECT_EQ(f->instruction_count(), 2);  // p, exp: both negates freed
  EXPECT_EQ(f->root()->operand(0), f->parameter(0));
  EXPECT_EQ(module->entry()->instruction_count(), 2);
}

TEST(RewriterTest, DryModeBuildsOneAlternativesNodePerUse) {
  auto module = NegationChainModule();
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
  auto module = NegationChainModule();
  TestPass pass;
  ASSERT_EQ(RunDryPass(pass, *module).value(), 2);
  ASSERT_TRUE(ApplyChoices(*module, {0, 0}).ok());
  EXPECT_EQ(CountOpcode(*module, Opcode::kAlternatives), 0);
  EXPECT_EQ(CountOpcode(*module, Opcode::kAbs), 0);
  EXPECT_EQ(module->entry()->instruction_count(), 5);
  EXPECT_EQ(module->entry()->root()->opcode(), Opcode::kAdd);
}

TEST(RewriterTest, DecisionsSelectPerUse) {
  auto module = NegationChainModule();
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
  auto module = NegationChainModule();
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

// Offers, for n2's use of n1 in MakeModule's graph, exp(n2): choosing it
// would make n2 read itself. `reads` is what the pass claims it reads.
class CyclicCandidatePass : public Pass {
 public:
  explicit CyclicCandidatePass(CandidateReads reads) : reads_(reads) {}
  std::string_view name() const override { return "cyclic"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    Computation* comp = module.entry();
    Instruction* n2 = comp->root()->operand(0);
    Instruction* n1 = n2->operand(0);
    Instruction* cyclic =
        rewriter.Add(comp, Instruction::Create(Opcode::kExp, n1->shape(), {n2}));
    if (absl::Status s = rewriter.ReplaceUse(n1, n2, cyclic, reads_); !s.ok()) return s;
    // A candidate that is always fine (it reads the original), so the use
    // keeps an alternatives node either way.
    Instruction* fine = rewriter.Add(comp, Instruction::Create(Opcode::kAbs, n1->shape(), {n1}));
    if (absl::Status s = rewriter.ReplaceUse(n1, n2, fine, CandidateReads::kOriginalsDependencies);
        !s.ok()) {
      return s;
    }
    return true;
  }

 private:
  CandidateReads reads_;
};

// Finish drops a candidate that would close a cycle, unless the pass said
// it reads only what the original depends on: that check is skipped (here
// the claim is false, which is how the skip shows).
TEST(RewriterTest, OnlyCandidatesThatMayReadAnythingAreCheckedForCycles) {
  for (CandidateReads reads : {CandidateReads::kAnything, CandidateReads::kOriginalsDependencies}) {
    auto module = NegationChainModule();
    const Instruction* n2 = module->entry()->root()->operand(0);
    CyclicCandidatePass pass(reads);
    ASSERT_EQ(RunDryPass(pass, *module).value(), 1);
    // Read off n2 directly: with the cycle kept, walks of the graph (as
    // FindAlternatives makes) would not end.
    const Instruction* alt = n2->operand(0);
    ASSERT_EQ(alt->opcode(), Opcode::kAlternatives);
    const bool checked = reads == CandidateReads::kAnything;
    EXPECT_EQ(alt->operand_count(), checked ? 2 : 3);  // the original, then candidates
    EXPECT_EQ(alt->operand(1)->opcode(), checked ? Opcode::kAbs : Opcode::kExp);
  }
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
  auto module = NegationChainModule();
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
  auto module = NegationChainModule();
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

// An apply pass that reports a change on its first `changes` runs, counting
// runs, and says whether it is idempotent.
class ScriptedPass : public Pass {
 public:
  ScriptedPass(int changes, bool idempotent, int* runs)
      : changes_(changes), idempotent_(idempotent), runs_(runs) {}
  std::string_view name() const override { return "scripted"; }
  absl::StatusOr<bool> Run(Module&, Rewriter&) override { return ++*runs_ <= changes_; }
  bool idempotent() const override { return idempotent_; }

 private:
  int changes_;
  bool idempotent_;
  int* runs_;
};

// A fixed point needs a round without changes; an idempotent pass whose own
// run was the last change is not run again in it, any other pass is.
TEST(PipelineTest, FixedPointSkipsAnIdempotentPassNothingChangedSince) {
  for (const bool idempotent : {false, true}) {
    auto module = NegationChainModule();
    int first = 0, second = 0;
    Pipeline pipeline("fixed", -1);
    pipeline.AddPass(std::make_unique<ScriptedPass>(1, idempotent, &first));
    pipeline.AddPass(std::make_unique<ScriptedPass>(0, false, &second));
    EXPECT_FALSE(pipeline.Run(*module).value());
    EXPECT_TRUE(pipeline.changed());
    EXPECT_EQ(first, idempotent ? 1 : 2) << idempotent;
    EXPECT_EQ(second, 2) << idempotent;
  }
  // A later pass's change makes it run again.
  auto module = NegationChainModule();
  int first = 0, second = 0;
  Pipeline pipeline("fixed", -1);
  pipeline.AddPass(std::make_unique<ScriptedPass>(1, true, &first));
  pipeline.AddPass(std::make_unique<ScriptedPass>(1, true, &second));
  EXPECT_FALSE(pipeline.Run(*module).value());
  EXPECT_EQ(first, 2);
  EXPECT_EQ(second, 1);
  // A new run forgets what the last one ran.
  EXPECT_FALSE(pipeline.Run(*module).value());
  EXPECT_EQ(first, 3);
  EXPECT_EQ(second, 2);
}

// CSE and DCE say they are idempotent: a fixed point that skips their
// second runs ends where running every pass every round ends, on modules
// with duplicates to merge (fusion candidates chosen at random).
TEST(PipelineTest, CseDceFixedPointMatchesRunningEveryPassEveryRound) {
  std::mt19937_64 rng(11);
  int64_t merged = 0;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> module = fusion_test::LoadFile(path);
    if (module == nullptr) continue;
    std::unique_ptr<Pass> fusion = CreatePass("fusion").value();
    ASSERT_TRUE(RunDryPass(*fusion, *module).ok()) << path;
    std::vector<int64_t> choices;
    for (const AlternativeNode& alt : FindAlternatives(*module)) {
      choices.push_back(static_cast<int64_t>(rng() % alt.num_choices()));
    }
    ASSERT_TRUE(ApplyChoices(*module, choices).ok()) << path;
    // Both copies: a copy is stored in post-order, the original is not.
    std::unique_ptr<Module> reference = module->Clone();
    module = module->Clone();
    std::unique_ptr<Pass> cse = CreatePass("cse").value();
    std::unique_ptr<Pass> dce = CreatePass("dce").value();
    ASSERT_TRUE(cse->idempotent() && dce->idempotent());
    for (int round = 0;; ++round) {
      ASSERT_LT(round, kFixedPointLimit) << path;
      const bool a = RunPass(*cse, *reference).value();
      const bool b = RunPass(*dce, *reference).value();
      merged += a;
      if (!a && !b) break;
    }
    Pipeline pipeline("post", -1);
    pipeline.AddPass(CreatePass("cse").value());
    pipeline.AddPass(CreatePass("dce").value());
    ASSERT_FALSE(pipeline.Run(*module).value()) << path;
    EXPECT_EQ(DescribeModule(*module), DescribeModule(*reference)) << path;
  }
  EXPECT_GT(merged, 0);
}

// The small twins after one dry fusion round: alternatives, candidate
// fusions and sparse unique ids, as the environment's modules look.
std::vector<std::unique_ptr<Module>> SmallTwinsWithAlternatives() {
  std::vector<std::unique_ptr<Module>> modules;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> module = fusion_test::LoadFile(path);
    if (module == nullptr) continue;
    std::unique_ptr<Pass> fusion = CreatePass("fusion").value();
    EXPECT_TRUE(RunDryPass(*fusion, *module).ok()) << path;
    modules.push_back(std::move(module));
  }
  return modules;
}

// The bounded walk of DependencyLevels answers as a full backward walk, on
// the twins as they are and after edges are added the way the Rewriter
// builds alternatives (a new node between an operand and its user).
TEST(RewriteDependencyLevelsTest, AgreesWithFullWalkOnSmallTwins) {
  std::mt19937_64 rng(11);
  int64_t checked = 0, dependent = 0;
  for (const auto& module : SmallTwinsWithAlternatives()) {
    for (const auto& comp : module->computations()) {
      std::vector<Instruction*> insts;
      for (const auto& inst : comp->instructions()) insts.push_back(inst.get());
      if (insts.size() < 2) continue;
      DependencyLevels levels;
      auto check = [&](int64_t pairs) {
        for (int64_t i = 0; i < pairs; ++i) {
          const Instruction* from = insts[rng() % insts.size()];
          const Instruction* target = insts[rng() % insts.size()];
          const bool expected = DependencyLevels::DependsOnByFullWalk(from, target);
          ASSERT_EQ(levels.DependsOn(from, target), expected)
              << module->name() << ": " << from->name() << " -> " << target->name();
          ++checked;
          dependent += expected;
        }
      };
      check(200);
      for (int round = 0; round < 20; ++round) {
        Instruction* user = insts[rng() % insts.size()];
        if (user->operand_count() == 0) continue;
        Instruction* original = user->operand(rng() % user->operand_count());
        Instruction* candidate = insts[rng() % insts.size()];
        if (levels.DependsOn(candidate, user)) continue;  // would be a cycle
        Instruction* node = comp->AddInstruction(Instruction::Create(
            Opcode::kAlternatives, original->shape(), {original, candidate}));
        levels.Added(node);
        user->ReplaceOperandWith(original, node);
        levels.AddedEdge(node, user);
        insts.push_back(node);
        check(50);
      }
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(dependent, 100);
}

// MakePostOrder indexes visits by unique id when it can; its order must be
// the one a depth-first walk keyed by address gives.
std::vector<Instruction*> ReferencePostOrder(const Computation& comp) {
  std::vector<Instruction*> order;
  absl::flat_hash_map<const Instruction*, uint8_t> state;
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (const auto& start : comp.instructions()) {
    if (state[start.get()] != 0) continue;
    stack.emplace_back(start.get(), 0);
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t num_operands = inst->operands().size();
      if (next < num_operands + inst->control_predecessors().size()) {
        Instruction* dep = next < num_operands
                               ? inst->operand(next)
                               : inst->control_predecessors()[next - num_operands];
        ++next;
        uint8_t& s = state[dep];
        if (s == 0 && dep->parent() == &comp) {
          s = 1;
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      state[inst] = 2;
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

TEST(RewritePostOrderTest, MatchesReferenceWalkOnSmallTwins) {
  int64_t computations = 0;
  for (const auto& module : SmallTwinsWithAlternatives()) {
    for (const auto& comp : module->computations()) {
      EXPECT_EQ(comp->MakePostOrder(), ReferencePostOrder(*comp)) << comp->name();
      ++computations;
    }
  }
  EXPECT_GT(computations, 20);
  // Outside a module (ids -1) the address-keyed path is taken.
  auto loose = std::make_unique<Computation>("loose");
  Shape s = Shape::Array(PrimitiveType::kF32, {2});
  Instruction* p = loose->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* e = loose->AddInstruction(Instruction::Create(Opcode::kExp, s, {p}));
  Instruction* n = loose->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* add = loose->AddInstruction(Instruction::Create(Opcode::kAdd, s, {n, e}));
  // Stored add last but exp before negate: storage order is kept.
  EXPECT_EQ(loose->MakePostOrder(), (std::vector<Instruction*>{p, e, n, add}));
}

// Storage out of post-order, whole or from some point on, small and large
// computations, with control edges, ids in a module or none: each of
// MakePostOrder's paths (ids rising, a small computation searched, the
// stored-order check that hands over part-way to the walk) must give the
// reference walk's order.
TEST(RewritePostOrderTest, MatchesReferenceWalkOnShuffledStorage) {
  std::mt19937_64 rng(11);
  const Shape s = Shape::Array(PrimitiveType::kF32, {2});
  int64_t reordered = 0;
  for (int n : {3, 9, 24, 25, 60}) {
    for (int trial = 0; trial < 24; ++trial) {
      std::vector<std::unique_ptr<Instruction>> made;
      std::vector<Instruction*> made_order;
      made.push_back(Instruction::CreateParameter(0, s, "p"));
      made_order.push_back(made.back().get());
      for (int i = 1; i < n; ++i) {
        Instruction* a = made_order[rng() % made_order.size()];
        Instruction* b = made_order[rng() % made_order.size()];
        made.push_back(Instruction::Create(Opcode::kAdd, s, {a, b}));
        made_order.push_back(made.back().get());
      }
      for (int k = 0; k < n / 4; ++k) {
        const size_t i = rng() % n, j = rng() % n;
        if (i < j) made_order[i]->AddControlDependencyTo(made_order[j]);
      }
      // Trials 0 mod 3 keep the order made, 1 mod 3 swap a pair late in
      // it, 2 mod 3 shuffle it all.
      std::vector<size_t> storage(n);
      for (int i = 0; i < n; ++i) storage[i] = i;
      if (trial % 3 == 1 && n > 2) {
        const size_t i = n / 2 + rng() % (n - n / 2 - 1);
        std::swap(storage[i], storage[i + 1]);
      } else if (trial % 3 == 2) {
        std::shuffle(storage.begin(), storage.end(), rng);
      }
      reordered += trial % 3 != 0;
      auto comp = std::make_unique<Computation>(absl::StrCat("c", n, "_", trial));
      for (size_t i : storage) comp->AddInstruction(std::move(made[i]));
      comp->set_root(made_order.back());
      if (trial % 2 == 0) {
        EXPECT_EQ(comp->MakePostOrder(), ReferencePostOrder(*comp)) << comp->name();
      } else {
        Module module("m");
        Computation* added = module.AddComputation(std::move(comp));
        module.set_entry(added);
        EXPECT_EQ(added->MakePostOrder(), ReferencePostOrder(*added)) << added->name();
      }
    }
  }
  EXPECT_GT(reordered, 50);
}

// FindAlternatives skips computations without alternatives; its nodes and
// indices must be those of a scan over the whole NodeOrder.
TEST(RewriteFindAlternativesTest, MatchesNodeOrderScanOnSmallTwins) {
  int64_t found = 0;
  for (const auto& module : SmallTwinsWithAlternatives()) {
    std::vector<Instruction*> order = NodeOrder(*module);
    std::vector<std::pair<Instruction*, int64_t>> expected, actual;
    for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
      if (order[i]->opcode() == Opcode::kAlternatives) expected.emplace_back(order[i], i);
    }
    for (const AlternativeNode& alt : FindAlternatives(*module)) {
      actual.emplace_back(alt.node, alt.node_index);
    }
    EXPECT_EQ(actual, expected) << module->name();
    found += static_cast<int64_t>(actual.size());
  }
  EXPECT_GT(found, 20);
}

// What the environment's step did before CloneWithChoices.
std::unique_ptr<Module> CloneThenChoose(const Module& module, absl::Span<const int64_t> choices) {
  std::unique_ptr<Module> copy = module.Clone();
  EXPECT_TRUE(ApplyChoices(*copy, choices).ok());
  return copy;
}

void ExpectCloneWithChoicesMatches(Module& module, absl::Span<const int64_t> choices) {
  const std::string before = DescribeModule(module);
  std::unique_ptr<Module> expected = CloneThenChoose(module, choices);
  absl::StatusOr<std::unique_ptr<Module>> actual = CloneWithChoices(module, choices);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(DescribeModule(**actual), DescribeModule(*expected)) << module.name();
  EXPECT_EQ((*actual)->NextUniqueId(), expected->NextUniqueId());
  // New names continue alike too.
  EXPECT_EQ((*actual)->UniqueInstructionName("add"), expected->UniqueInstructionName("add"));
  // Given the entry's post-order (as the env passes the one it found the
  // alternatives with), the copy is the same.
  const std::vector<Instruction*> entry_order = module.entry()->MakePostOrder();
  absl::StatusOr<std::unique_ptr<Module>> ordered =
      CloneWithChoices(module, FindAlternatives(module), choices, entry_order);
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(DescribeModule(**ordered), DescribeModule(*CloneThenChoose(module, choices)))
      << module.name();
  EXPECT_EQ(DescribeModule(module), before) << "the source module changed";
}

// Copying only what survives must give the module that copying everything
// and then choosing gives, down to storage, user and control order.
TEST(CloneWithChoicesTest, EqualsCloneThenApplyChoicesOnSmallTwins) {
  std::mt19937_64 rng(3);
  int64_t checked = 0;
  for (const auto& module : SmallTwinsWithAlternatives()) {
    const std::vector<AlternativeNode> alts = FindAlternatives(*module);
    if (alts.empty()) continue;
    for (int round = 0; round < 4; ++round) {
      std::vector<int64_t> choices;
      for (const AlternativeNode& alt : alts) {
        // Round 0 keeps every original, round 1 takes every first candidate.
        choices.push_back(round < 2 ? std::min<int64_t>(round, alt.num_choices() - 1)
                                    : static_cast<int64_t>(rng() % alt.num_choices()));
      }
      ExpectCloneWithChoicesMatches(*module, choices);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(CloneWithChoicesTest, RejectsBadChoicesAsApplyChoicesDoes) {
  auto module = NegationChainModule();
  TestPass pass;
  ASSERT_GT(RunDryPass(pass, *module).value(), 0);
  const size_t n = FindAlternatives(*module).size();
  for (const std::vector<int64_t>& bad :
       {std::vector<int64_t>(n + 1, 0), std::vector<int64_t>(n, 7), std::vector<int64_t>(n, -1)}) {
    auto copy = module->Clone();
    const absl::Status expected = ApplyChoices(*copy, bad);
    const absl::StatusOr<std::unique_ptr<Module>> actual = CloneWithChoices(*module, bad);
    ASSERT_FALSE(expected.ok());
    EXPECT_EQ(actual.status(), expected);
  }
  std::vector<int64_t> choices(n, 2);
  ExpectCloneWithChoicesMatches(*module, choices);
}

// The copy marks what it keeps by unique id: ids shared by several
// instructions, or past its table, must fall back without changing the copy.
TEST(CloneWithChoicesTest, SharedAndHugeIdsMatch) {
  auto module = NegationChainModule();
  TestPass pass;
  ASSERT_GT(RunDryPass(pass, *module).value(), 0);
  int64_t k = 0;
  for (const auto& computation : module->computations()) {
    for (const auto& inst : computation->instructions()) {
      inst->set_unique_id(k % 2 == 0 ? 7 : (int64_t{1} << 40) + k);
      ++k;
    }
  }
  const std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_FALSE(alts.empty());
  for (int64_t pick : {0, 1}) {
    std::vector<int64_t> choices;
    for (const AlternativeNode& alt : alts) {
      choices.push_back(std::min<int64_t>(pick, alt.num_choices() - 1));
    }
    ExpectCloneWithChoicesMatches(*module, choices);
  }
}

// An alternatives node choosing another one, and control edges: the
// in-place path's result, whatever the selection order makes of it.
TEST(CloneWithChoicesTest, NestedAlternativesAndControlEdgesMatch) {
  auto module = NestedAlternativesModule();
  const Shape& s = module->entry()->parameter(0)->shape();
  for (const std::vector<int64_t>& choices :
       {std::vector<int64_t>{0, 0}, {1, 1}, {0, 1}, {1, 2}, {0, 2}}) {
    ExpectCloneWithChoicesMatches(*module, choices);
  }
  // Control edges alone keep the copying path; dead ends drop theirs.
  auto plain = NegationChainModule();
  Instruction* q = plain->entry()->parameter(0);
  Instruction* x = plain->entry()->AddInstruction(Instruction::Create(Opcode::kAbs, s, {q}));
  Instruction* alt = plain->entry()->AddInstruction(Instruction::Create(
      Opcode::kAlternatives, s, {plain->entry()->root(), x}));
  x->AddControlDependencyTo(plain->entry()->root()->operand(1));
  plain->entry()->set_root(alt);
  for (const std::vector<int64_t>& choices : {std::vector<int64_t>{0}, {1}}) {
    ExpectCloneWithChoicesMatches(*plain, choices);
  }
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

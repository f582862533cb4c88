// ApplyChoices in place against CloneWithChoices: an env step edits its
// module in place and must end where choosing into a copy ends, down to
// storage, user and control order, over whole episodes (each step's dry pass
// offers from what the last left).
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ir/module.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "gtest/gtest.h"
#include "tests/core/fusion_test_util.h"
#include "tests/core/choice_test_util.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> LoadWithOffers(const std::filesystem::path& path, Pass& pass) {
  std::unique_ptr<Module> module = fusion_test::LoadFile(path);
  if (module != nullptr) {
    EXPECT_TRUE(RunDryPass(pass, *module).ok()) << path;
  }
  return module;
}

// Steps `copied` by CloneWithChoices and `edited` in place with the same
// choices (given the entry's post-order or not, as `ordered` says), stores
// both as cloned, and expects them equal; `copied` becomes the copy.
void ExpectSameStep(std::unique_ptr<Module>& copied, Module& edited,
                    absl::Span<const int64_t> choices, bool ordered) {
  const std::vector<Instruction*> copied_order =
      ordered ? copied->entry()->MakePostOrder() : std::vector<Instruction*>();
  const std::vector<Instruction*> edited_order =
      ordered ? edited.entry()->MakePostOrder() : std::vector<Instruction*>();
  absl::StatusOr<std::unique_ptr<Module>> copy =
      CloneWithChoices(*copied, FindAlternatives(*copied), choices, copied_order);
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(ApplyChoices(edited, FindAlternatives(edited), choices, edited_order).ok());
  copied = *std::move(copy);
  copied->StoreAsCloned();
  edited.StoreAsCloned();
  EXPECT_EQ(DescribeModule(edited), DescribeModule(*copied)) << edited.name();
  EXPECT_EQ(edited.next_unique_id(), copied->next_unique_id());
  // Stored as cloned, a module is what its copy is.
  EXPECT_EQ(DescribeModule(*edited.Clone()), DescribeModule(edited)) << edited.name();
  // New names continue alike too (both start without name registries).
  EXPECT_EQ(edited.UniqueInstructionName("add"), copied->UniqueInstructionName("add"));
}

// Four steps of random fusions on every small corpus twin, two modules built
// alike: one stepped as the env stepped before (a copy with the choices),
// one in place.
TEST(ApplyChoicesInPlaceTest, EpisodesOnSmallTwinsEndAsCopiesDo) {
  std::mt19937_64 rng(5);
  std::unique_ptr<Pass> fusion = CreatePass("fusion").value();
  int64_t steps = 0, taken = 0;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> copied = LoadWithOffers(path, *fusion);
    std::unique_ptr<Module> edited = LoadWithOffers(path, *fusion);
    if (copied == nullptr || edited == nullptr) continue;
    for (int step = 0; step < 4; ++step) {
      const std::vector<AlternativeNode> alts = FindAlternatives(*copied);
      if (alts.empty()) break;
      std::vector<int64_t> choices;
      for (const AlternativeNode& alt : alts) {
        choices.push_back(static_cast<int64_t>(rng() % alt.num_choices()));
        taken += choices.back() != 0;
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSameStep(copied, *edited, choices, step % 2 == 0)) << path;
      ++steps;
      ASSERT_TRUE(RunDryPass(*fusion, *copied).ok()) << path;
      ASSERT_TRUE(RunDryPass(*fusion, *edited).ok()) << path;
    }
  }
  EXPECT_GT(steps, 60);
  EXPECT_GT(taken, 300);
}

// NestedAlternativesModule: the copy takes the in-place path there (an
// alternatives node chooses another), so both do the same.
TEST(ApplyChoicesInPlaceTest, NestedAlternativesAndControlEdgesEndAsCopiesDo) {
  for (const std::vector<int64_t>& choices :
       {std::vector<int64_t>{0, 0}, {1, 1}, {0, 1}, {1, 2}, {0, 2}}) {
    for (bool ordered : {false, true}) {
      std::unique_ptr<Module> copied = NestedAlternativesModule();
      std::unique_ptr<Module> edited = NestedAlternativesModule();
      ASSERT_NO_FATAL_FAILURE(ExpectSameStep(copied, *edited, choices, ordered));
    }
  }
}

TEST(ApplyChoicesInPlaceTest, BadChoicesChangeNothing) {
  std::unique_ptr<Module> module = NestedAlternativesModule();
  const std::string before = DescribeModule(*module);
  const std::vector<AlternativeNode> alts = FindAlternatives(*module);
  const absl::Status count = ApplyChoices(*module, alts, std::vector<int64_t>{0});
  EXPECT_NE(count.message().find("expected one choice per alternatives node (2)"),
            std::string::npos)
      << count;
  const absl::Status range = ApplyChoices(*module, alts, std::vector<int64_t>{0, 3});
  EXPECT_NE(range.message().find("out of range"), std::string::npos) << range;
  EXPECT_EQ(DescribeModule(*module), before);
}

TEST(ComputationStoreTest, StoreInOrderTakesOnlyAnOrderOfItsOwnInstructions) {
  std::unique_ptr<Module> module = NestedAlternativesModule();
  std::unique_ptr<Module> other = NestedAlternativesModule();
  Computation* main = module->entry();
  const std::string before = DescribeModule(*module);
  std::vector<Instruction*> order = main->MakePostOrder();
  order.pop_back();
  const absl::Status short_order = main->StoreInOrder(order);
  EXPECT_NE(short_order.message().find("must list each of its 9 instructions once"),
            std::string::npos)
      << short_order;
  order.push_back(other->entry()->root());
  EXPECT_FALSE(main->StoreInOrder(order).ok());
  EXPECT_EQ(DescribeModule(*module), before);
  // Reversed storage is taken as given; stored as cloned again, the module
  // is what its copy is.
  std::vector<Instruction*> reversed = main->MakePostOrder();
  std::reverse(reversed.begin(), reversed.end());
  ASSERT_TRUE(main->StoreInOrder(reversed).ok());
  EXPECT_EQ(main->instructions().front().get(), reversed.front());
  module->StoreAsCloned();
  EXPECT_EQ(DescribeModule(*module), DescribeModule(*module->Clone()));
}

// StoreAsCloned skips a computation it stored already unless its storage or
// links changed since: each edit here leaves a user or control-successor list
// out of storage order (so the module differs from its copy), after the
// module was stored as cloned, and storing it again must relink it.
TEST(ComputationStoreTest, EditsAfterStoringAsClonedAreRelinked) {
  // The chain's entry in storage order: p, n1, n2, e, add(n2, e).
  struct Chain {
    Instruction *p, *n1, *n2, *e;
  };
  struct Edit {
    const char* what;
    void (*apply)(Computation& main, const Chain& c);
  };
  const Edit edits[] = {
      {"new users stored in another order than made",
       [](Computation& main, const Chain& c) {
         auto a = Instruction::Create(Opcode::kNegate, c.p->shape(), {c.p});
         auto b = Instruction::Create(Opcode::kExp, c.p->shape(), {c.p});
         main.AddInstruction(std::move(b));
         main.AddInstruction(std::move(a));
       }},
      {"an operand replaced and put back",
       [](Computation&, const Chain& c) {
         c.e->ReplaceOperandWith(int64_t{0}, c.n1);
         c.e->ReplaceOperandWith(int64_t{0}, c.n2);
       }},
      {"control edges added against storage order",
       [](Computation&, const Chain& c) {
         // n1's control successors listed e then n2, against storage order
         // (e reads n1 instead of n2 first, so nothing orders n2 before e).
         c.e->ReplaceOperandWith(int64_t{0}, c.n1);
         c.n1->AddControlDependencyTo(c.e);
         c.n1->AddControlDependencyTo(c.n2);
       }},
  };
  for (const Edit& edit : edits) {
    std::unique_ptr<Module> module = NegationChainModule();
    module->StoreAsCloned();
    ASSERT_EQ(DescribeModule(*module), DescribeModule(*module->Clone())) << edit.what;
    Computation& main = *module->entry();
    auto at = [&](int i) { return main.instructions()[i].get(); };
    edit.apply(main, Chain{at(0), at(1), at(2), at(3)});
    ASSERT_NE(DescribeModule(*module), DescribeModule(*module->Clone()))
        << edit.what << ": the edit must leave the module unlike its copy";
    module->StoreAsCloned();
    EXPECT_EQ(DescribeModule(*module), DescribeModule(*module->Clone())) << edit.what;
  }
}

}  // namespace
}  // namespace hlogym

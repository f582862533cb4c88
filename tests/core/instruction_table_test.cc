// InstructionTable (core/ir/instruction_table.h): the same values whether a
// map uses the thread's id-indexed table or hashes by address, and no value
// seen through another map or another module.
#include "core/ir/instruction_table.h"

#include <memory>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

constexpr char kModule[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8] parameter(0)
  n = f32[8] negate(p)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=add
}
)";

std::unique_ptr<Module> Parse() { return ParseModule(kModule).value(); }

std::vector<const Instruction*> All(const Module& module) {
  std::vector<const Instruction*> all;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) all.push_back(inst.get());
  }
  return all;
}

TEST(InstructionTableTest, AModuleTableHoldsWhatItIsGivenAndNothingElse) {
  std::unique_ptr<Module> module = Parse();
  InstructionTable<int64_t> table(*module);
  const std::vector<const Instruction*> all = All(*module);
  for (const Instruction* inst : all) EXPECT_EQ(table.Find(inst), nullptr);
  for (const Instruction* inst : all) table.Set(inst, 10 * inst->unique_id() + 1);
  for (const Instruction* inst : all) {
    ASSERT_NE(table.Find(inst), nullptr) << inst->name();
    EXPECT_EQ(*table.Find(inst), 10 * inst->unique_id() + 1);
  }
  // A copy has the same ids: its instructions must not read the original's
  // slots.
  std::unique_ptr<Module> copy = module->Clone();
  for (const Instruction* inst : All(*copy)) EXPECT_EQ(table.Find(inst), nullptr) << inst->name();
  table.Set(All(*copy).front(), -7);
  EXPECT_EQ(*table.Find(All(*copy).front()), -7);
  EXPECT_EQ(*table.Find(all.front()), 10 * all.front()->unique_id() + 1);
}

TEST(InstructionTableTest, ANewTableStartsEmptyOnTheSameThread) {
  std::unique_ptr<Module> module = Parse();
  {
    InstructionTable<int64_t> first(*module);
    for (const Instruction* inst : All(*module)) first.Set(inst, 1);
  }
  InstructionTable<int64_t> second(*module);
  for (const Instruction* inst : All(*module)) EXPECT_EQ(second.Find(inst), nullptr);
}

TEST(InstructionTableTest, NestedTablesOfOneTypeKeepTheirOwnValues) {
  std::unique_ptr<Module> module = Parse();
  const Computation* entry = module->entry();
  InstructionTable<int64_t> outer(entry);
  InstructionTable<int64_t> inner(entry);  // the thread's table is taken: hashed
  for (const auto& inst : entry->instructions()) {
    outer.Set(inst.get(), 1);
    inner.Set(inst.get(), 2);
  }
  for (const auto& inst : entry->instructions()) {
    EXPECT_EQ(*outer.Find(inst.get()), 1);
    EXPECT_EQ(*inner.Find(inst.get()), 2);
  }
}

TEST(InstructionTableTest, SharedIdsFallBackToHashing) {
  std::unique_ptr<Module> module = Parse();
  Computation* entry = module->entry();
  // Two instructions with one id: the table cannot index them apart.
  entry->instructions()[1]->set_unique_id(entry->instructions()[0]->unique_id());
  InstructionTable<int64_t> table(entry);
  table.Set(entry->instructions()[0].get(), 3);
  table.Set(entry->instructions()[1].get(), 4);
  EXPECT_EQ(*table.Find(entry->instructions()[0].get()), 3);
  EXPECT_EQ(*table.Find(entry->instructions()[1].get()), 4);
  EXPECT_EQ(table.Find(entry->instructions()[2].get()), nullptr);
}

TEST(InstructionTableTest, AComputationTableDoesNotReachOtherComputations) {
  std::unique_ptr<Module> module = Parse();
  const Computation* entry = module->entry();
  InstructionTable<int64_t> table(entry);
  for (const auto& inst : entry->instructions()) table.Set(inst.get(), 5);
  for (const auto& computation : module->computations()) {
    if (computation.get() == entry) continue;
    for (const auto& inst : computation->instructions()) {
      EXPECT_EQ(table.Find(inst.get()), nullptr) << inst->name();
    }
  }
}

}  // namespace
}  // namespace hlogym

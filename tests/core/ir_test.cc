// Tests of the IR itself: shapes, literals, narrow floats, graph edits.
#include <cmath>
#include <random>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

#include "core/ir/float_formats.h"
#include "core/ir/module.h"
#include "core/ir/name_registry.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(ShapeTest, PrintsArraysTuplesAndDynamicDims) {
  EXPECT_EQ(Shape::Array(PrimitiveType::kF32, {8, 4}).ToString(), "f32[8,4]{1,0}");
  EXPECT_EQ(Shape::Scalar(PrimitiveType::kS32).ToString(), "s32[]");
  Shape dynamic = Shape::Array(PrimitiveType::kF32, {4, kUnboundedSize});
  dynamic.set_dynamic_dim(0, true);
  dynamic.set_dynamic_dim(1, true);
  EXPECT_EQ(dynamic.ToString(false), "f32[<=4,?]");
  Shape tuple = Shape::Tuple({Shape::Scalar(PrimitiveType::kS32),
                              Shape::Array(PrimitiveType::kBF16, {2})});
  EXPECT_EQ(tuple.ToString(), "(s32[], bf16[2]{0})");
  EXPECT_EQ(Shape::Token().ToString(), "token[]");
  EXPECT_EQ(tuple.byte_size(), 4 + 2 * 2);
}

TEST(ShapeTest, EqualityConsidersLayoutOnlyWhenBothHaveOne) {
  Shape a = Shape::Array(PrimitiveType::kF32, {2, 3});
  Shape b = a;
  b.mutable_layout().minor_to_major = {0, 1};
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.Compatible(b));
  b.clear_layout();
  EXPECT_EQ(a, b);
}

TEST(LayoutTest, PrintsTilesAndMemorySpace) {
  Layout layout = Layout::RowMajor(2);
  auto extras = std::make_shared<LayoutExtras>();
  extras->tiles = {{8, 128}, {2, 1}};
  extras->memory_space = 5;
  layout.extras = extras;
  EXPECT_EQ(layout.ToString(), "{1,0:T(8,128)(2,1)S(5)}");
}

TEST(NarrowFloatTest, HalfAndBFloat16RoundToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);  // rounds up to inf
  EXPECT_EQ(FloatToHalfBits(5.960464477539063e-08f), 0x0001);  // min subnormal
  EXPECT_EQ(FloatToHalfBits(1.0f + 1.0f / 2048), 0x3C00);       // tie to even
  EXPECT_EQ(FloatToHalfBits(1.0f + 3.0f / 2048), 0x3C02);       // tie to even
  EXPECT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7E00)));
  EXPECT_EQ(FloatToBF16Bits(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBF16Bits(3.14159265f), 0x4049);
  EXPECT_EQ(BF16BitsToFloat(0x4049), 3.140625f);
  EXPECT_EQ(FloatToBF16Bits(-0.0f), 0x8000);
}

TEST(NarrowFloatTest, Float8VariantsHandleOverflowAndNaN) {
  EXPECT_EQ(EncodeNarrowFloat(PrimitiveType::kF8E4M3FN, 448.0), 0x7Eu);
  EXPECT_EQ(EncodeNarrowFloat(PrimitiveType::kF8E4M3FN, 1e6), 0x7Fu);  // NaN
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(PrimitiveType::kF8E4M3FN, 0x7F)));
  EXPECT_EQ(EncodeNarrowFloat(PrimitiveType::kF8E5M2, 1e6), 0x7Cu);  // inf
  EXPECT_EQ(EncodeNarrowFloat(PrimitiveType::kF8E4M3FNUZ, -0.0), 0x00u);
  EXPECT_EQ(DecodeNarrowFloat(PrimitiveType::kF8E4M3FNUZ, 0x7F), 240.0);
  EXPECT_TRUE(std::isnan(DecodeNarrowFloat(PrimitiveType::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(DecodeNarrowFloat(PrimitiveType::kF4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(EncodeNarrowFloat(PrimitiveType::kF4E2M1FN, 100.0), 0x7u);
  EXPECT_EQ(DecodeNarrowFloat(PrimitiveType::kF8E8M0FNU, 127), 1.0);
  // Every f8e5m2 and f8e4m3fn pattern decodes and encodes back to itself.
  for (PrimitiveType t : {PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3FN,
                          PrimitiveType::kF8E4M3, PrimitiveType::kF8E3M4,
                          PrimitiveType::kF8E5M2FNUZ}) {
    for (uint32_t bits = 0; bits < 256; ++bits) {
      double v = DecodeNarrowFloat(t, bits);
      if (std::isnan(v)) continue;
      EXPECT_EQ(EncodeNarrowFloat(t, v), bits) << PrimitiveTypeName(t) << " " << bits;
    }
  }
}

TEST(LiteralTest, PrintsLikeXla) {
  Literal scalar(Shape::Scalar(PrimitiveType::kF32));
  scalar.SetFromDouble(0, 2.0);
  EXPECT_EQ(scalar.ToString(), "2");
  scalar.SetFromDouble(0, 0.1);
  EXPECT_EQ(scalar.ToString(), "0.1");
  scalar.SetFromDouble(0, -INFINITY);
  EXPECT_EQ(scalar.ToString(), "-inf");
  scalar.SetFromDouble(0, NAN);
  EXPECT_EQ(scalar.ToString(), "nan");

  Literal matrix(Shape::Array(PrimitiveType::kS32, {2, 2}));
  for (int i = 0; i < 4; ++i) matrix.SetFromInt64(i, i + 1);
  EXPECT_EQ(matrix.ToString(), "{ {1, 2}, {3, 4} }");
  Literal vector(Shape::Array(PrimitiveType::kPred, {2}));
  vector.SetFromInt64(1, 1);
  EXPECT_EQ(vector.ToString(), "{false, true}");
  EXPECT_EQ(Literal::Elided(matrix.shape()).ToString(), "{...}");
}

TEST(LiteralTest, ConversionsSaturateAndWrap) {
  Literal s8(Shape::Scalar(PrimitiveType::kS8));
  s8.SetFromDouble(0, 300.0);
  EXPECT_EQ(s8.GetAsInt64(0), 127);
  s8.SetFromDouble(0, NAN);
  EXPECT_EQ(s8.GetAsInt64(0), 0);
  s8.SetFromInt64(0, 200);
  EXPECT_EQ(s8.GetAsInt64(0), -56);
  Literal s4(Shape::Scalar(PrimitiveType::kS4));
  s4.SetFromInt64(0, 9);
  EXPECT_EQ(s4.GetAsInt64(0), -7);
  Literal u32(Shape::Scalar(PrimitiveType::kU32));
  u32.SetFromDouble(0, -5.0);
  EXPECT_EQ(u32.GetAsInt64(0), 0);
  u32.SetFromDouble(0, 5e12);
  EXPECT_EQ(u32.GetAsInt64(0), 4294967295);
}

// entry(p0, p1) = multiply(add(p0, p1), p0)
std::unique_ptr<Module> MakeSmallModule() {
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Shape s = Shape::Array(PrimitiveType::kF32, {4});
  Instruction* p0 = comp->AddInstruction(Instruction::CreateParameter(0, s, "p0"));
  Instruction* p1 = comp->AddInstruction(Instruction::CreateParameter(1, s, "p1"));
  Instruction* add = comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {p0, p1}));
  add->set_name("sum");
  Instruction* mul =
      comp->AddInstruction(Instruction::Create(Opcode::kMultiply, s, {add, p0}));
  mul->set_name("product");
  comp->set_root(mul);
  module->set_entry(module->AddComputation(std::move(comp)));
  return module;
}

TEST(GraphTest, UsersTrackOperandEdits) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  Instruction* p0 = main->parameter(0);
  Instruction* sum = main->instructions()[2].get();
  Instruction* product = main->root();
  EXPECT_EQ(p0->user_count(), 2);
  EXPECT_EQ(sum->users().size(), 1u);
  Instruction* neg = main->AddInstruction(
      Instruction::Create(Opcode::kNegate, p0->shape(), {p0}));
  EXPECT_EQ(neg->name(), "negate");
  EXPECT_GE(neg->unique_id(), 4);
  sum->ReplaceAllUsesWith(neg);
  EXPECT_EQ(product->operand(0), neg);
  EXPECT_EQ(sum->user_count(), 0);
  EXPECT_TRUE(main->RemoveInstruction(sum).ok());
  EXPECT_EQ(p0->user_count(), 2);  // negate and product
  EXPECT_FALSE(main->RemoveInstruction(product).ok());  // the root
}

TEST(GraphTest, PostOrderPutsDefinitionsFirst) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  // A new instruction appended last but used by an earlier one.
  Instruction* p1 = main->parameter(1);
  Instruction* neg = main->AddInstruction(
      Instruction::Create(Opcode::kNegate, p1->shape(), {p1}));
  Instruction* sum = main->instructions()[2].get();
  sum->ReplaceOperandWith(1, neg);
  std::vector<Instruction*> order = main->MakePostOrder();
  ASSERT_EQ(order.size(), 5u);
  auto pos = [&](Instruction* i) {
    return std::find(order.begin(), order.end(), i) - order.begin();
  };
  EXPECT_LT(pos(neg), pos(sum));
  EXPECT_LT(pos(sum), pos(main->root()));
}

// Each edit that can store an instruction after something depending on it,
// made to a computation whose storage was in order, must send MakePostOrder
// back to walking (Computation keeps a flag instead of checking each time).
TEST(GraphTest, PostOrderFollowsEveryEditThatBreaksStorageOrder) {
  auto position_in = [](const std::vector<Instruction*>& order, const Instruction* inst) {
    return std::find(order.begin(), order.end(), inst) - order.begin();
  };
  {  // an operand appended that is stored after its user
    auto module = MakeSmallModule();
    Computation* main = module->entry();
    Instruction* sum = main->instructions()[2].get();
    Instruction* neg = main->AddInstruction(
        Instruction::Create(Opcode::kNegate, sum->shape(), {main->parameter(0)}));
    sum->AppendOperand(neg);
    const std::vector<Instruction*> order = main->MakePostOrder();
    EXPECT_LT(position_in(order, neg), position_in(order, sum));
  }
  {  // a control edge to an instruction stored earlier
    auto module = MakeSmallModule();
    Computation* main = module->entry();
    Instruction* sum = main->instructions()[2].get();
    Instruction* neg = main->AddInstruction(
        Instruction::Create(Opcode::kNegate, sum->shape(), {main->parameter(0)}));
    neg->AddControlDependencyTo(sum);
    const std::vector<Instruction*> order = main->MakePostOrder();
    EXPECT_LT(position_in(order, neg), position_in(order, sum));
  }
  {  // an instruction added before the operand it reads
    auto comp = std::make_unique<Computation>("c");
    Shape s = Shape::Array(PrimitiveType::kF32, {4});
    auto p0 = Instruction::CreateParameter(0, s, "p0");
    auto neg = Instruction::Create(Opcode::kNegate, s, {p0.get()});
    Instruction* neg_added = comp->AddInstruction(std::move(neg));
    Instruction* p0_added = comp->AddInstruction(std::move(p0));
    comp->set_root(neg_added);
    const std::vector<Instruction*> order = comp->MakePostOrder();
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[0], p0_added);
    EXPECT_EQ(order[1], neg_added);
  }
}

// Renumbering parameters keeps the objects where they are stored, with
// their uses, so a computation stored in post-order stays so; anything but a
// permutation is refused and changes nothing.
TEST(GraphTest, RenumberParametersKeepsStorageAndUses) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  Instruction* p0 = main->parameter(0);
  Instruction* p1 = main->parameter(1);
  std::vector<Instruction*> stored;
  for (const auto& inst : main->instructions()) stored.push_back(inst.get());
  ASSERT_TRUE(main->stored_in_post_order());
  ASSERT_TRUE(main->RenumberParameters({1, 0}).ok());
  EXPECT_EQ(main->parameter(0), p1);
  EXPECT_EQ(main->parameter(1), p0);
  EXPECT_EQ(p1->parameter_number(), 0);
  EXPECT_EQ(p0->parameter_number(), 1);
  EXPECT_EQ(p0->user_count(), 2);  // sum and product still read it
  EXPECT_EQ(p1->user_count(), 1);
  EXPECT_TRUE(main->stored_in_post_order());
  std::vector<Instruction*> after;
  for (const auto& inst : main->instructions()) after.push_back(inst.get());
  EXPECT_EQ(after, stored);
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{0, 0}, {0}, {0, 2}, {-1, 0}, {0, 1, 2}}) {
    absl::Status s = main->RenumberParameters(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("needs a permutation of 0..1"), std::string::npos) << s;
    EXPECT_EQ(main->parameter(0), p1);
    EXPECT_EQ(p1->parameter_number(), 0);
    EXPECT_EQ(p0->parameter_number(), 1);
  }
}

TEST(ShapeTest, CopiesOfTuplesAreDeep) {
  Shape array = Shape::Array(PrimitiveType::kF32, {2, 3});
  Shape tuple = Shape::Tuple({array, Shape::Scalar(PrimitiveType::kS32)});
  Shape copy = tuple;
  copy.mutable_tuple_shapes()[0] = Shape::Scalar(PrimitiveType::kF16);
  EXPECT_EQ(tuple.ToString(), "(f32[2,3]{1,0}, s32[])");
  EXPECT_EQ(copy.ToString(), "(f16[], s32[])");
  copy = tuple;
  EXPECT_EQ(copy, tuple);
  EXPECT_EQ(array.tuple_size(), 0);
  EXPECT_TRUE(array.tuple_shapes().empty());
  Shape moved = std::move(copy);
  EXPECT_EQ(moved.tuple_size(), 2);
}

TEST(GraphTest, ClonesKeepRawAttributesAndDropControlEdges) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  Instruction* sum = main->instructions()[2].get();
  sum->mutable_raw_attributes().push_back({"metadata", "{op_name=\"add\"}"});
  main->parameter(1)->AddControlDependencyTo(sum);
  auto clone = sum->CloneWithNewOperands(sum->shape(), sum->operands());
  ASSERT_NE(clone->FindRawAttribute("metadata"), nullptr);
  EXPECT_EQ(*clone->FindRawAttribute("metadata"), "{op_name=\"add\"}");
  EXPECT_TRUE(clone->control_predecessors().empty());
  EXPECT_EQ(sum->control_predecessors().size(), 1u);
  sum->DropAllControlDependencies();
  EXPECT_TRUE(main->parameter(1)->control_successors().empty());
  EXPECT_EQ(sum->raw_attributes().size(), 1u);  // kept beside the edges
}

TEST(GraphTest, CloneIsDeepAndKeepsNamesAndIds) {
  auto module = MakeSmallModule();
  auto clone = module->Clone();
  ASSERT_NE(clone->entry(), nullptr);
  EXPECT_NE(clone->entry(), module->entry());
  EXPECT_EQ(clone->instruction_count(), module->instruction_count());
  EXPECT_EQ(clone->entry()->root()->name(), "product");
  EXPECT_EQ(clone->entry()->root()->unique_id(), module->entry()->root()->unique_id());
  EXPECT_EQ(clone->entry()->root()->operand(1), clone->entry()->parameter(0));
  EXPECT_EQ(module->UniqueInstructionName("sum"), "sum.1");
}

TEST(GraphTest, ClonePartsCopiesInTheGivenPostOrder) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  auto names = [](const Module& m) {
    std::vector<std::string> out;
    for (const auto& inst : m.entry()->instructions()) out.push_back(inst->name());
    return out;
  };
  EXPECT_EQ(names(*module->Clone()), (std::vector<std::string>{"p0", "p1", "sum", "product"}));
  // Another post-order of the same computation: the copy is stored in it.
  Module::ClonePart part;
  part.ordered = main;
  const std::vector<Instruction*> order = {main->parameter(1), main->parameter(0),
                                           main->instructions()[2].get(), main->root()};
  part.order = order;
  auto copy = module->CloneParts(part);
  EXPECT_EQ(names(*copy), (std::vector<std::string>{"p1", "p0", "sum", "product"}));
  EXPECT_EQ(copy->entry()->root()->operand(0)->operand(1), copy->entry()->parameter(1));
  // One that cannot be the computation's (too short) is not used.
  const std::vector<Instruction*> partial = {main->parameter(1)};
  part.order = partial;
  EXPECT_EQ(names(*module->CloneParts(part)),
            (std::vector<std::string>{"p0", "p1", "sum", "product"}));
}

TEST(GraphTest, RemoveInstructionsIfKeepsTheRestInStorageOrder) {
  auto module = MakeSmallModule();
  Computation* main = module->entry();
  Instruction* p0 = main->parameter(0);
  Instruction* n0 = main->AddInstruction(Instruction::Create(Opcode::kNegate, p0->shape(), {p0}));
  Instruction* n1 = main->AddInstruction(Instruction::Create(Opcode::kNegate, p0->shape(), {n0}));
  Instruction* p2 = main->AddInstruction(Instruction::CreateParameter(2, p0->shape(), "p2"));
  Instruction* n2 = main->AddInstruction(Instruction::Create(Opcode::kExp, p0->shape(), {p2}));
  Instruction* kept =
      main->AddInstruction(Instruction::Create(Opcode::kExp, p0->shape(), {main->parameter(1)}));
  kept->set_name("kept");
  // n1 goes with its operand n0, and the parameter p2 with its user n2.
  main->RemoveInstructionsIf([&](const Instruction* inst) {
    return inst == n0 || inst == n1 || inst == p2 || inst == n2;
  });
  std::vector<std::string> names;
  for (const auto& inst : main->instructions()) names.push_back(inst->name());
  EXPECT_EQ(names, (std::vector<std::string>{"p0", "p1", "sum", "product", "kept"}));
  EXPECT_EQ(main->parameter(2), nullptr);
  EXPECT_EQ(p0->user_count(), 2);  // sum and product, not n0
}

// entry calls a; b (unreachable) calls c; a second round must see the marks
// of the first cleared.
TEST(GraphTest, RemoveUnreachableComputationsKeepsWhatTheEntryReaches) {
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModule(R"(
HloModule m

c {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}

b {
  y = f32[] parameter(0)
  ROOT r = f32[] call(y), to_apply=c
}

a {
  z = f32[] parameter(0)
  ROOT e = f32[] exponential(z)
}

ENTRY main {
  p = f32[] parameter(0)
  ROOT q = f32[] call(p), to_apply=a
}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Module& module = **parsed;
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& comp : module.computations()) out.push_back(comp->name());
    return out;
  };
  module.RemoveUnreachableComputations();
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "main"}));
  module.RemoveUnreachableComputations();
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "main"}));
  // The call goes: `a` is unreachable now.
  Computation* main = module.entry();
  Instruction* p = main->parameter(0);
  Instruction* neg = main->AddInstruction(Instruction::Create(Opcode::kNegate, p->shape(), {p}));
  Instruction* call = main->root();
  main->set_root(neg);
  ASSERT_TRUE(main->RemoveInstruction(call).ok());
  module.RemoveUnreachableComputations();
  EXPECT_EQ(names(), (std::vector<std::string>{"main"}));
}

TEST(GraphTest, NamedCloneIsTheCloneUnderAnotherName) {
  Shape f32 = Shape::Array(PrimitiveType::kF32, {4, 8, 16, 2, 3});
  auto p = Instruction::CreateParameter(0, Shape::Array(PrimitiveType::kF32, {8, 2}), "p");
  auto b = Instruction::Create(Opcode::kBroadcast, f32, {p.get()});
  b->set_name("broadcast_in_dim.1234567");
  // Past the inline capacity of the dimension list, then back under it.
  b->mutable_dimensions() = {1, 3, 0, 2, 4};
  b->mutable_dimensions().assign({1, 3});
  b->mutable_raw_attributes().push_back({"frontend_attributes", "{x=\"y\"}"});
  auto named = b->CloneWithNewOperands(b->shape(), {p.get()}, "broadcast_in_dim.7");
  auto plain = b->CloneWithNewOperands(b->shape(), {p.get()});
  EXPECT_EQ(named->name(), "broadcast_in_dim.7");
  EXPECT_EQ(plain->name(), "broadcast_in_dim.1234567");
  EXPECT_EQ(b->name(), "broadcast_in_dim.1234567");
  for (const Instruction* copy : {named.get(), plain.get()}) {
    EXPECT_EQ(copy->opcode(), Opcode::kBroadcast);
    EXPECT_EQ(copy->shape(), f32);
    EXPECT_EQ(std::vector<int64_t>(copy->dimensions().begin(), copy->dimensions().end()),
              (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(copy->raw_attributes(), b->raw_attributes());
    ASSERT_EQ(copy->operand_count(), 1);
    EXPECT_EQ(copy->operand(0), p.get());
  }
  EXPECT_EQ(p->user_count(), 3);
}

TEST(GraphTest, RepeatedOperandsMakeOneUseEach) {
  const Shape f32 = Shape::Array(PrimitiveType::kF32, {2});
  auto x = Instruction::CreateParameter(0, f32, "x");
  auto y = Instruction::CreateParameter(1, f32, "y");
  auto square = Instruction::Create(Opcode::kMultiply, f32, {x.get(), x.get()});
  auto tuple = Instruction::Create(Opcode::kTuple, Shape::Tuple({f32, f32, f32, f32, f32}),
                                   {x.get(), y.get(), x.get(), y.get(), x.get()});
  auto copy = tuple->CloneWithNewOperands(Shape::Tuple({f32, f32, f32}),
                                          {y.get(), y.get(), x.get()}, "tuple.2");
  using Users = std::vector<const Instruction*>;
  auto users = [](const Instruction& inst) {
    return Users(inst.users().begin(), inst.users().end());
  };
  // Every operand kept, in order; each user listed once, in the order it
  // started using the operand.
  EXPECT_EQ(square->operand_count(), 2);
  EXPECT_EQ(square->operand(1), x.get());
  ASSERT_EQ(tuple->operand_count(), 5);
  EXPECT_EQ(tuple->operand(3), y.get());
  ASSERT_EQ(copy->operand_count(), 3);
  EXPECT_EQ(copy->operand(2), x.get());
  EXPECT_EQ(users(*x), (Users{square.get(), tuple.get(), copy.get()}));
  EXPECT_EQ(users(*y), (Users{tuple.get(), copy.get()}));
  // Dropping the repeats drops the one use.
  copy->DetachOperands();
  EXPECT_EQ(users(*y), (Users{tuple.get()}));
}

// The naming rule NameRegistry must keep, stated the plain way: a set of
// whole names, and per stem a counter probing stem.1, stem.2, ... in turn.
class ReferenceNames {
 public:
  // Reserves `name`; false if it was in use.
  bool Insert(const std::string& name) { return names_.insert(name).second; }
  std::string NextFree(const std::string& stem) {
    int64_t& counter = counters_[stem];
    while (true) {
      std::string candidate = absl::StrCat(stem, ".", ++counter);
      if (names_.insert(candidate).second) return candidate;
    }
  }

 private:
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_map<std::string, int64_t> counters_;
};

// A name as modules come with them: an odd one (empty or zero-padded
// suffixes, huge numbers, dotted stems), `stem.N`, or the bare stem.
std::string RandomName(std::mt19937_64& rng, const std::string& stem) {
  static const std::vector<std::string> odd = {
      "add", "add.", "add.0", "add.00", "add.007", "add.3.1", "fusion.123456789",
      "fusion.99999999", "a.b", ".5", "x.7", "x.7.0", "add.64", "add.63", "add.65"};
  switch (rng() % 3) {
    case 0: return odd[rng() % odd.size()];
    case 1: return absl::StrCat(stem, ".", rng() % 200);
    default: return stem;
  }
}

TEST(NameRegistryTest, HandsOutTheNamesOfTheReferenceRule) {
  const std::vector<std::string> stems = {"add", "fusion", "a.b", "x.7", "", "p"};
  std::mt19937_64 rng(5);
  for (int round = 0; round < 20; ++round) {
    NameRegistry registry;
    ReferenceNames reference;
    for (int i = 0; i < 400; ++i) {
      const std::string& stem = stems[rng() % stems.size()];
      if (rng() % 4 == 0) {
        const std::string expected = reference.NextFree(stem);
        ASSERT_EQ(registry.NextFree(stem), expected) << "round " << round << " step " << i;
        continue;
      }
      const std::string name = RandomName(rng, stem);
      const bool was_free = reference.Insert(name);
      ASSERT_EQ(registry.Contains(name), !was_free) << name;
      ASSERT_EQ(registry.Insert(name), was_free) << name;
      ASSERT_TRUE(registry.Contains(name)) << name;
    }
  }
}

// Unique(name) is Insert(name) ? name : NextFree(NameStem(name)), in one
// lookup: both paths hand out the same names from the same state.
// A cleared registry answers as a new one (a module clears its registry each
// env step rather than making another): one registry, cleared between rounds
// of names, against a fresh reference each round.
TEST(NameRegistryTest, ClearedRegistryIsANewOne) {
  const std::vector<std::string> stems = {"add", "fusion", "a.b", "x.7", "", "p"};
  std::mt19937_64 rng(11);
  NameRegistry registry;
  for (int round = 0; round < 20; ++round) {
    registry.Clear();
    ReferenceNames reference;
    for (int i = 0; i < 400; ++i) {
      const std::string& stem = stems[rng() % stems.size()];
      if (rng() % 4 == 0) {
        ASSERT_EQ(registry.NextFree(stem), reference.NextFree(stem))
            << "round " << round << " step " << i;
        continue;
      }
      const std::string name = RandomName(rng, stem);
      const bool was_free = reference.Insert(name);
      ASSERT_EQ(registry.Contains(name), !was_free) << "round " << round << ": " << name;
      const std::string expected =
          was_free ? name : reference.NextFree(std::string(NameStem(name)));
      ASSERT_EQ(registry.Unique(name), expected) << "round " << round << ": " << name;
    }
  }
}

TEST(NameRegistryTest, UniqueIsInsertOrTheNextFreeOfTheStem) {
  const std::vector<std::string> stems = {"add", "fusion", "a.b", "x.7", "p"};
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    NameRegistry unique;
    NameRegistry reference;
    for (int i = 0; i < 400; ++i) {
      const std::string name = RandomName(rng, stems[rng() % stems.size()]);
      const std::string expected =
          reference.Insert(name) ? name : reference.NextFree(NameStem(name));
      ASSERT_EQ(unique.Unique(name), expected) << "round " << round << " step " << i;
    }
  }
}

// Unique remembers recent names by where their text lives (a dry pass asks
// for the same originals' names again and again); the answer must still
// follow the text, when the same place later holds another name.
TEST(NameRegistryTest, UniqueFollowsTheTextNotWhereItLives) {
  NameRegistry registry;
  std::string name = "add.1";
  EXPECT_EQ(registry.Unique(name), "add.1");
  EXPECT_EQ(registry.Unique(name), "add.2");  // taken: the next free add.N
  name.replace(0, 3, "mul");                  // "mul.1" in the same place
  EXPECT_EQ(registry.Unique(name), "mul.1");
  EXPECT_EQ(registry.Unique(name), "mul.2");
  name = "add.007";  // kept whole, not as add.7
  EXPECT_EQ(registry.Unique(name), "add.007");
  EXPECT_EQ(registry.Unique(name), "add.3");
  name = "add";
  EXPECT_EQ(registry.Unique(name), "add");
  EXPECT_EQ(registry.Unique(name), "add.4");
  EXPECT_TRUE(registry.Contains("mul.2"));
  EXPECT_FALSE(registry.Contains("mul.3"));
}

// Stems are cached by a hash of their length and first and last eight
// bytes, so stems differing only in the middle share a cache slot; each must
// still keep its own taken numbers and counter.
TEST(NameRegistryTest, StemsSharingACacheSlotKeepTheirOwnNames) {
  std::vector<std::string> stems;
  for (char c = 'a'; c <= 'h'; ++c) stems.push_back(std::string("fused_c_") + c + "_multiply");
  std::mt19937_64 rng(17);
  NameRegistry registry;
  ReferenceNames reference;
  for (int i = 0; i < 2000; ++i) {
    const std::string& stem = stems[rng() % stems.size()];
    if (rng() % 3 == 0) {
      ASSERT_EQ(registry.NextFree(stem), reference.NextFree(stem)) << "step " << i;
      continue;
    }
    const std::string name = absl::StrCat(stem, ".", rng() % 200);
    const bool was_free = reference.Insert(name);
    ASSERT_EQ(registry.Insert(name), was_free) << name;
  }
}

}  // namespace
}  // namespace hlogym

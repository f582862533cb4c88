// Horizontal fusion ("horizontal-fusion"): independent same-shape kernels
// feeding one consumer become one loop fusion with a tuple root.
#include "absl/strings/str_cat.h"
#include "core/passes/horizontal_fusion.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "tests/core/fusion_test_util.h"

namespace hlogym {
namespace {

using fusion_test::ApplyToFixedPoint;
using fusion_test::CheckAgainst;
using fusion_test::CountFusedOpcode;
using fusion_test::Dry;
using fusion_test::Fusions;
using fusion_test::ParseWithReducers;
using fusion_test::RandomEpisode;

// Three independent f32[32] updates, one f32[16] update, and one f32[32]
// value that depends on another (d reads a).
constexpr std::string_view kUpdates = R"(
ENTRY main {
  p0 = f32[32] parameter(0)
  p1 = f32[32] parameter(1)
  p2 = f32[32] parameter(2)
  p3 = f32[16] parameter(3)
  a = f32[32] negate(p0)
  b = f32[32] multiply(p1, p1)
  c = f32[32] add(p2, p0)
  s = f32[16] abs(p3)
  d = f32[32] exponential(a)
  ROOT t = (f32[32], f32[32], f32[32], f32[16], f32[32]) tuple(a, b, c, s, d)
}
)";

TEST(HorizontalFusionTest, IndependentSameShapeKernelsMerge) {
  auto module = ParseWithReducers(kUpdates);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("horizontal-fusion", *module);
  std::vector<const Instruction*> fusions = Fusions(*module);
  ASSERT_EQ(fusions.size(), 1u);
  const Instruction* h = fusions[0];
  EXPECT_EQ(h->fusion_kind(), FusionKind::kLoop);
  // a, b, c merge; d depends on a (a second group would need another
  // member), and s has another shape.
  ASSERT_TRUE(h->shape().IsTuple());
  EXPECT_EQ(h->shape().tuple_size(), 3);
  EXPECT_EQ(CountFusedOpcode(*h, Opcode::kNegate), 1);
  EXPECT_EQ(CountFusedOpcode(*h, Opcode::kMultiply), 1);
  EXPECT_EQ(CountFusedOpcode(*h, Opcode::kAdd), 1);
  EXPECT_EQ(CountFusedOpcode(*h, Opcode::kExp), 0);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
}

TEST(HorizontalFusionTest, XlaSplitsGroupsAtTheOperandBudget) {
  // 60 independent adds of two fresh parameters each: 120 operands plus 60
  // outputs do not fit XLA's 96, so xla mode makes several fusions; general
  // mode (256 buffers) makes fewer.
  std::string text = "ENTRY main {\n";
  std::string outputs, shapes;
  for (int i = 0; i < 60; ++i) {
    absl::StrAppend(&text, "  x", i, " = f32[4] parameter(", 2 * i, ")\n");
    absl::StrAppend(&text, "  y", i, " = f32[4] parameter(", 2 * i + 1, ")\n");
    absl::StrAppend(&text, "  s", i, " = f32[4] add(x", i, ", y", i, ")\n");
    absl::StrAppend(&outputs, i ? ", " : "", "s", i);
    absl::StrAppend(&shapes, i ? ", " : "", "f32[4]");
  }
  absl::StrAppend(&text, "  ROOT t = (", shapes, ") tuple(", outputs, ")\n}\n");
  auto xla = ParseWithReducers(text);
  ASSERT_NE(xla, nullptr);
  auto original = xla->Clone();
  ApplyToFixedPoint("horizontal-fusion", *xla);
  std::vector<const Instruction*> fusions = Fusions(*xla);
  EXPECT_GE(fusions.size(), 2u);
  for (const Instruction* f : fusions) {
    EXPECT_LE(f->operand_count() + f->shape().tuple_size(), kMaxFusionOperands);
  }
  EXPECT_EQ(CheckAgainst(*original, *xla), "");

  auto general = ParseWithReducers(text);
  ApplyToFixedPoint("horizontal-fusion(mode=general)", *general);
  EXPECT_EQ(Fusions(*general).size(), 1u);
  EXPECT_EQ(CheckAgainst(*original, *general), "");
}

TEST(HorizontalFusionTest, DryModeOffersTheGroupAndEveryMixIsCorrect) {
  auto base = ParseWithReducers(kUpdates);
  ASSERT_NE(base, nullptr);
  Prune(*base);
  auto original = base->Clone();
  const std::string before = PrintModule(*base);
  auto module = base->Clone();
  // a, b, c each have one use by the root tuple (a also by d): 4 uses.
  const int64_t offered = Dry("horizontal-fusion", *module);
  EXPECT_EQ(offered, 4);
  std::vector<int64_t> zeros(offered, 0);
  ASSERT_TRUE(ApplyChoices(*module, zeros).ok());
  EXPECT_EQ(PrintModule(*module), before);
  for (int64_t code = 0; code < (1 << offered); ++code) {
    auto copy = base->Clone();
    ASSERT_EQ(Dry("horizontal-fusion", *copy), offered);
    std::vector<int64_t> choices;
    for (int64_t i = 0; i < offered; ++i) choices.push_back((code >> i) & 1);
    ASSERT_TRUE(ApplyChoices(*copy, choices).ok());
    ASSERT_EQ(CheckAgainst(*original, *copy), "") << "combination " << code;
  }
}

TEST(HorizontalFusionTest, FusionsAndElementwiseOpsMixAfterProducerConsumerFusion) {
  auto module = ParseWithReducers(kUpdates);
  ASSERT_NE(module, nullptr);
  auto original = module->Clone();
  ApplyToFixedPoint("fusion", *module);
  ApplyToFixedPoint("horizontal-fusion", *module);
  EXPECT_EQ(CheckAgainst(*original, *module), "");
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto copy = ParseWithReducers(kUpdates);
    ASSERT_TRUE(RandomEpisode("horizontal-fusion(mode=general)", *copy, seed).ok());
    EXPECT_EQ(CheckAgainst(*original, *copy), "") << "seed " << seed;
  }
}

}  // namespace
}  // namespace hlogym

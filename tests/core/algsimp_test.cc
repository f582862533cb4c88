// Tests of the algebraic simplifier: one case (or more) per rule, each run in
// apply mode to a fixed point and in dry mode choosing the first candidate,
// checked structurally (the root expression) and against the reference
// interpreter, on the formula inputs and on inputs full of NaN, infinities,
// signed zeros and integer extremes; negative cases for rewrites that would
// be wrong (floats with NaN or infinity, lossy conversions, ...); the corpus
// module full of redundancy.
#include <cmath>
#include <iterator>
#include <ostream>
#include <set>

#include "core/eval/interpreter.h"
#include "core/passes/algsimp.h"
#include "core/rewrite/prune.h"
#include "core/text/printer.h"
#include "simplification_test_util.h"

namespace hlogym {
namespace {

using simplification_test::CheckEquivalent;
using simplification_test::CountOpcode;
using simplification_test::DryEpisode;
using simplification_test::EntryModule;
using simplification_test::Parse;
using simplification_test::RootExpr;
using simplification_test::RunDry;
using simplification_test::RunToFixedPoint;

struct RuleCase {
  std::string rule;      // the rule this case exercises
  std::string body;      // the entry computation's instructions
  std::string expected;  // the root expression after simplification
  std::string extra = "";  // computations before the entry (reducers)
};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.rule << ": " << c.expected; }

constexpr char kAddReducer[] = R"(add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
})";

std::vector<RuleCase> Cases() {
  return {
      // ---- arithmetic ----
      {"add-zero", R"(p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] add(p0, b))", "p0"},
      {"add-zero", R"(p0 = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT r = s32[4] add(z, p0))", "p0"},
      {"add-negate", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  n = f32[4] negate(p1)
  ROOT r = f32[4] add(p0, n))", "subtract(p0,p1)"},
      {"add-negate", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  n = f32[4] negate(p0)
  ROOT r = f32[4] add(n, p1))", "subtract(p1,p0)"},
      {"subtract-zero", R"(p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] subtract(p0, b))", "p0"},
      {"subtract-self-int", R"(p0 = s32[4] parameter(0)
  ROOT r = s32[4] subtract(p0, p0))", "broadcast(0)"},
      {"subtract-negate", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  n = f32[4] negate(p1)
  ROOT r = f32[4] subtract(p0, n))", "add(p0,p1)"},
      {"multiply-one", R"(p0 = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] multiply(b, p0))", "p0"},
      {"multiply-zero-int", R"(p0 = s32[4] parameter(0)
  z = s32[] constant(0)
  b = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] multiply(p0, b))", "broadcast(0)"},
      {"multiply-minus-one", R"(p0 = f32[4] parameter(0)
  m = f32[] constant(-1)
  b = f32[4] broadcast(m), dimensions={}
  ROOT r = f32[4] multiply(p0, b))", "negate(p0)"},
      {"divide-one", R"(p0 = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] divide(p0, b))", "p0"},
      {"divide-power-of-two", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(4)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] divide(p0, b))", "multiply(p0,broadcast(0.25))"},
      {"divide-power-of-two", R"(p0 = f16[4] parameter(0)
  c = f16[] constant(-0.5)
  b = f16[4] broadcast(c), dimensions={}
  ROOT r = f16[4] divide(p0, b))", "multiply(p0,broadcast(-2))"},
      {"divide-unsigned-power-of-two", R"(p0 = u32[4] parameter(0)
  c = u32[] constant(8)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] divide(p0, b))", "shift-right-logical(p0,broadcast(3))"},
      {"remainder-unsigned-power-of-two", R"(p0 = u8[4] parameter(0)
  c = u8[] constant(8)
  b = u8[4] broadcast(c), dimensions={}
  ROOT r = u8[4] remainder(p0, b))", "and(p0,broadcast(7))"},
      {"power-zero", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(0)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p0, b))", "broadcast(1)"},
      {"power-one", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p0, b))", "p0"},
      {"power-two", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p0, b))", "multiply(p0,p0)"},
      {"power-two", R"(p0 = s32[4] parameter(0)
  c = s32[] constant(2)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] power(p0, b))", "multiply(p0,p0)"},
      {"power-minus-one", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(-1)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] power(p0, b))", "divide(broadcast(1),p0)"},
      {"negate-negate", R"(p0 = f32[4] parameter(0)
  n = f32[4] negate(p0)
  ROOT r = f32[4] negate(n))", "p0"},
      {"abs-abs", R"(p0 = f32[4] parameter(0)
  a = f32[4] abs(p0)
  ROOT r = f32[4] abs(a))", "abs(p0)"},
      {"abs-negate", R"(p0 = s32[4] parameter(0)
  n = s32[4] negate(p0)
  ROOT r = s32[4] abs(n))", "abs(p0)"},
      {"maximum-self", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] maximum(p0, p0))", "p0"},
      {"minimum-self", R"(p0 = s32[4] parameter(0)
  ROOT r = s32[4] minimum(p0, p0))", "p0"},
      {"maximum-lowest", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(-inf)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] maximum(b, p0))", "p0"},
      {"maximum-lowest", R"(p0 = s8[4] parameter(0)
  c = s8[] constant(-128)
  b = s8[4] broadcast(c), dimensions={}
  ROOT r = s8[4] maximum(p0, b))", "p0"},
      {"minimum-highest", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(inf)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] minimum(p0, b))", "p0"},
      {"minimum-highest", R"(p0 = u16[4] parameter(0)
  c = u16[] constant(65535)
  b = u16[4] broadcast(c), dimensions={}
  ROOT r = u16[4] minimum(p0, b))", "p0"},
      // ---- compare, select, logic ----
      {"not-not", R"(p0 = pred[4] parameter(0)
  n = pred[4] not(p0)
  ROOT r = pred[4] not(n))", "p0"},
      {"not-compare", R"(p0 = s32[4] parameter(0)
  p1 = s32[4] parameter(1)
  c = pred[4] compare(p0, p1), direction=LT
  ROOT r = pred[4] not(c))", "compare.GE(p0,p1)"},
      {"not-compare", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = pred[4] compare(p0, p1), direction=EQ
  ROOT r = pred[4] not(c))", "compare.NE(p0,p1)"},
      {"and-self", R"(p0 = pred[4] parameter(0)
  ROOT r = pred[4] and(p0, p0))", "p0"},
      {"and-constant", R"(p0 = pred[4] parameter(0)
  t = pred[] constant(true)
  b = pred[4] broadcast(t), dimensions={}
  ROOT r = pred[4] and(b, p0))", "p0"},
      {"and-constant", R"(p0 = s32[4] parameter(0)
  c = s32[] constant(0)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] and(p0, b))", "broadcast(0)"},
      {"and-constant", R"(p0 = u8[4] parameter(0)
  c = u8[] constant(255)
  b = u8[4] broadcast(c), dimensions={}
  ROOT r = u8[4] and(p0, b))", "p0"},
      {"or-self", R"(p0 = s32[4] parameter(0)
  ROOT r = s32[4] or(p0, p0))", "p0"},
      {"or-constant", R"(p0 = pred[4] parameter(0)
  f = pred[] constant(false)
  b = pred[4] broadcast(f), dimensions={}
  ROOT r = pred[4] or(p0, b))", "p0"},
      {"or-constant", R"(p0 = s32[4] parameter(0)
  c = s32[] constant(-1)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] or(p0, b))", "broadcast(-1)"},
      {"xor-self", R"(p0 = s32[4] parameter(0)
  ROOT r = s32[4] xor(p0, p0))", "broadcast(0)"},
      {"xor-zero", R"(p0 = s32[4] parameter(0)
  c = s32[] constant(0)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] xor(b, p0))", "p0"},
      {"compare-self-int", R"(p0 = s32[4] parameter(0)
  ROOT r = pred[4] compare(p0, p0), direction=GE)", "broadcast(true)"},
      {"compare-self-int", R"(p0 = u8[4] parameter(0)
  ROOT r = pred[4] compare(p0, p0), direction=NE)", "broadcast(false)"},
      {"select-same", R"(p0 = pred[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT r = f32[4] select(p0, p1, p1))", "p1"},
      {"select-constant", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  t = pred[] constant(true)
  b = pred[4] broadcast(t), dimensions={}
  ROOT r = f32[4] select(b, p0, p1))", "p0"},
      {"select-constant", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  f = pred[4] constant({false, false, false, false})
  ROOT r = f32[4] select(f, p0, p1))", "p1"},
      {"select-not", R"(p0 = pred[4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  n = pred[4] not(p0)
  ROOT r = f32[4] select(n, p1, p2))", "select(p0,p2,p1)"},
      {"select-of-booleans", R"(p0 = pred[4] parameter(0)
  t = pred[4] constant({true, true, true, true})
  f = pred[4] constant({false, false, false, false})
  ROOT r = pred[4] select(p0, t, f))", "p0"},
      {"select-of-booleans", R"(p0 = pred[4] parameter(0)
  t = pred[4] constant({true, true, true, true})
  f = pred[4] constant({false, false, false, false})
  ROOT r = pred[4] select(p0, f, t))", "not(p0)"},
      // ---- conversions and forwarding ----
      {"convert-same-type", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] convert(p0))", "p0"},
      {"convert-of-lossless-convert", R"(p0 = f32[4] parameter(0)
  w = f64[4] convert(p0)
  ROOT r = f32[4] convert(w))", "p0"},
      {"convert-of-lossless-convert", R"(p0 = bf16[4] parameter(0)
  w = f32[4] convert(p0)
  ROOT r = bf16[4] convert(w))", "p0"},
      {"convert-of-lossless-convert", R"(p0 = s8[4] parameter(0)
  w = f32[4] convert(p0)
  ROOT r = s8[4] convert(w))", "p0"},
      {"convert-of-lossless-convert", R"(p0 = f16[4] parameter(0)
  w = f32[4] convert(p0)
  ROOT r = bf16[4] convert(w))", "convert(p0)"},
      {"convert-of-lossless-convert", R"(p0 = s8[4] parameter(0)
  w = s32[4] convert(p0)
  ROOT r = u8[4] convert(w))", "convert(p0)"},
      {"convert-of-lossless-convert", R"(p0 = pred[4] parameter(0)
  w = s32[4] convert(p0)
  ROOT r = f32[4] convert(w))", "convert(p0)"},
      {"bitcast-convert-same-type", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] bitcast-convert(p0))", "p0"},
      {"bitcast-convert-round-trip", R"(p0 = f32[4] parameter(0)
  i = s32[4] bitcast-convert(p0)
  ROOT r = f32[4] bitcast-convert(i))", "p0"},
      {"reduce-precision-no-op", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p0), exponent_bits=8, mantissa_bits=23)", "p0"},
      {"copy", R"(p0 = f32[4,2]{1,0} parameter(0)
  ROOT r = f32[4,2]{1,0} copy(p0))", "p0"},
      {"get-tuple-element-of-tuple", R"(p0 = f32[4] parameter(0)
  p1 = s32[2] parameter(1)
  t = (f32[4], s32[2]) tuple(p0, p1)
  ROOT r = s32[2] get-tuple-element(t), index=1)", "p1"},
      // ---- reshape, transpose, broadcast, reverse, pad ----
      {"identity-reshape", R"(p0 = f32[4,2] parameter(0)
  ROOT r = f32[4,2] reshape(p0))", "p0"},
      {"reshape-reshape", R"(p0 = f32[4,2] parameter(0)
  a = f32[8] reshape(p0)
  ROOT r = f32[2,4] reshape(a))", "reshape(p0)"},
      {"reshape-reshape", R"(p0 = f32[4,2] parameter(0)
  a = f32[8] reshape(p0)
  ROOT r = f32[4,2] reshape(a))", "p0"},
      {"reshape-of-scalar-broadcast", R"(p0 = f32[] parameter(0)
  b = f32[8] broadcast(p0), dimensions={}
  ROOT r = f32[2,4] reshape(b))", "broadcast(p0)"},
      {"identity-transpose", R"(p0 = f32[4,2] parameter(0)
  ROOT r = f32[4,2] transpose(p0), dimensions={0,1})", "p0"},
      {"transpose-transpose", R"(p0 = f32[2,3,4] parameter(0)
  a = f32[3,4,2] transpose(p0), dimensions={1,2,0}
  ROOT r = f32[2,3,4] transpose(a), dimensions={2,0,1})", "p0"},
      {"transpose-transpose", R"(p0 = f32[2,3,4] parameter(0)
  a = f32[3,4,2] transpose(p0), dimensions={1,2,0}
  ROOT r = f32[4,3,2] transpose(a), dimensions={1,0,2})", "transpose{2,1,0}(p0)"},
      {"transpose-of-broadcast", R"(p0 = f32[3] parameter(0)
  b = f32[3,4] broadcast(p0), dimensions={0}
  ROOT r = f32[4,3] transpose(b), dimensions={1,0})", "broadcast{1}(p0)"},
      {"transpose-is-reshape", R"(p0 = f32[1,4] parameter(0)
  ROOT r = f32[4,1] transpose(p0), dimensions={1,0})", "reshape(p0)"},
      {"identity-broadcast", R"(p0 = f32[4,2] parameter(0)
  ROOT r = f32[4,2] broadcast(p0), dimensions={0,1})", "p0"},
      {"broadcast-broadcast", R"(p0 = f32[3] parameter(0)
  a = f32[3,4] broadcast(p0), dimensions={0}
  ROOT r = f32[2,3,4] broadcast(a), dimensions={1,2})", "broadcast{1}(p0)"},
      {"broadcast-of-reshape", R"(p0 = f32[4] parameter(0)
  a = f32[1,4] reshape(p0)
  ROOT r = f32[3,1,4] broadcast(a), dimensions={1,2})", "broadcast{2}(p0)"},
      {"trivial-reverse", R"(p0 = f32[1,4] parameter(0)
  ROOT r = f32[1,4] reverse(p0), dimensions={0})", "p0"},
      {"reverse-reverse", R"(p0 = f32[3,4] parameter(0)
  a = f32[3,4] reverse(p0), dimensions={0,1}
  ROOT r = f32[3,4] reverse(a), dimensions={1,0})", "p0"},
      {"reverse-of-broadcast", R"(p0 = f32[4] parameter(0)
  b = f32[3,4] broadcast(p0), dimensions={1}
  ROOT r = f32[3,4] reverse(b), dimensions={0})", "broadcast{1}(p0)"},
      {"zero-pad", R"(p0 = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4] pad(p0, z), padding=0_0x0_0)", "p0"},
      // ---- slices and concatenation ----
      {"full-slice", R"(p0 = f32[3,4] parameter(0)
  ROOT r = f32[3,4] slice(p0), slice={[0:3], [0:4]})", "p0"},
      {"slice-slice", R"(p0 = f32[10] parameter(0)
  a = f32[4] slice(p0), slice={[2:10:2]}
  ROOT r = f32[2] slice(a), slice={[1:3]})", "slice[4:7:2](p0)"},
      {"slice-of-broadcast", R"(p0 = f32[4] parameter(0)
  b = f32[3,4] broadcast(p0), dimensions={1}
  ROOT r = f32[2,4] slice(b), slice={[1:3], [0:4]})", "broadcast{1}(p0)"},
      {"slice-of-broadcast", R"(p0 = f32[4] parameter(0)
  b = f32[3,4] broadcast(p0), dimensions={1}
  ROOT r = f32[3,2] slice(b), slice={[0:3], [1:3]})", "broadcast{1}(slice[1:3:1](p0))"},
      {"slice-of-concatenate", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[8] concatenate(p0, p1), dimensions={0}
  ROOT r = f32[2] slice(c), slice={[5:7]})", "slice[1:3:1](p1)"},
      {"dynamic-slice-constant", R"(p0 = f32[8] parameter(0)
  i = s32[] constant(3)
  ROOT r = f32[2] dynamic-slice(p0, i), dynamic_slice_sizes={2})", "slice[3:5:1](p0)"},
      {"dynamic-slice-constant", R"(p0 = f32[8] parameter(0)
  i = s32[] constant(100)
  ROOT r = f32[2] dynamic-slice(p0, i), dynamic_slice_sizes={2})", "slice[6:8:1](p0)"},
      {"dynamic-slice-full", R"(p0 = f32[8] parameter(0)
  p1 = s32[] parameter(1)
  ROOT r = f32[8] dynamic-slice(p0, p1), dynamic_slice_sizes={8})", "p0"},
      {"dynamic-update-slice-full", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = s32[] parameter(2)
  ROOT r = f32[4] dynamic-update-slice(p0, p1, p2))", "p1"},
      {"single-concatenate", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] concatenate(p0), dimensions={0})", "p0"},
      {"concatenate-drop-empty", R"(p0 = f32[4,2] parameter(0)
  p1 = f32[0,2] parameter(1)
  p2 = f32[3,2] parameter(2)
  ROOT r = f32[7,2] concatenate(p0, p1, p2), dimensions={0})", "concatenate{0}(p0,p2)"},
      {"concatenate-flatten", R"(p0 = f32[4] parameter(0)
  p1 = f32[2] parameter(1)
  c = f32[6] concatenate(p1, p0), dimensions={0}
  ROOT r = f32[10] concatenate(p0, c), dimensions={0})", "concatenate{0}(p0,p1,p0)"},
      {"concatenate-adjacent-slices", R"(p0 = f32[6,2] parameter(0)
  a = f32[2,2] slice(p0), slice={[1:3], [0:2]}
  b = f32[2,2] slice(p0), slice={[3:5], [0:2]}
  ROOT r = f32[4,2] concatenate(a, b), dimensions={0})", "slice[1:5:1,0:2:1](p0)"},
      {"concatenate-adjacent-slices", R"(p0 = f32[6] parameter(0)
  p1 = f32[3] parameter(1)
  a = f32[2] slice(p0), slice={[0:2]}
  b = f32[4] slice(p0), slice={[2:6]}
  ROOT r = f32[9] concatenate(p1, a, b), dimensions={0})", "concatenate{0}(p1,p0)"},
      // ---- reduce ----
      {"reduce-of-empty", R"(p0 = f32[0,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z), dimensions={0}, to_apply=add_f32)", "broadcast(0)",
       kAddReducer},
      {"reduce-of-degenerate-dims", R"(p0 = f32[1,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z), dimensions={0}, to_apply=add_f32)", "reshape(p0)",
       kAddReducer},
      {"reduce-of-degenerate-dims", R"(p0 = f32[4,1] parameter(0)
  c = f32[] constant(1.5)
  ROOT r = f32[4] reduce(p0, c), dimensions={1}, to_apply=add_f32)",
       "add(broadcast(1.5),reshape(p0))", kAddReducer},
  };
}

class AlgsimpRuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(AlgsimpRuleTest, ApplyModeSimplifiesExactly) {
  const RuleCase& c = GetParam();
  auto original = Parse(EntryModule(c.body, c.extra));
  ASSERT_NE(original, nullptr);
  auto module = original->Clone();
  RunToFixedPoint("algsimp", *module);
  EXPECT_EQ(RootExpr(*module), c.expected) << c.rule;
  EXPECT_EQ(CheckEquivalent(*original, *module), "") << c.rule;
}

TEST_P(AlgsimpRuleTest, DryModeOffersTheSameRewrite) {
  const RuleCase& c = GetParam();
  auto original = Parse(EntryModule(c.body, c.extra));
  ASSERT_NE(original, nullptr);
  auto module = original->Clone();
  ASSERT_GT(RunDry("algsimp", *module), 0) << c.rule << ": nothing offered";
  // Each node offers its first candidate: the rule apply mode would take.
  auto first = original->Clone();
  ASSERT_TRUE(DryEpisode("algsimp", *first, 1).ok());
  Prune(*first);
  EXPECT_EQ(RootExpr(*first), c.expected) << c.rule;
  EXPECT_EQ(CheckEquivalent(*original, *first), "") << c.rule;
}

TEST_P(AlgsimpRuleTest, ChoosingZeroEverywhereRestoresTheModule) {
  const RuleCase& c = GetParam();
  auto module = Parse(EntryModule(c.body, c.extra));
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  ASSERT_TRUE(DryEpisode("algsimp", *module, 0).ok());
  EXPECT_EQ(PrintModule(*module), before) << c.rule;
}

// Inputs full of the values where inexact rewrites show: NaN, infinities,
// signed zeros, subnormals, the integer extremes.
std::vector<Literal> SpecialInputs(const Module& module) {
  static const double kFloats[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1, -1, 0.5,
                                   -2.5, 3, 1e30, -1e-40, 65504, 1e-8, -7};
  std::vector<Literal> inputs;
  for (const Instruction* p : module.entry()->parameters()) {
    const Shape& shape = p->shape();
    Literal literal(shape);
    const PrimitiveType t = shape.element_type();
    const int64_t offset = 3 * p->parameter_number();
    for (int64_t i = 0; i < literal.element_count(); ++i) {
      const int64_t k = i + offset;
      if (IsFloat(t)) {
        literal.SetFromDouble(i, kFloats[k % std::size(kFloats)]);
      } else if (IsInteger(t)) {
        const int w = BitWidth(t);
        const bool is_signed = IsSignedInteger(t);
        const int64_t lowest = is_signed ? static_cast<int64_t>(uint64_t{1} << (w - 1)) : 0;
        const int64_t highest = is_signed ? static_cast<int64_t>((uint64_t{1} << (w - 1)) - 1)
                                          : static_cast<int64_t>(~uint64_t{0} >> (64 - w));
        const int64_t values[] = {0, 1, -1, lowest, highest, 7, -8, 100, 3, lowest + 1};
        literal.SetFromInt64(i, values[k % std::size(values)]);
      } else if (t == PrimitiveType::kPred) {
        literal.SetFromInt64(i, k % 2);
      }
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

// "" when `rewritten` matches `original` on the special inputs (NaN matches
// NaN, -0 matches +0; floats within a few ulps).
std::string CheckSpecialValues(const Module& original, const Module& rewritten) {
  const std::vector<Literal> inputs = SpecialInputs(original);
  auto expected = EvaluateFlat(original, inputs);
  auto actual = EvaluateFlat(rewritten, inputs);
  if (!expected.ok()) return std::string(expected.status().message());
  if (!actual.ok()) return std::string(actual.status().message());
  EquivalenceOptions tight;
  tight.rtol = 1e-6;
  tight.atol = 0;
  tight.narrow_tolerance = 1e-3;
  return CompareLiterals(*expected, *actual, tight).message;
}

TEST_P(AlgsimpRuleTest, ExactOnSpecialValues) {
  const RuleCase& c = GetParam();
  auto original = Parse(EntryModule(c.body, c.extra));
  ASSERT_NE(original, nullptr);
  auto applied = original->Clone();
  RunToFixedPoint("algsimp", *applied);
  EXPECT_EQ(CheckSpecialValues(*original, *applied), "") << c.rule;
  auto dry = original->Clone();
  std::mt19937_64 rng(7);
  ASSERT_TRUE(DryEpisode("algsimp", *dry, 0, &rng).ok());
  EXPECT_EQ(CheckSpecialValues(*original, *dry), "") << c.rule;
}

std::string CaseName(const ::testing::TestParamInfo<RuleCase>& info) {
  std::string name = info.param.rule;
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Rules, AlgsimpRuleTest, ::testing::ValuesIn(Cases()), CaseName);

TEST(AlgsimpTest, EveryRuleHasACaseAndAUniqueName) {
  std::set<std::string> covered;
  for (const RuleCase& c : Cases()) covered.insert(c.rule);
  std::set<std::string> names;
  for (std::string_view name : AlgsimpRuleNames()) {
    EXPECT_TRUE(names.insert(std::string(name)).second) << "duplicate rule name " << name;
    EXPECT_TRUE(covered.contains(std::string(name))) << "no test case for rule " << name;
  }
  for (const std::string& rule : covered) {
    EXPECT_TRUE(names.contains(rule)) << "test case for unknown rule " << rule;
  }
  EXPECT_GE(names.size(), 30u);
}

// ---- rewrites that must not happen ----

struct NegativeCase {
  std::string what;
  std::string body;
};

std::vector<NegativeCase> NegativeCases() {
  return {
      {"float x - x (NaN, inf)", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] subtract(p0, p0))"},
      {"float x * 0 (NaN, inf)", R"(p0 = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] multiply(p0, b))"},
      {"float compare(x, x) (NaN)", R"(p0 = f32[4] parameter(0)
  ROOT r = pred[4] compare(p0, p0), direction=EQ)"},
      {"float not(x < y) (NaN)", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = pred[4] compare(p0, p1), direction=LT
  ROOT r = pred[4] not(c))"},
      {"exp(log(x)) (rounding, x <= 0)", R"(p0 = f32[4] parameter(0)
  l = f32[4] log(p0)
  ROOT r = f32[4] exponential(l))"},
      {"float x / 3 (inexact reciprocal)", R"(p0 = f32[4] parameter(0)
  c = f32[] constant(3)
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] divide(p0, b))"},
      {"signed x / 4 (rounds toward zero)", R"(p0 = s32[4] parameter(0)
  c = s32[] constant(4)
  b = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] divide(p0, b))"},
      {"unsigned abs(-x)", R"(p0 = u32[4] parameter(0)
  n = u32[4] negate(p0)
  ROOT r = u32[4] abs(n))"},
      {"s32 -> f32 -> s32 (lossy)", R"(p0 = s32[4] parameter(0)
  w = f32[4] convert(p0)
  ROOT r = s32[4] convert(w))"},
      {"s8 -> f32 -> u8 (saturates vs wraps)", R"(p0 = s8[4] parameter(0)
  w = f32[4] convert(p0)
  ROOT r = u8[4] convert(w))"},
      {"f32 -> f16 -> f32 (narrowing)", R"(p0 = f32[4] parameter(0)
  w = f16[4] convert(p0)
  ROOT r = f32[4] convert(w))"},
      {"reduce-precision that rounds", R"(p0 = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p0), exponent_bits=8, mantissa_bits=7)"},
      {"copy changing the layout", R"(p0 = f32[4,2]{1,0} parameter(0)
  ROOT r = f32[4,2]{0,1} copy(p0))"},
      {"transpose of broadcast that reorders the operand", R"(p0 = f32[3,4] parameter(0)
  b = f32[3,4,2] broadcast(p0), dimensions={0,1}
  ROOT r = f32[4,3,2] transpose(b), dimensions={1,0,2})"},
      {"dynamic-slice at a parameter index", R"(p0 = f32[8] parameter(0)
  p1 = s32[] parameter(1)
  ROOT r = f32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2})"},
      {"reverse of a broadcast operand dimension", R"(p0 = f32[4] parameter(0)
  b = f32[3,4] broadcast(p0), dimensions={1}
  ROOT r = f32[3,4] reverse(b), dimensions={1})"},
      {"slice across two concatenate operands", R"(p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[8] concatenate(p0, p1), dimensions={0}
  ROOT r = f32[2] slice(c), slice={[3:5]})"},
      {"concatenate of non-adjacent slices", R"(p0 = f32[6] parameter(0)
  a = f32[2] slice(p0), slice={[0:2]}
  b = f32[2] slice(p0), slice={[3:5]}
  ROOT r = f32[4] concatenate(a, b), dimensions={0})"},
      {"reduce over a dimension larger than 1", R"(p0 = f32[2,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z), dimensions={0}, to_apply=add_f32)"},
  };
}

void PrintTo(const NegativeCase& c, std::ostream* os) { *os << c.what; }

class AlgsimpNegativeTest : public ::testing::TestWithParam<NegativeCase> {};

TEST_P(AlgsimpNegativeTest, LeftAloneInBothModes) {
  const NegativeCase& c = GetParam();
  auto module = Parse(EntryModule(c.body, kAddReducer));
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  AlgsimpPass pass;
  EXPECT_FALSE(RunPass(pass, *module).value()) << c.what;
  EXPECT_EQ(PrintModule(*module), before) << c.what;
  EXPECT_EQ(RunDryPass(pass, *module).value(), 0) << c.what;
}

INSTANTIATE_TEST_SUITE_P(Rules, AlgsimpNegativeTest, ::testing::ValuesIn(NegativeCases()),
                         [](const auto& info) { return "case_" + std::to_string(info.index); });

TEST(AlgsimpTest, InstructionsWithControlDependenciesAreLeftAlone) {
  auto module = Parse(EntryModule(R"(p0 = f32[4] parameter(0)
  n = f32[4] negate(p0)
  e = f32[4] exponential(p0)
  ROOT nn = f32[4] negate(n), control-predecessors={e})"));
  ASSERT_NE(module, nullptr);
  AlgsimpPass pass;
  EXPECT_FALSE(RunPass(pass, *module).value());
  EXPECT_EQ(RootExpr(*module), "negate(negate(p0))");
}

TEST(AlgsimpTest, FusedComputationsAreLeftAlone) {
  auto module = Parse(R"(HloModule m

fused {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT nn = f32[4] negate(n)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  ROOT f = f32[4] fusion(p0), kind=kLoop, calls=fused
})");
  ASSERT_NE(module, nullptr);
  AlgsimpPass pass;
  EXPECT_FALSE(RunPass(pass, *module).value());
  EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 2);
}

TEST(AlgsimpTest, DryModeOffersOneNodePerRewrittenUse) {
  // The root matches reshape-reshape, the inner reshape
  // reshape-of-scalar-broadcast: both are offered against the unchanged graph.
  auto module = Parse(EntryModule(R"(p0 = f32[] parameter(0)
  b = f32[8] broadcast(p0), dimensions={}
  a = f32[2,4] reshape(b)
  ROOT r = f32[4,2] reshape(a))"));
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(RunDry("algsimp", *module), 2);
  std::vector<AlternativeNode> alts = FindAlternatives(*module);
  ASSERT_EQ(alts.size(), 2u);
  // The root's node: original plus reshape-reshape's reshape(b).
  const Instruction* root_alt = module->entry()->root();
  ASSERT_EQ(root_alt->opcode(), Opcode::kAlternatives);
  ASSERT_EQ(root_alt->operand_count(), 2);
  EXPECT_EQ(simplification_test::Expr(root_alt->operand(1)), "reshape(broadcast(p0))");
  // The inner reshape's use: original plus the new scalar broadcast.
  const Instruction* inner_alt = root_alt->operand(0)->operand(0);
  ASSERT_EQ(inner_alt->opcode(), Opcode::kAlternatives);
  EXPECT_EQ(simplification_test::Expr(inner_alt->operand(1)), "broadcast(p0)");
}

TEST(AlgsimpTest, DryModeOffersSeveralCandidatesForOneInstruction) {
  // `a` is an identity reshape of a scalar broadcast: two rules match it.
  auto module = Parse(EntryModule(R"(p0 = f32[] parameter(0)
  b = f32[8] broadcast(p0), dimensions={}
  a = f32[8] reshape(b)
  ROOT r = f32[2,4] reshape(a))"));
  ASSERT_NE(module, nullptr);
  ASSERT_GT(RunDry("algsimp", *module), 0);
  const Instruction* root_alt = module->entry()->root();
  ASSERT_EQ(root_alt->opcode(), Opcode::kAlternatives);
  // reshape-reshape gives reshape(b); reshape-of-scalar-broadcast would give
  // broadcast(p0) but a is a reshape, not a broadcast; identity-reshape of
  // `a` is offered at `a`'s use.
  std::vector<std::string> offered;
  for (int64_t k = 1; k < root_alt->operand_count(); ++k) {
    offered.push_back(simplification_test::Expr(root_alt->operand(k)));
  }
  EXPECT_EQ(offered, std::vector<std::string>({"reshape(broadcast(p0))"}));
  const Instruction* a_alt = root_alt->operand(0)->operand(0);
  ASSERT_EQ(a_alt->opcode(), Opcode::kAlternatives);
  std::vector<std::string> offered_for_a;
  for (int64_t k = 1; k < a_alt->operand_count(); ++k) {
    offered_for_a.push_back(simplification_test::Expr(a_alt->operand(k)));
  }
  // identity-reshape (b itself) and reshape-of-scalar-broadcast (new broadcast).
  EXPECT_EQ(offered_for_a, std::vector<std::string>({"broadcast(p0)", "broadcast(p0)"}));
  EXPECT_NE(a_alt->operand(1), a_alt->operand(2));
}

// The corpus module written to be simplified: -(-y) goes; x - x (floats) and
// exp(log(...)) stay, since neither is exact.
TEST(AlgsimpTest, AlgebraicRedundancyCorpusModule) {
  for (const char* path : {"/data/corpus/small/hlo/algebraic_redundancy_2048x2048_small.hlo",
                           "/data/corpus/hlo/algebraic_redundancy_2048x2048.hlo"}) {
    auto original = Parse(simplification_test::ReadSource(path));
    ASSERT_NE(original, nullptr);
    auto module = original->Clone();
    const int64_t before = module->instruction_count();
    RunToFixedPoint("algsimp", *module);
    EXPECT_EQ(CountOpcode(*original, Opcode::kNegate), 2) << path;
    EXPECT_EQ(CountOpcode(*module, Opcode::kNegate), 0) << path;
    EXPECT_EQ(module->instruction_count(), before - 2) << path;
    EXPECT_EQ(CountOpcode(*module, Opcode::kSubtract), 2) << path;  // x - x kept (floats)
    EXPECT_EQ(RootExpr(*module),
              "subtract(multiply(p0,exponential(log(add(abs(p1),broadcast(1))))),subtract(p0,p0))");
    if (std::string(path).find("small") != std::string::npos) {
      EXPECT_EQ(CheckEquivalent(*original, *module), "");
    }
  }
}

}  // namespace
}  // namespace hlogym

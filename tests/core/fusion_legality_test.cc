// Unit tests of the fusion rules: what the emitter accepts
// (CheckEmittableFusion), XLA's and general legality for producer-consumer,
// sibling and producer-consumer multi-output fusion (each rule accepted and
// rejected), XLA's IsExpensive, and the reachability map.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/passes/fusion_emittable.h"
#include "core/passes/fusion_legality.h"
#include "core/passes/fusion_reachability.h"
#include "tests/core/fusion_test_util.h"

namespace hlogym {
namespace {

size_t UniqueOperandCount(const Instruction& inst) {
  std::vector<const Instruction*> seen;
  for (const Instruction* operand : inst.operands()) {
    if (std::find(seen.begin(), seen.end(), operand) == seen.end()) seen.push_back(operand);
  }
  return seen.size();
}

using fusion_test::ParseWithReducers;

Instruction* Find(const Module& module, std::string_view name) {
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->name() == name) return inst.get();
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// ---- CheckEmittableFusion ---------------------------------------------------

// Wraps `body` (a fused computation named fc) in a module whose entry calls
// it with parameters of `param_shapes`; returns the fused computation's
// emittability.
absl::StatusOr<FusionKind> Emittable(const std::string& body,
                                     const std::vector<std::string>& param_shapes,
                                     const std::string& result_shape,
                                     std::unique_ptr<Module>* keep = nullptr) {
  std::string entry = "ENTRY main {\n";
  std::string operands;
  for (size_t i = 0; i < param_shapes.size(); ++i) {
    absl::StrAppend(&entry, "  p", i, " = ", param_shapes[i], " parameter(", i, ")\n");
    absl::StrAppend(&operands, i ? ", " : "", "p", i);
  }
  absl::StrAppend(&entry, "  ROOT f = ", result_shape, " fusion(", operands,
                  "), kind=kLoop, calls=fc\n}\n");
  std::unique_ptr<Module> module = ParseWithReducers(body + entry);
  if (module == nullptr) return absl::InternalError("parse");
  absl::StatusOr<FusionKind> kind =
      CheckEmittableFusion(*module->entry()->root()->fused_computation());
  if (keep != nullptr) *keep = std::move(module);
  return kind;
}

TEST(FusionEmittableTest, ElementwiseChainIsALoopFusion) {
  auto kind = Emittable(R"(
fc {
  a = f32[8,4] parameter(0)
  b = f32[4] parameter(1)
  bb = f32[8,4] broadcast(b), dimensions={1}
  c = f32[] constant(2)
  cb = f32[8,4] broadcast(c), dimensions={}
  m = f32[8,4] multiply(a, bb)
  ROOT e = f32[8,4] exponential(m)
}
)", {"f32[8,4]", "f32[4]"}, "f32[8,4]");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(*kind, FusionKind::kLoop);
}

TEST(FusionEmittableTest, ReduceWithPrologueAndConvertEpilogueIsAnInputFusion) {
  auto kind = Emittable(R"(
fc {
  a = f32[8,4] parameter(0)
  e = f32[8,4] exponential(a)
  z = f32[] constant(0)
  r = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32
  ROOT c = f16[8] convert(r)
}
)", {"f32[8,4]"}, "f16[8]");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(*kind, FusionKind::kInput);
}

TEST(FusionEmittableTest, MultiOutputReductionWithSideOutput) {
  auto kind = Emittable(R"(
fc {
  a = f32[8,4] parameter(0)
  e = f32[8,4] exponential(a)
  z = f32[] constant(0)
  r1 = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32
  r2 = f32[8] reduce(a, z), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8], f32[8], f32[8,4]) tuple(r1, r2, e)
}
)", {"f32[8,4]"}, "(f32[8], f32[8], f32[8,4])");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(*kind, FusionKind::kInput);
}

TEST(FusionEmittableTest, VariadicReduceWindowReadByElementIsALoopFusion) {
  // As select-and-scatter-to-scatter builds it: each window's value and
  // position, the positions an iota read where the window reads them.
  auto kind = Emittable(R"(
pick {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  keep = pred[] compare(v0, v1), direction=GE
  v = f32[] select(keep, v0, v1)
  i = s32[] select(keep, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fc {
  a = f32[8,4] parameter(0)
  iota = s32[32] iota(), iota_dimension=0
  at = s32[8,4] reshape(iota)
  z = f32[] constant(0)
  none = s32[] constant(-1)
  w = (f32[4,2], s32[4,2]) reduce-window(a, at, z, none), window={size=2x2 stride=2x2}, to_apply=pick
  w0 = f32[4,2] get-tuple-element(w), index=0
  w1 = s32[4,2] get-tuple-element(w), index=1
  ROOT t = (f32[4,2], s32[4,2]) tuple(w0, w1)
}
)", {"f32[8,4]"}, "(f32[4,2], s32[4,2])");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(*kind, FusionKind::kLoop);
}

TEST(FusionEmittableTest, VariadicReduceRoot) {
  auto kind = Emittable(R"(
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fc {
  a = f32[8,4] parameter(0)
  io = s32[8,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[8], s32[8]) reduce(a, io, ninf, zero), dimensions={1}, to_apply=argmax
}
)", {"f32[8,4]"}, "(f32[8], s32[8])");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(*kind, FusionKind::kInput);
}

TEST(FusionEmittableTest, RejectsWhatTheEmitterCannotDo) {
  struct Case {
    std::string body, result, expected;
    std::vector<std::string> params;
  };
  const std::vector<Case> cases = {
      {R"(fc {
  a = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(a, z), dimensions={1}, to_apply=add_f32
  ROOT b = f32[8,4] broadcast(r), dimensions={0}
})", "f32[8,4]", "after a reduce is not an epilogue op", {"f32[8,4]"}},
      {R"(fc {
  a = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[8] reduce(a, z), dimensions={1}, to_apply=add_f32
  r2 = f32[4] reduce(a, z), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[8], f32[4]) tuple(r1, r2)
})", "(f32[8], f32[4])", "reduces over different dimensions", {"f32[8,4]"}},
      {R"(fc {
  a = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[8] reduce(a, z), dimensions={1}, to_apply=add_f32
  ROOT r2 = f32[] reduce(r1, z), dimensions={0}, to_apply=add_f32
})", "f32[]", "reads another reduce", {"f32[8,4]"}},
      {R"(fc {
  a = f32[8,4] parameter(0)
  b = f32[4,2] parameter(1)
  ROOT d = f32[8,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", "f32[8,2]", "not an elemental op", {"f32[8,4]", "f32[4,2]"}},
      {R"(fc {
  a = f32[2] parameter(0)
  c = f32[2] constant({1, 2})
  ROOT s = f32[2] add(a, c)
})", "f32[2]", "not an effective scalar", {"f32[2]"}},
      {R"(fc {
  a = c64[2] parameter(0)
  ROOT n = c64[2] negate(a)
})", "c64[2]", "emittable type", {"c64[2]"}},
      {R"(fc {
  a = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(a, z), dimensions={1}, to_apply=add_f32
  b = f32[8] parameter(1)
  n = f32[8] negate(b)
  ROOT t = (f32[8], f32[8]) tuple(r, n)
})", "(f32[8], f32[8])", "side output not the size", {"f32[8,4]", "f32[8]"}},
      {R"(fc {
  a = f32[8] parameter(0)
  b = f32[4] parameter(1)
  n = f32[8] negate(a)
  m = f32[4] negate(b)
  ROOT t = (f32[8], f32[4]) tuple(n, m)
})", "(f32[8], f32[4])", "outputs of different sizes", {"f32[8]", "f32[4]"}},
      {R"(fc {
  a = f32[8] parameter(0)
  ROOT s = f32[8] sort(a), dimensions={0}, to_apply=max_f32
})", "f32[8]", "not an elemental op", {"f32[8]"}},
  };
  for (const Case& c : cases) {
    auto kind = Emittable(c.body + "\n", c.params, c.result);
    ASSERT_FALSE(kind.ok()) << c.body;
    EXPECT_NE(std::string(kind.status().message()).find(c.expected), std::string::npos)
        << kind.status() << "\nexpected: " << c.expected;
  }
}

// ---- IsExpensive ------------------------------------------------------------

// IsElementalOp reads a table made from the opcode list for every opcode
// but bitcast-convert and reduce-window; it must answer as the list does.
TEST(FusionEmittableTest, ElementalOpsAreTheDocumentedOnes) {
  const Shape f32 = Shape::Array(PrimitiveType::kF32, {4});
  int64_t elemental = 0;
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    if (op == Opcode::kBitcastConvert || op == Opcode::kReduceWindow) continue;
    bool expected = IsElementwise(op);
    for (Opcode listed : {Opcode::kBroadcast, Opcode::kReshape, Opcode::kBitcast,
                          Opcode::kTranspose, Opcode::kSlice, Opcode::kDynamicSlice,
                          Opcode::kDynamicUpdateSlice, Opcode::kConcatenate, Opcode::kPad,
                          Opcode::kReverse, Opcode::kIota, Opcode::kGather}) {
      expected |= op == listed;
    }
    EXPECT_EQ(IsElementalOp(*Instruction::Create(op, f32, {})), expected) << OpcodeName(op);
    elemental += expected;
  }
  EXPECT_GT(elemental, 50);
  // The two whose answer depends on the instruction.
  auto p32 = Instruction::CreateParameter(0, f32, "p");
  auto p64 = Instruction::CreateParameter(1, Shape::Array(PrimitiveType::kF64, {4}), "q");
  EXPECT_TRUE(IsElementalOp(*Instruction::Create(
      Opcode::kBitcastConvert, Shape::Array(PrimitiveType::kS32, {4}), {p32.get()})));
  EXPECT_FALSE(IsElementalOp(*Instruction::Create(Opcode::kBitcastConvert, f32, {p64.get()})));
  EXPECT_TRUE(IsElementalOp(*Instruction::Create(Opcode::kReduceWindow, f32, {})));
  EXPECT_FALSE(IsElementalOp(
      *Instruction::Create(Opcode::kReduceWindow, Shape::Tuple({f32, f32}), {})));
  // Emittable arrays: static, of an emittable element type.
  EXPECT_TRUE(IsEmittableArray(f32));
  EXPECT_FALSE(IsEmittableArray(Shape::Tuple({f32})));
  EXPECT_FALSE(IsEmittableArray(Shape::Token()));
  EXPECT_FALSE(IsEmittableArray(Shape::Array(PrimitiveType::kC64, {4})));
  Shape dynamic = f32;
  dynamic.set_dynamic_dim(0, true);
  EXPECT_FALSE(IsEmittableArray(dynamic));
}

// A LoneConsumer made once answers for each of its operands as the
// per-pair CanFuseProducerConsumer does, on every pair of the small twins.
TEST(FusionLegalityTest, LoneConsumerMadeOnceAnswersAsPerPair) {
  int64_t pairs = 0, allowed = 0;
  for (const auto& path : fusion_test::CorpusFiles("small/hlo")) {
    std::unique_ptr<Module> module = fusion_test::LoadFile(path);
    if (module == nullptr) continue;
    for (FusionMode mode : {FusionMode::kXla, FusionMode::kGeneral}) {
      FusionOptions options;
      options.mode = mode;
      FusionAnalysis per_pair(*module, /*dry=*/true);
      FusionAnalysis made_once(*module, /*dry=*/true);
      for (Computation* computation : FusibleComputations(*module)) {
        for (Instruction* consumer : computation->MakePostOrder()) {
          const LoneConsumer lone(consumer, made_once);
          EXPECT_EQ(lone.operands().size(), UniqueOperandCount(*consumer));
          for (Instruction* producer : lone.operands()) {
            const FusionDecision expected =
                CanFuseProducerConsumer(*producer, *consumer, options, per_pair);
            const FusionDecision got = CanFuseProducerConsumer(*producer, lone, options, made_once);
            EXPECT_EQ(got.ok, expected.ok) << path << ": " << producer->name() << " into "
                                           << consumer->name();
            EXPECT_EQ(got.reason, expected.reason) << path;
            ++pairs;
            allowed += got.ok;
          }
        }
      }
    }
  }
  EXPECT_GT(pairs, 1000);
  EXPECT_GT(allowed, 100);
}

TEST(FusionLegalityTest, IsExpensiveFollowsXlaGpu) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  f = f32[4] parameter(0)
  d = f64[4] parameter(1)
  i = s32[4] parameter(2)
  two = s32[] constant(2)
  twob = s32[4] broadcast(two), dimensions={}
  exp_f32 = f32[4] exponential(f)
  exp_f64 = f64[4] exponential(d)
  log_f32 = f32[4] log(f)
  div_f32 = f32[4] divide(f, f)
  div_int_const = s32[4] divide(i, twob)
  div_int = s32[4] divide(i, i)
  add = f32[4] add(f, f)
  sin = f32[4] sine(f)
  tanh = f32[4] tanh(f)
  ROOT t = (f32[4], f64[4], f32[4], f32[4], s32[4], s32[4], f32[4], f32[4], f32[4]) tuple(exp_f32, exp_f64, log_f32, div_f32, div_int_const, div_int, add, sin, tanh)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(IsExpensive(*Find(*module, "exp_f32")));  // GPU override
  EXPECT_TRUE(IsExpensive(*Find(*module, "exp_f64")));
  EXPECT_TRUE(IsExpensive(*Find(*module, "log_f32")));
  EXPECT_FALSE(IsExpensive(*Find(*module, "div_f32")));
  EXPECT_FALSE(IsExpensive(*Find(*module, "div_int_const")));
  EXPECT_TRUE(IsExpensive(*Find(*module, "div_int")));
  EXPECT_FALSE(IsExpensive(*Find(*module, "add")));
  EXPECT_FALSE(IsExpensive(*Find(*module, "sin")));
  EXPECT_TRUE(IsExpensive(*Find(*module, "tanh")));
}

// ---- Producer-consumer legality ------------------------------------------

struct Verdict {
  bool xla;
  bool general;
};

class ProducerConsumerLegalityTest : public ::testing::Test {
 protected:
  void Load(std::string_view text) {
    module_ = ParseWithReducers(text);
    ASSERT_NE(module_, nullptr);
  }
  FusionDecision Decide(std::string_view producer, std::string_view consumer, FusionMode mode,
                        bool may_duplicate = true) {
    FusionOptions options;
    options.mode = mode;
    options.may_duplicate = may_duplicate;
    FusionAnalysis analysis(*module_, /*dry=*/false);
    return CanFuseProducerConsumer(*Find(*module_, producer), *Find(*module_, consumer), options,
                                   analysis);
  }
  // Checks both modes; `reason` is the xla mode's refusal ("" if allowed).
  void Expect(std::string_view producer, std::string_view consumer, Verdict verdict,
              std::string_view reason = "") {
    FusionDecision x = Decide(producer, consumer, FusionMode::kXla);
    FusionDecision g = Decide(producer, consumer, FusionMode::kGeneral);
    EXPECT_EQ(x.ok, verdict.xla) << producer << " -> " << consumer << " (xla): " << x.reason;
    EXPECT_EQ(g.ok, verdict.general) << producer << " -> " << consumer << " (general): "
                                     << g.reason;
    if (!reason.empty()) {
      EXPECT_NE(x.reason.find(reason), std::string_view::npos) << x.reason;
    }
  }
  std::unique_ptr<Module> module_;
};

TEST_F(ProducerConsumerLegalityTest, ElementwiseIntoElementwise) {
  Load(R"(
ENTRY main {
  p = f32[8] parameter(0)
  a = f32[8] add(p, p)
  ROOT n = f32[8] negate(a)
}
)");
  Expect("a", "n", {true, true});
  Expect("p", "a", {false, false}, "producer is not fusible");
}

TEST_F(ProducerConsumerLegalityTest, NothingFusesIntoOrOutOfDotsAndSorts) {
  Load(R"(
ENTRY main {
  p = f32[8,8] parameter(0)
  a = f32[8,8] add(p, p)
  d = f32[8,8] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = f32[8,8] negate(d)
  s = f32[8,8] sort(n), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8,8], f32[8,8]) tuple(s, n)
}
)");
  Expect("a", "d", {false, false}, "consumer is not fusible");
  Expect("d", "n", {false, false}, "producer is not fusible");
  Expect("n", "s", {false, false}, "consumer is not fusible");
}

TEST_F(ProducerConsumerLegalityTest, ConstantsOnlyAsEffectiveScalarsAndIntoFusionsUnderXla) {
  Load(R"(
fc {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(x, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[] constant(2)
  cb = f32[4] broadcast(c), dimensions={}
  big = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, big)
  f = f32[4] fusion(p, cb), kind=kLoop, calls=fc
  ROOT m = f32[4] multiply(a, f)
}
)");
  Expect("c", "cb", {false, true}, "constants are fused only into fusions");
  Expect("big", "a", {false, false}, "producer is not fusible");
  Expect("cb", "f", {true, true});
}

TEST_F(ProducerConsumerLegalityTest, RootProducerIsNotFusedUnderXla) {
  Load(R"(
ENTRY main {
  p = f32[4] parameter(0)
  ROOT a = f32[4] add(p, p)
  n = f32[4] negate(a)
}
)");
  Expect("a", "n", {false, true}, "producer is the root");
}

TEST_F(ProducerConsumerLegalityTest, DuplicationRules) {
  Load(R"(
ENTRY main {
  p = f32[8,8] parameter(0)
  q = f32[8,8] parameter(1)
  w = f32[8,8] parameter(2)
  l = f32[8,8] log(p)
  l1 = f32[8,8] negate(l)
  l2 = f32[8,8] abs(l)
  e = f32[8,8] exponential(p)
  e1 = f32[8,8] negate(e)
  e2 = f32[8,8] abs(e)
  s = f32[8,8] add(p, q)
  s1 = f32[8,8] negate(s)
  sd = f32[8,8] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  u = f32[8,8] add(p, w)
  u1 = f32[8,8] negate(u)
  u2 = f32[8,8] abs(u)
  ROOT t = (f32[8,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8]) tuple(l1, l2, e1, e2, s1, sd, u1, u2)
}
)");
  Expect("l", "l1", {false, true}, "expensive producer is not duplicated");
  Expect("e", "e1", {true, true});  // exp on f32 is cheap on the GPU
  Expect("s", "s1", {false, true}, "globally unfusible");
  Expect("u", "u1", {true, true});  // fusible into all of its users
  FusionDecision no_dup = Decide("e", "e1", FusionMode::kGeneral, /*may_duplicate=*/false);
  EXPECT_FALSE(no_dup.ok);
  EXPECT_NE(no_dup.reason.find("may_duplicate=false"), std::string_view::npos);
}

TEST_F(ProducerConsumerLegalityTest, ReductionsOnlyIntoEpilogues) {
  Load(R"(
ENTRY main {
  p = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p, z), dimensions={1}, to_apply=add_f32
  c = f16[8] convert(r)
  r2 = f32[8] reduce(p, z), dimensions={1}, to_apply=max_f32
  m = f32[8] multiply(r2, r2)
  r3 = f32[8] reduce(p, z), dimensions={1}, to_apply=add_f32
  b = f32[8,4] broadcast(r3), dimensions={0}
  r4 = f32[8] reduce(p, z), dimensions={1}, to_apply=max_f32
  rr = f32[] reduce(r4, z), dimensions={0}, to_apply=add_f32
  ROOT t = (f16[8], f32[8], f32[8,4], f32[]) tuple(c, m, b, rr)
}
)");
  Expect("r", "c", {true, true});
  Expect("r2", "m", {false, true}, "reduction only into a convert/bitcast epilogue");
  Expect("r3", "b", {false, false}, "no epilogue op");
  Expect("r4", "rr", {false, false}, "reduction into a reduction");
}

TEST_F(ProducerConsumerLegalityTest, XlaCoalescingAndReuseRules) {
  Load(R"(
ENTRY main {
  p = f32[8,4] parameter(0)
  v = f32[8] parameter(1)
  z = f32[] constant(0)
  t = f32[4,8] transpose(p), dimensions={1,0}
  rt = f32[4] reduce(t, z), dimensions={1}, to_apply=add_f32
  lg = f32[8] log(v)
  bc = f32[8,4] broadcast(lg), dimensions={0}
  ROOT out = (f32[4], f32[8,4]) tuple(rt, bc)
}
)");
  Expect("t", "rt", {false, true}, "transposing producer into a reduction");
  Expect("lg", "bc", {false, true}, "reuses its elements");
}

TEST_F(ProducerConsumerLegalityTest, OperandBudget) {
  std::string text = "ENTRY main {\n";
  std::string operands;
  for (int i = 0; i < 99; ++i) {
    absl::StrAppend(&text, "  p", i, " = f32[1] parameter(", i, ")\n");
  }
  for (int i = 0; i < 97; ++i) absl::StrAppend(&operands, "p", i, ", ");
  absl::StrAppend(&text, "  a = f32[1] add(p97, p98)\n  ROOT c = f32[98] concatenate(", operands,
                  "a), dimensions={0}\n}\n");
  Load(text);
  Expect("a", "c", {false, true}, "too many operands");
}

TEST_F(ProducerConsumerLegalityTest, ControlDependenciesBlockFusion) {
  Load(R"(
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  b = f32[4] multiply(p, p)
  ROOT n = f32[4] negate(a), control-predecessors={b}
}
)");
  Expect("a", "n", {false, false}, "consumer is not fusible");
}

// ---- Multi-output legality ----------------------------------------------

TEST(MultiOutputLegalityTest, SiblingsMustShareTheirLoop) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8,4] parameter(0)
  z = f32[] constant(0)
  n = f32[8,4] negate(p)
  e = f32[8,4] exponential(p)
  r = f32[8] reduce(p, z), dimensions={1}, to_apply=add_f32
  r0 = f32[4] reduce(p, z), dimensions={0}, to_apply=add_f32
  sl = f32[8,2] slice(p), slice={[0:8], [0:2]}
  ROOT t = (f32[8,4], f32[8,4], f32[8], f32[4], f32[8,2]) tuple(n, e, r, r0, sl)
}
)");
  ASSERT_NE(module, nullptr);
  FusionAnalysis analysis(*module, false);
  auto siblings = [&](std::string_view a, std::string_view b, FusionMode mode) {
    FusionOptions options;
    options.mode = mode;
    return CanFuseSiblings(*Find(*module, a), *Find(*module, b), options, analysis);
  };
  for (FusionMode mode : {FusionMode::kXla, FusionMode::kGeneral}) {
    EXPECT_TRUE(siblings("n", "e", mode).ok);
    EXPECT_TRUE(siblings("n", "r", mode).ok);  // a side output of the reduction
    EXPECT_FALSE(siblings("r", "r0", mode).ok);
    EXPECT_FALSE(siblings("n", "sl", mode).ok);
    EXPECT_EQ(siblings("n", "sl", mode).reason, "siblings iterate over different shapes");
  }
}

TEST(MultiOutputLegalityTest, ProducerConsumerNeedsOtherUsers) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  a = f32[8] add(p, p)
  b = f32[8] negate(a)
  c = f32[8] abs(a)
  d = f32[8] multiply(p, p)
  f = f32[8] negate(d)
  ROOT t = (f32[8], f32[8], f32[8]) tuple(b, c, f)
}
)");
  ASSERT_NE(module, nullptr);
  FusionAnalysis analysis(*module, false);
  FusionOptions options;
  EXPECT_TRUE(CanFuseProducerConsumerMultiOutput(*Find(*module, "a"), *Find(*module, "b"),
                                                 options, analysis).ok);
  FusionDecision d = CanFuseProducerConsumerMultiOutput(*Find(*module, "d"), *Find(*module, "f"),
                                                        options, analysis);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, "producer has no other users");
}

TEST(MultiOutputLegalityTest, SharedScalarsAndBroadcastsAreNotWorthSharing) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  s = f32[] parameter(1)
  b = f32[8] broadcast(s), dimensions={}
  ROOT a = f32[8] add(p, b)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(IsProfitableSharedOperand(*Find(*module, "p")));
  EXPECT_FALSE(IsProfitableSharedOperand(*Find(*module, "s")));
  EXPECT_FALSE(IsProfitableSharedOperand(*Find(*module, "b")));
}

// ---- Reachability -------------------------------------------------------

TEST(ReachabilityMapTest, AncestorsAndMerges) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  a = f32[8] negate(p)
  b = f32[8] abs(a)
  c = f32[8] exponential(p)
  d = f32[8] add(b, c)
  ROOT t = (f32[8], f32[8]) tuple(d, c)
}
)");
  ASSERT_NE(module, nullptr);
  Computation* entry = module->entry();
  ReachabilityMap reach(*entry);
  Instruction* p = Find(*module, "p");
  Instruction* a = Find(*module, "a");
  Instruction* b = Find(*module, "b");
  Instruction* c = Find(*module, "c");
  Instruction* d = Find(*module, "d");
  EXPECT_TRUE(reach.IsReachable(p, d));
  EXPECT_TRUE(reach.IsReachable(a, a));
  EXPECT_FALSE(reach.IsReachable(d, a));
  EXPECT_FALSE(reach.IsConnected(b, c));
  EXPECT_TRUE(reach.IsConnected(a, d));
  // Merge b and c into m (as a sibling fusion would): d now depends on m,
  // and m on everything b and c depended on.
  Instruction* m = entry->AddInstruction(
      Instruction::Create(Opcode::kTuple, Shape::Tuple({b->shape(), c->shape()}), {a, p}));
  Instruction* g0 = entry->AddInstruction(
      Instruction::Create(Opcode::kGetTupleElement, b->shape(), {m}));
  Instruction* g1 = entry->AddInstruction(
      Instruction::Create(Opcode::kGetTupleElement, c->shape(), {m}));
  const Instruction* parts[] = {b, c};
  const Instruction* replacements[] = {g0, g1};
  reach.Merge(m, parts, replacements);
  EXPECT_TRUE(reach.IsReachable(a, m));
  EXPECT_TRUE(reach.IsReachable(m, d));
  EXPECT_TRUE(reach.IsReachable(g0, d));
  EXPECT_FALSE(reach.IsReachable(d, m));
  EXPECT_TRUE(reach.IsReachable(m, g1));
}

TEST(ReachabilityMapTest, GrowsPastItsInitialCapacity) {
  auto module = ParseWithReducers(R"(
ENTRY main {
  p = f32[8] parameter(0)
  ROOT a = f32[8] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  Computation* entry = module->entry();
  ReachabilityMap reach(*entry);
  Instruction* last = entry->root();
  for (int i = 0; i < 300; ++i) {
    last = entry->AddInstruction(Instruction::Create(Opcode::kNegate, last->shape(), {last}));
    reach.Add(last);
  }
  EXPECT_TRUE(reach.IsReachable(entry->parameter(0), last));
  EXPECT_FALSE(reach.IsReachable(last, entry->root()));
}

}  // namespace
}  // namespace hlogym

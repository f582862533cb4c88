// Fingerprint: a fixed structural hash. Invariant under renaming, storage
// order, cloning, metadata and dead code; sensitive to values, attributes,
// operand order and layouts; and equal across runs (a golden value).
#include "core/ir/fingerprint.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::FindInstruction;

uint64_t FingerprintOf(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? Fingerprint(**m) : 0;
}

constexpr char kBase[] = R"(HloModule base, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0})->f32[4]{0}}

region_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[4,8]{1,0} parameter(0)
  y = f32[8]{0} parameter(1)
  two = f32[] constant(2)
  by = f32[4,8]{1,0} broadcast(y), dimensions={1}
  d = f32[4,8]{1,0} subtract(x, by)
  e = f32[4,8]{1,0} exponential(x)
  m = f32[4,8]{1,0} multiply(d, e)
  zero = f32[] constant(0)
  ROOT r = f32[4]{0} reduce(m, zero), dimensions={1}, to_apply=region_add
}
)";

// kBase with `from` replaced by `to` (which must occur).
std::string Variant(const std::string& from, const std::string& to) {
  const std::string base = kBase;
  EXPECT_NE(base.find(from), std::string::npos) << from;
  return absl::StrReplaceAll(base, {{from, to}});
}

TEST(FingerprintTest, ValueFingerprintsTellParametersApartByShapeOnly) {
  auto m = ParseModule(R"(HloModule values
ENTRY main {
  p = f32[4]{0} parameter(0)
  q = f32[4]{0} parameter(1)
  w = f32[8]{0} parameter(2)
  a = f32[4]{0} negate(p)
  b = f32[4]{0} negate(q)
  c = f32[4]{0} exponential(p)
  s = f32[4]{0} slice(w), slice={[0:4]}
  t = f32[4]{0} slice(w), slice={[4:8]}
  ROOT out = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(a, b, c, s, t)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Instruction*> values;
  for (const char* name : {"a", "b", "c", "s", "t", "p", "w"}) {
    values.push_back(FindInstruction(**m, name));
  }
  const std::vector<uint64_t> h = ValueFingerprints(values);
  ASSERT_EQ(h.size(), values.size());
  EXPECT_EQ(h[0], h[1]);  // negate(parameter 0) and negate(parameter 1)
  EXPECT_NE(h[0], h[2]);  // another op
  EXPECT_NE(h[3], h[4]);  // other attributes
  EXPECT_NE(h[5], h[6]);  // parameters of other shapes
}

TEST(FingerprintTest, GoldenValueIsFixedAcrossRunsAndMachines) {
  // Changing this value changes every stored fingerprint (caches, datasets):
  // do so only on purpose.
  EXPECT_EQ(FingerprintOf(kBase), 3488601907899059497ull);
}

// A value computed twice and a value computed once and used twice are
// different graphs (two kernels vs one, after fusion), though every
// instruction's operand tree is the same.
TEST(FingerprintTest, SeesSharing) {
  const std::string shared = Variant("m = f32[4,8]{1,0} multiply(d, e)",
                                     "m = f32[4,8]{1,0} multiply(e, e)");
  const std::string twice = Variant("m = f32[4,8]{1,0} multiply(d, e)",
                                    "e2 = f32[4,8]{1,0} exponential(x)\n"
                                    "  m = f32[4,8]{1,0} multiply(e, e2)");
  EXPECT_NE(FingerprintOf(shared), FingerprintOf(twice));
  // The same sharing written in another order or with other names is equal.
  const std::string reordered = Variant("m = f32[4,8]{1,0} multiply(d, e)",
                                        "e2 = f32[4,8]{1,0} exponential(x)\n"
                                        "  m = f32[4,8]{1,0} multiply(e2, e)");
  EXPECT_EQ(FingerprintOf(twice), FingerprintOf(reordered));
}

TEST(FingerprintTest, EqualForTwoParsesAndAClone) {
  HLOGYM_PARSE_OR_FAIL(m, std::string(kBase));
  const uint64_t f = Fingerprint(*m);
  EXPECT_EQ(FingerprintOf(kBase), f);
  EXPECT_EQ(Fingerprint(*m->Clone()), f);
  EXPECT_EQ(Fingerprint(*m), f);  // memoization leaves no state behind
}

// The hashes are memoized in a table indexed by unique id when the
// module's ids allow it, by address otherwise: both give the same value.
TEST(FingerprintTest, IndependentOfUniqueIds) {
  HLOGYM_PARSE_OR_FAIL(m, std::string(kBase));
  const uint64_t f = Fingerprint(*m);
  std::vector<Instruction*> all;
  for (const auto& comp : m->computations()) {
    for (const auto& inst : comp->instructions()) all.push_back(inst.get());
  }
  ASSERT_GT(all.size(), 4u);
  // Spread far apart (past the table's reach), and back.
  for (size_t i = 0; i < all.size(); ++i) all[i]->set_unique_id(int64_t{1} << (20 + i % 30));
  EXPECT_EQ(Fingerprint(*m), f);
  // Shared: every instruction the same id.
  for (Instruction* inst : all) inst->set_unique_id(5);
  EXPECT_EQ(Fingerprint(*m), f);
  // Dense but reversed.
  for (size_t i = 0; i < all.size(); ++i) all[i]->set_unique_id(static_cast<int64_t>(all.size() - i));
  EXPECT_EQ(Fingerprint(*m), f);
  EXPECT_EQ(Fingerprint(*m), f);  // the table's marks of the last one do not count
}

TEST(FingerprintTest, IndependentOfNames) {
  std::string renamed = absl::StrReplaceAll(
      std::string(kBase), {{"HloModule base", "HloModule other"},
                           {"region_add", "sum.7"},
                           {"ENTRY main", "ENTRY main.42"},
                           {"by", "bcast.1"},
                           {" d ", " diff "},
                           {"(d, e)", "(diff, exp.3)"},
                           {" e ", " exp.3 "},
                           {"ROOT r ", "ROOT result "}});
  ASSERT_NE(renamed, kBase);
  EXPECT_EQ(FingerprintOf(renamed), FingerprintOf(kBase));
}

TEST(FingerprintTest, IndependentOfTheOrderOfIndependentInstructions) {
  // e and the broadcast/subtract chain do not depend on each other; zero and
  // two are constants anywhere.
  const std::string reordered = R"(HloModule base, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0})->f32[4]{0}}

region_add {
  b = f32[] parameter(1)
  a = f32[] parameter(0)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  zero = f32[] constant(0)
  x = f32[4,8]{1,0} parameter(0)
  e = f32[4,8]{1,0} exponential(x)
  y = f32[8]{0} parameter(1)
  by = f32[4,8]{1,0} broadcast(y), dimensions={1}
  d = f32[4,8]{1,0} subtract(x, by)
  m = f32[4,8]{1,0} multiply(d, e)
  two = f32[] constant(2)
  ROOT r = f32[4]{0} reduce(m, zero), dimensions={1}, to_apply=region_add
}
)";
  EXPECT_EQ(FingerprintOf(reordered), FingerprintOf(kBase));
}

TEST(FingerprintTest, IgnoresMetadataAndDeadInstructions) {
  EXPECT_EQ(FingerprintOf(Variant("exponential(x)",
                                  "exponential(x), metadata={op_name=\"jit(f)/exp\" source_line=4}")),
            FingerprintOf(kBase));
  // `two` is already dead in kBase; more dead code changes nothing either.
  EXPECT_EQ(FingerprintOf(Variant("  zero = f32[] constant(0)\n",
                                  "  zero = f32[] constant(0)\n"
                                  "  dead = f32[4,8]{1,0} add(m, m)\n"
                                  "  dead2 = f32[4,8]{1,0} negate(dead)\n")),
            FingerprintOf(kBase));
}

TEST(FingerprintTest, SensitiveToStructure) {
  const uint64_t base = FingerprintOf(kBase);
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"constant(0)", "constant(1)"},                            // a constant's value
      {"dimensions={1}, to_apply", "dimensions={0}, to_apply"},  // a dimension
      {"subtract(x, by)", "subtract(by, x)"},                    // operand order
      {"exponential(x)", "tanh(x)"},                             // an opcode
      {"ROOT s = f32[] add(a, b)", "ROOT s = f32[] maximum(a, b)"},  // a called computation
      {"exponential(x)", "exponential(x), backend_config={\"k\":1}"},  // semantic raw attribute
      {"e = f32[4,8]{1,0} exponential", "e = f32[4,8]{0,1} exponential"},  // a layout
      {"->f32[4]{0}}", "->f32[4]{0:T(128)}}"},                     // the entry layout
  };
  for (const auto& [from, to] : changes) {
    EXPECT_NE(FingerprintOf(Variant(from, to)), base) << from << " -> " << to;
  }
}

TEST(FingerprintTest, CommutativeOperandOrderStillCounts) {
  // The hash follows operand order for every opcode but alternatives; it
  // makes no algebraic assumptions.
  EXPECT_NE(FingerprintOf(Variant("multiply(d, e)", "multiply(e, d)")), FingerprintOf(kBase));
}

TEST(FingerprintTest, ParameterOrderCounts) {
  const std::string a = R"(HloModule m

ENTRY e {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} parameter(1)
  ROOT s = f32[4]{0} subtract(x, y)
}
)";
  const std::string b = R"(HloModule m

ENTRY e {
  x = f32[4]{0} parameter(1)
  y = f32[4]{0} parameter(0)
  ROOT s = f32[4]{0} subtract(x, y)
}
)";
  EXPECT_NE(FingerprintOf(a), FingerprintOf(b));
}

TEST(FingerprintTest, ControlPredecessorsAreASet) {
  const std::string head = R"(HloModule m

ENTRY e {
  x = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(x)
  b = f32[4]{0} abs(x)
  c = f32[4]{0} exponential(x)
)";
  const uint64_t ab = FingerprintOf(head + "  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(a, b, c), "
                                           "control-predecessors={a, b}\n}\n");
  const uint64_t ba = FingerprintOf(head + "  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(a, b, c), "
                                           "control-predecessors={b, a}\n}\n");
  const uint64_t none =
      FingerprintOf(head + "  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(a, b, c)\n}\n");
  EXPECT_EQ(ab, ba);
  EXPECT_NE(ab, none);
}

TEST(FingerprintTest, AlternativesOperandsAreUnordered) {
  auto build = [](bool swap) -> uint64_t {
    auto parsed = ParseModule(kBase);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return 0;
    Module* m = parsed->get();
    Computation* entry = m->entry();
    Instruction* d = FindInstruction(*m, "d");
    Instruction* e = FindInstruction(*m, "e");
    std::vector<Instruction*> choices = swap ? std::vector<Instruction*>{e, d}
                                             : std::vector<Instruction*>{d, e};
    Instruction* alt =
        entry->AddInstruction(Instruction::Create(Opcode::kAlternatives, d->shape(), choices));
    FindInstruction(*m, "m")->ReplaceOperandWith(int64_t{0}, alt);
    return Fingerprint(*m);
  };
  EXPECT_EQ(build(false), build(true));
  EXPECT_NE(build(false), FingerprintOf(kBase));
}

TEST(FingerprintTest, ComputationFingerprintIgnoresItsName) {
  HLOGYM_PARSE_OR_FAIL(a, std::string(kBase));
  HLOGYM_PARSE_OR_FAIL(b, Variant("region_add", "other_region"));
  EXPECT_EQ(Fingerprint(*a->computations()[0]), Fingerprint(*b->computations()[0]));
  EXPECT_NE(Fingerprint(*a->computations()[0]), Fingerprint(*a->entry()));
}

TEST(FingerprintTest, DeepChainsDoNotOverflowTheStack) {
  std::string text = "HloModule deep\n\nENTRY e {\n  v0 = f32[4]{0} parameter(0)\n";
  const int kDepth = 200000;
  for (int i = 1; i <= kDepth; ++i) {
    text += (i == kDepth ? "  ROOT v" : "  v") + std::to_string(i) + " = f32[4]{0} negate(v" +
            std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  EXPECT_NE(FingerprintOf(text), 0u);
}

// Every bundled module: two parses and a clone agree, and no two distinct
// modules of a set collide.
TEST(FingerprintCorpusTest, StableOverEveryModuleSet) {
  for (const char* dir : {"data/corpus/hlo", "data/corpus/small/hlo", "data/dataset/hlo",
                          "data/corpus/xla_gpu", "tests/data/hlo"}) {
    const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
    ASSERT_TRUE(std::filesystem::exists(root)) << root;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::pair<uint64_t, std::string>> seen;
    for (const auto& path : files) {
      SCOPED_TRACE(path.string());
      const std::string text = testing_util::ReadFile(path);
      HLOGYM_PARSE_OR_FAIL(m, text);
      const uint64_t f = Fingerprint(*m);
      EXPECT_EQ(FingerprintOf(text), f);
      EXPECT_EQ(Fingerprint(*m->Clone()), f);
      seen.push_back({f, path.filename().string()});
    }
    std::sort(seen.begin(), seen.end());
    for (size_t i = 1; i < seen.size(); ++i) {
      EXPECT_NE(seen[i].first, seen[i - 1].first)
          << dir << ": " << seen[i].second << " and " << seen[i - 1].second << " collide";
    }
  }
}

}  // namespace
}  // namespace hlogym

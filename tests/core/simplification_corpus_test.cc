// The simplification passes on the corpus small twins: each pass in apply
// mode to a fixed point, and in dry mode with 20 seeded random decision sets
// each run round after round until it offers nothing; every result must
// verify and compute what the original computes (reference interpreter).
// The original of each module is evaluated once, and a result already
// checked (same fingerprint) is not evaluated again, which keeps the suite
// fast: most decision sets of a pass lead to a few distinct modules.
#include <filesystem>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/ir/fingerprint.h"
#include "simplification_test_util.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

struct Twin {
  std::string name;
  std::unique_ptr<Module> module;
  std::vector<Literal> inputs;
  std::vector<Literal> expected;
};

// Every small twin, parsed and evaluated once for the whole suite.
const std::vector<Twin>& Twins() {
  static const auto* twins = [] {
    auto* list = new std::vector<Twin>();
    const fs::path dir = fs::path(HLOGYM_SOURCE_DIR) / "data/corpus/small/hlo";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
      Twin twin;
      twin.name = path.stem().string();
      twin.module = simplification_test::Parse(
          simplification_test::ReadSource("/data/corpus/small/hlo/" + path.filename().string()));
      if (twin.module == nullptr) continue;
      twin.inputs = FormulaInputs(*twin.module);
      auto expected = EvaluateFlat(*twin.module, twin.inputs);
      EXPECT_TRUE(expected.ok()) << twin.name << ": " << expected.status();
      if (!expected.ok()) continue;
      twin.expected = *std::move(expected);
      list->push_back(std::move(twin));
    }
    return list;
  }();
  return *twins;
}

// Checks `module` against `twin` unless a module with its fingerprint was
// already checked; returns "" when it verifies and matches.
std::string Check(const Twin& twin, const Module& module, absl::flat_hash_set<uint64_t>& seen) {
  if (!seen.insert(Fingerprint(module)).second) return "";
  if (absl::Status s = Verify(module); !s.ok()) return absl::StrCat("verify: ", s.message());
  auto actual = EvaluateFlat(module, twin.inputs);
  if (!actual.ok()) return absl::StrCat("evaluate: ", actual.status().message());
  EquivalenceReport report = CompareLiterals(twin.expected, *actual);
  return report.equivalent ? "" : report.message;
}

class SimplificationCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SimplificationCorpusTest, ApplyModePreservesSemantics) {
  ASSERT_EQ(Twins().size(), 24u);
  for (const Twin& twin : Twins()) {
    auto module = twin.module->Clone();
    simplification_test::RunToFixedPoint(GetParam(), *module);
    absl::flat_hash_set<uint64_t> seen;
    EXPECT_EQ(Check(twin, *module, seen), "") << GetParam() << " on " << twin.name;
  }
}

TEST_P(SimplificationCorpusTest, RandomDryDecisionsPreserveSemantics) {
  int64_t distinct = 0;
  for (const Twin& twin : Twins()) {
    absl::flat_hash_set<uint64_t> seen;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      auto module = twin.module->Clone();
      std::mt19937_64 rng(seed);
      absl::Status s = simplification_test::DryEpisode(GetParam(), *module, 0, &rng);
      ASSERT_TRUE(s.ok()) << twin.name << " seed " << seed << ": " << s;
      ASSERT_EQ(Check(twin, *module, seen), "")
          << GetParam() << " on " << twin.name << ", seed " << seed;
    }
    distinct += static_cast<int64_t>(seen.size());
  }
  RecordProperty("distinct_modules_checked", static_cast<int>(distinct));
}

INSTANTIATE_TEST_SUITE_P(Passes, SimplificationCorpusTest,
                         ::testing::Values("algsimp", "cse", "constant-folding", "call-inliner",
                                           "tuple-simplifier"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// How much each pass finds in the corpus: algsimp, CSE and the inliner all
// find something to do, and nothing they do breaks a module.
TEST(SimplificationWorkTest, PassesFindWorkInTheCorpus) {
  std::map<std::string, int64_t> removed;
  for (const char* spec : {"algsimp", "cse", "call-inliner", "tuple-simplifier"}) {
    for (const Twin& twin : Twins()) {
      auto module = twin.module->Clone();
      const int64_t before = module->instruction_count();
      simplification_test::RunToFixedPoint(spec, *module);
      removed[spec] += before - module->instruction_count();
    }
  }
  EXPECT_GT(removed["cse"], 0);
  EXPECT_GT(removed["algsimp"], 0);
  EXPECT_GT(removed["call-inliner"] + removed["tuple-simplifier"], 0);
}

}  // namespace
}  // namespace hlogym

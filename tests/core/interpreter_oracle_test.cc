// The interpreter against XLA:CPU's outputs on the formula inputs: the 24
// small-shape twins element by element (where their oracle holds every value)
// and, in InterpreterOracleFullSize, the 25 full-size corpus modules and the
// 126 dataset modules by statistics and samples.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/oracle_check.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Evaluates every module of hlo_dir on the formula inputs and checks it
// against oracle_dir; returns the failures, one line each.
std::vector<std::string> CheckDirectory(const fs::path& hlo_dir, const fs::path& oracle_dir,
                                        bool elementwise) {
  std::vector<std::string> failures;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(hlo_dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  EXPECT_FALSE(files.empty()) << hlo_dir;
  for (const fs::path& path : files) {
    const std::string name = path.stem().string();
    auto module = ParseModule(Read(path));
    if (!module.ok()) {
      failures.push_back(name + ": parse: " + std::string(module.status().message()));
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    auto outputs = EvaluateFlat(**module, FormulaInputs(**module));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!outputs.ok()) {
      failures.push_back(name + ": " + std::string(outputs.status().message()));
      continue;
    }
    const std::string why = testing::CheckAgainstOracle(
        *outputs, testing::ReadJsonFile((oracle_dir / (name + ".json")).string()), elementwise);
    if (!why.empty()) failures.push_back(name + ": " + why);
    std::printf("  %-44s %8.3f s %s\n", name.c_str(), seconds, why.empty() ? "ok" : "FAIL");
  }
  return failures;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "\n  " + l;
  return out;
}

const fs::path kData = fs::path(HLOGYM_SOURCE_DIR) / "data";

TEST(InterpreterOracleTest, SmallTwinsMatchXlaElementByElement) {
  std::vector<std::string> failures = CheckDirectory(
      kData / "corpus" / "small" / "hlo", kData / "corpus" / "small" / "oracle", true);
  EXPECT_TRUE(failures.empty()) << failures.size() << " of 24 differ:" << Join(failures);
}

TEST(InterpreterOracleFullSize, CorpusMatchesXla) {
  std::vector<std::string> failures =
      CheckDirectory(kData / "corpus" / "hlo", kData / "corpus" / "oracle", false);
  EXPECT_TRUE(failures.empty()) << failures.size() << " of 25 differ:" << Join(failures);
}

// Known and explained, not an interpreter error: flax_mha_grad's output 0 is
// the key-bias gradient of attention, exactly 0 in exact arithmetic (softmax
// ignores a constant added to every logit of a query). Both f32 results are
// cancellation noise: XLA's oracle holds values up to 0.0023 (sum -0.0077),
// ours up to 0.0007 (sum -0.0009), while the interpreter run in f64 gives
// 3.7e-12 and the other outputs reach 7e3. The sum check's absolute slack is
// 1e-3, so the noise fails it. Listed so the test fails if another module
// breaks, and also if this one starts to match (then remove it).
const std::vector<std::string> kKnownDatasetMismatches = {"flax_mha_grad"};

TEST(InterpreterOracleFullSize, DatasetMatchesXla) {
  std::vector<std::string> failures =
      CheckDirectory(kData / "dataset" / "hlo", kData / "dataset" / "oracle", false);
  std::vector<std::string> unexpected;
  for (const std::string& f : failures) {
    const std::string name = f.substr(0, f.find(':'));
    if (std::find(kKnownDatasetMismatches.begin(), kKnownDatasetMismatches.end(), name) ==
        kKnownDatasetMismatches.end()) {
      unexpected.push_back(f);
    }
  }
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " of 126 differ:" << Join(unexpected);
  EXPECT_EQ(failures.size() - unexpected.size(), kKnownDatasetMismatches.size())
      << "a known mismatch now matches XLA: remove it from kKnownDatasetMismatches";
}

}  // namespace
}  // namespace hlogym

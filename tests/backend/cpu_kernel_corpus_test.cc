// Every fusion of the fused small corpus twins (data/corpus/small/hlo after
// the default pipeline), compiled for the CPU and run on the operand values
// the interpreter computes for the twin's formula inputs, against the
// interpreter's value of the fused computation. Prints a per-module table of
// fusions compiled / matched, and the reasons for those that are not.
// HLOGYM_LONG_TESTS=1 also runs data/dataset.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/passes/default_pipeline.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::Compiler;
using kernel_test::Mismatch;
using kernel_test::RunKernel;

struct Tally {
  int fusions = 0, compiled = 0, matched = 0, exact = 0;
  std::vector<std::string> problems;  // mismatches and errors (test failures)
  std::vector<std::string> skipped;   // fusions CanCompile refuses, with the reason
};

std::vector<std::filesystem::path> Files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Floats are compared with the project's equivalence tolerance (rtol 1e-4,
// atol 1e-5): libm calls differ from the interpreter's double-precision math
// by an ulp or two, which cancellation (x*exp(a) + sin(a) - log1p(b), x -
// mean) turns into a large relative error near zero. Exact (within 0 ulps)
// fusions are counted too.

void CheckModule(const std::filesystem::path& path, Tally& tally) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModule(text.str());
  ASSERT_TRUE(parsed.ok()) << path << ": " << parsed.status();
  Module& module = **parsed;
  Pipeline pipeline = DefaultPipeline();
  ASSERT_TRUE(pipeline.Run(module).ok()) << path;
  const std::vector<Literal> args = FormulaInputs(module);

  // The fusion operands' values: evaluate the entry with a root that gathers
  // them all.
  Computation& entry = *module.entry();
  std::vector<Instruction*> fusions;
  std::vector<Instruction*> needed;
  for (Instruction* i : entry.MakePostOrder()) {
    if (!i->IsFusion()) continue;
    fusions.push_back(i);
    for (Instruction* operand : i->operands()) needed.push_back(operand);
  }
  if (fusions.empty()) return;
  std::vector<Shape> shapes;
  for (Instruction* n : needed) shapes.push_back(n->shape());
  Instruction* old_root = entry.root();
  Instruction* gather = entry.AddInstruction(
      Instruction::Create(Opcode::kTuple, Shape::Tuple(shapes), needed));
  entry.set_root(gather);
  absl::StatusOr<Literal> values = Evaluate(module, args);
  entry.set_root(old_root);
  ASSERT_TRUE(values.ok()) << path << ": " << values.status();

  const std::string name = path.stem().string();
  size_t next = 0;
  for (Instruction* fusion : fusions) {
    ++tally.fusions;
    std::vector<const Literal*> operands;
    for (int64_t k = 0; k < fusion->operand_count(); ++k) {
      operands.push_back(&values->tuple_elements()[next++]);
    }
    const std::string label = absl::StrCat(name, " ", fusion->name());
    if (!CpuKernelCompiler::CanCompile(*fusion)) {
      absl::StatusOr<CpuKernel> refused = Compiler().Compile(*fusion);
      tally.skipped.push_back(absl::StrCat(label, ": ", refused.status().message()));
      continue;
    }
    absl::StatusOr<std::vector<Literal>> actual = RunKernel(*fusion, operands);
    if (!actual.ok()) {
      tally.problems.push_back(absl::StrCat(label, ": ", actual.status().ToString()));
      continue;
    }
    ++tally.compiled;
    absl::StatusOr<Literal> expected = EvaluateComputation(*fusion->fused_computation(), operands);
    if (!expected.ok()) {
      tally.problems.push_back(
          absl::StrCat(label, ": interpreter: ", expected.status().ToString()));
      continue;
    }
    std::vector<Literal> leaves;
    if (expected->is_tuple()) {
      leaves = std::move(expected->tuple_elements());
    } else {
      leaves.push_back(std::move(*expected));
    }
    bool exact = leaves.size() == actual->size();
    for (size_t k = 0; k < leaves.size() && exact; ++k) {
      exact = Mismatch(leaves[k], (*actual)[k], 0).empty();
    }
    const EquivalenceReport report = CompareLiterals(leaves, *actual);
    if (report.equivalent) {
      ++tally.matched;
      tally.exact += exact;
    } else {
      tally.problems.push_back(absl::StrCat(label, ": ", report.message));
    }
  }
}

void RunCorpus(const std::string& dir) {
  Tally total;
  for (const auto& path : Files(dir)) {
    Tally t;
    CheckModule(path, t);
    std::cout << "  " << path.stem().string() << ": " << t.fusions << " fusions, " << t.compiled
              << " compiled, " << t.matched << " match (" << t.exact << " exactly)\n";
    for (const std::string& s : t.skipped) std::cout << "    host: " << s << "\n";
    total.fusions += t.fusions;
    total.compiled += t.compiled;
    total.matched += t.matched;
    total.exact += t.exact;
    for (auto& p : t.problems) total.problems.push_back(p);
  }
  std::cout << dir << ": " << total.fusions << " fusions, " << total.compiled << " compiled, "
            << total.matched << " match the interpreter (" << total.exact << " exactly)\n";
  for (const std::string& p : total.problems) ADD_FAILURE() << p;
}

TEST(CpuKernelCorpusTest, SmallTwinFusionsMatchTheInterpreter) {
  RunCorpus("data/corpus/small/hlo");
}

TEST(CpuKernelCorpusTest, DatasetFusionsMatchTheInterpreter) {
  if (std::getenv("HLOGYM_LONG_TESTS") == nullptr) GTEST_SKIP() << "set HLOGYM_LONG_TESTS=1";
  RunCorpus("data/dataset/hlo");
}

}  // namespace
}  // namespace hlogym

// CpuExecutable against the reference interpreter on real modules: every
// small corpus twin before and after the default pipeline, and a sample of
// data/dataset (all of it with HLOGYM_LONG_TESTS=1). Also checks that each
// fusion and each unfused instruction that computes something is one kernel.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu_executable.h"
#include "backend/gpu_lowering.h"
#include "core/eval/equivalence.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::Compiler;

std::vector<std::filesystem::path> HloFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool LongTests() {
  const char* v = std::getenv("HLOGYM_LONG_TESTS");
  return v != nullptr && std::string(v) == "1";
}

// Instructions of the entry that should each be one kernel.
int64_t ExpectedKernels(const Computation& entry) {
  int64_t n = 0;
  for (const auto& inst : entry.instructions()) {
    const Opcode op = inst->opcode();
    if (IsBufferAlias(*inst) || op == Opcode::kAfterAll || op == Opcode::kWhile ||
        op == Opcode::kConditional || op == Opcode::kCall) {
      continue;
    }
    ++n;
  }
  return n;
}

// Whether any computation of `module` takes an f32 exponential. The CPU
// kernels compute those in single precision, as XLA:CPU does (within an ulp
// of the rounded double; the interpreter rounds the double), and training
// steps through recurrences carry that far: flax_rnn_gru_train's gradients
// differ from the interpreter by up to 2e-4 absolute (7e-3 relative near
// zero) while both stay within 6e-5 of XLA's own outputs. Such modules are
// compared with the XLA oracle's f32 tolerance, |a - b| <= 1e-3 (1 + |b|)
// (data/corpus/README.md).
bool HasF32Exp(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kExp && !inst->shape().IsTuple() &&
          inst->shape().element_type() == PrimitiveType::kF32) {
        return true;
      }
    }
  }
  return false;
}

// Compiles and runs the module and compares with the interpreter; returns
// an empty string when they agree, else what went wrong.
// `interpreted` collects what ran on the interpreter (here or in a called
// computation), labelled.
// `convolutions_lowered`: the module's convolutions are dots now
// (LowerForGpu), compared as convolutions.
std::string Check(const Module& module, const std::string& label, int64_t& jit_kernels,
                  std::vector<std::string>& interpreted, bool convolutions_lowered = false) {
  const std::vector<Literal> inputs = FormulaInputs(module);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(module, inputs);
  if (!expected.ok()) return label + ": interpreter: " + expected.status().ToString();
  absl::StatusOr<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::Compile(module, Compiler());
  if (!executable.ok()) return label + ": compile: " + executable.status().ToString();
  const CpuExecutableStats& stats = (*executable)->stats();
  jit_kernels += stats.jit_kernel_count;
  for (const std::string& op : stats.interpreter_ops) interpreted.push_back(label + ": " + op);
  if (stats.kernel_count != ExpectedKernels(*module.entry())) {
    return label + ": " + std::to_string(stats.kernel_count) + " kernels, expected " +
           std::to_string(ExpectedKernels(*module.entry()));
  }
  if (stats.jit_fallback_count != 0) {
    return label + ": " + std::to_string(stats.jit_fallback_count) +
           " kernels failed to compile: " + stats.first_jit_failure;
  }
  absl::StatusOr<std::vector<Literal>> actual = (*executable)->Run(inputs);
  if (!actual.ok()) return label + ": run: " + actual.status().ToString();
  // The interpreter convolves in double; the backend in float32 GEMMs, as
  // XLA:CPU does. Gradients summing hundreds of terms of magnitude ~1e3 that
  // cancel (flax_conv*_grad in data/dataset) then differ by float32 rounding
  // of the terms, ~1e-6 of the output's scale: for modules with convolutions
  // each output is compared with atol 1e-5 * its largest magnitude.
  bool convolves = convolutions_lowered;
  for (const auto& inst : module.entry()->instructions()) {
    convolves |= inst->opcode() == Opcode::kConvolution ||
                 (inst->IsFusion() &&
                  inst->fused_computation()->root()->opcode() == Opcode::kConvolution);
  }
  EquivalenceOptions base;
  if (HasF32Exp(module)) base.rtol = base.atol = 1e-3;
  EquivalenceReport report;
  if (!convolves) report = CompareLiterals(*expected, *actual, base);
  if (convolves && expected->size() != actual->size()) return label + ": output count differs";
  for (size_t i = 0; convolves && i < expected->size() && report.equivalent; ++i) {
    const Literal& e = (*expected)[i];
    double scale = 0;
    if (IsFloat(e.shape().element_type())) {
      for (int64_t k = 0; k < e.element_count(); ++k) {
        if (std::isfinite(e.GetAsDouble(k))) scale = std::max(scale, std::abs(e.GetAsDouble(k)));
      }
    }
    EquivalenceOptions tolerance = base;
    tolerance.atol = std::max(tolerance.atol, 1e-5 * scale);
    std::vector<Literal> want, got;
    want.push_back(e);
    got.push_back((*actual)[i]);
    report = CompareLiterals(want, got, tolerance);
    if (!report.equivalent) report.message = "output " + std::to_string(i) + ": " + report.message;
  }
  if (!report.equivalent) return label + ": " + report.message;
  return "";
}

// `interpreted_out`, when given, receives what ran on the interpreter.
void CheckFiles(const std::vector<std::filesystem::path>& files, bool with_pipeline,
                std::vector<std::string>* interpreted_out = nullptr) {
  std::vector<std::string> failures;
  int64_t jit = 0, checked = 0;
  std::vector<std::string> interpreted;
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text.str());
    ASSERT_TRUE(module.ok()) << path << ": " << module.status();
    const std::string name = path.stem().string();
    std::string failure = Check(**module, name + " (unfused)", jit, interpreted);
    if (!failure.empty()) failures.push_back(failure);
    ++checked;
    if (!with_pipeline) continue;
    absl::Status piped = DefaultPipeline().Run(**module).status();
    ASSERT_TRUE(piped.ok()) << name << ": " << piped;
    failure = Check(**module, name + " (default pipeline)", jit, interpreted);
    if (!failure.empty()) failures.push_back(failure);
    ++checked;
  }
  std::cout << checked << " executables checked: " << jit << " LLVM kernels, "
            << interpreted.size() << " interpreter host ops\n";
  for (const std::string& op : interpreted) std::cout << "  on the interpreter: " << op << "\n";
  for (const std::string& f : failures) ADD_FAILURE() << f;
  if (interpreted_out != nullptr) *interpreted_out = interpreted;
}

TEST(CpuExecutableCorpusTest, SmallTwinsMatchTheInterpreter) {
  const std::vector<std::filesystem::path> files = HloFiles("data/corpus/small/hlo");
  ASSERT_FALSE(files.empty());
  CheckFiles(files, /*with_pipeline=*/true);
}

TEST(CpuExecutableCorpusTest, ModulesLoweredForTheGpuMatchTheInterpreter) {
  // The GPU target lowers convolutions, select-and-scatters, topks and
  // scans to fusions, reductions, dots, scatters and scans (LowerForGpu); the fusions'
  // elemental code is the CPU target's too, so every module with one of
  // them, lowered after the default pipeline, is checked here, where there
  // is no GPU.
  std::vector<std::filesystem::path> files = HloFiles("data/corpus/small/hlo");
  for (const auto& path : HloFiles("data/dataset/hlo")) files.push_back(path);
  std::vector<std::string> failures, interpreted;
  int64_t jit = 0, lowered_count = 0;
  for (const std::filesystem::path& path : files) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("convolution(") == std::string::npos &&
        text.str().find(" topk(") == std::string::npos &&
        text.str().find(" scan(") == std::string::npos) {
      continue;  // cnn_mnist, the one with a select-and-scatter, has convolutions
    }
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text.str());
    ASSERT_TRUE(module.ok()) << path << ": " << module.status();
    ASSERT_TRUE(DefaultPipeline().Run(**module).ok()) << path;
    absl::StatusOr<std::unique_ptr<Module>> lowered = LowerForGpu(**module);
    ASSERT_TRUE(lowered.ok()) << path << ": " << lowered.status();
    ASSERT_NE(*lowered, nullptr) << path << ": nothing lowered";
    ++lowered_count;
    const std::string failure =
        Check(**lowered, path.stem().string() + " (lowered for the GPU)", jit, interpreted,
              /*convolutions_lowered=*/true);
    if (!failure.empty()) failures.push_back(failure);
  }
  EXPECT_EQ(lowered_count, 14);
  for (const std::string& op : interpreted) ADD_FAILURE() << "on the interpreter: " << op;
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(CpuExecutableCorpusTest, FullCnnMnistMatchesTheInterpreterWithoutIt) {
  // The full-size module (batch 128) whose max-pool gradient, a
  // select-and-scatter, ran on the interpreter before it had a kernel.
  const std::filesystem::path path = std::filesystem::path(HLOGYM_SOURCE_DIR) /
                                     "data/corpus/hlo/cnn_mnist_train_128.hlo";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  std::vector<std::string> interpreted;
  CheckFiles({path}, /*with_pipeline=*/true, &interpreted);
  EXPECT_TRUE(interpreted.empty()) << interpreted.front();
}

TEST(CpuExecutableCorpusTest, ModulesCompiledAtOnceOnOneCompilerMatchTheInterpreter) {
  // Four threads compile the small twins (after the default pipeline) on one
  // fresh compiler at the same time: many kernels are built concurrently,
  // some twice at once; each executable must still compute what the
  // interpreter does.
  std::vector<std::unique_ptr<Module>> modules;
  for (const std::filesystem::path& path : HloFiles("data/corpus/small/hlo")) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text.str());
    ASSERT_TRUE(module.ok()) << path;
    ASSERT_TRUE(DefaultPipeline().Run(**module).ok()) << path;
    modules.push_back(*std::move(module));
  }
  ASSERT_FALSE(modules.empty());
  absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> compiler = CpuKernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  std::vector<absl::StatusOr<std::unique_ptr<CpuExecutable>>> executables(modules.size());
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Every thread compiles every module, from a different start.
      for (size_t k = 0; k < modules.size(); ++k) {
        const size_t i = (k + t * modules.size() / kThreads) % modules.size();
        absl::StatusOr<std::unique_ptr<CpuExecutable>> e =
            CpuExecutable::Compile(*modules[i], **compiler);
        if (t == 0) executables[i] = std::move(e);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < modules.size(); ++i) {
    ASSERT_TRUE(executables[i].ok()) << modules[i]->name() << ": " << executables[i].status();
    EXPECT_EQ((*executables[i])->stats().jit_fallback_count, 0) << modules[i]->name();
    const std::vector<Literal> inputs = FormulaInputs(*modules[i]);
    absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(*modules[i], inputs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    absl::StatusOr<std::vector<Literal>> actual = (*executables[i])->Run(inputs);
    ASSERT_TRUE(actual.ok()) << modules[i]->name() << ": " << actual.status();
    const EquivalenceReport report = CompareLiterals(*expected, *actual);
    EXPECT_TRUE(report.equivalent) << modules[i]->name() << ": " << report.message;
  }
}

TEST(CpuExecutableCorpusTest, DatasetMatchesTheInterpreter) {
  std::vector<std::filesystem::path> files = HloFiles("data/dataset/hlo");
  ASSERT_FALSE(files.empty());
  if (!LongTests()) {
    // Every sixteenth module.
    std::vector<std::filesystem::path> sample;
    for (size_t i = 0; i < files.size(); i += 16) sample.push_back(files[i]);
    files = sample;
  }
  CheckFiles(files, /*with_pipeline=*/true);
}

}  // namespace
}  // namespace hlogym

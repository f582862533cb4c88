// Every module of the bundled corpus, its small twins, the dataset and the
// XLA:GPU-optimized dumps parses, with the structure each file states.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

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

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lines that define an instruction: "  [ROOT ]name = ...".
int64_t CountInstructionLines(const std::string& text) {
  int64_t count = 0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t i = line.find_first_not_of(' ');
    if (i == std::string::npos || i == 0) continue;  // instructions are indented
    if (line.compare(i, 5, "ROOT ") == 0) i += 5;
    const size_t space = line.find(' ', i);
    if (space != std::string::npos && line.compare(space, 3, " = ") == 0) ++count;
  }
  return count;
}

// Invariants every parsed module must satisfy, whatever its style.
void CheckStructure(const Module& module, const std::string& text, const std::string& where) {
  ASSERT_NE(module.entry(), nullptr) << where;
  std::set<const Computation*> defined;
  int64_t sugared = 0;  // instructions the parser adds for async sugar
  for (const auto& computation : module.computations()) {
    ASSERT_NE(computation->root(), nullptr) << where << " " << computation->name();
    for (const auto& inst : computation->instructions()) {
      EXPECT_EQ(inst->parent(), computation.get()) << where;
      EXPECT_FALSE(inst->name().empty()) << where;
      for (const Instruction* operand : inst->operands()) {
        EXPECT_EQ(operand->parent(), computation.get()) << where << " " << inst->name();
      }
      for (const Computation* callee : inst->called_computations()) {
        ASSERT_NE(callee, nullptr) << where << " " << inst->name();
        EXPECT_TRUE(defined.count(callee))
            << where << ": " << inst->name() << " calls a later computation";
      }
      if (inst->opcode() == Opcode::kFusion) {
        EXPECT_EQ(inst->fused_computation()->fusion_instruction(), inst.get()) << where;
      }
      if (inst->opcode() == Opcode::kAsyncStart &&
          inst->called_computations()[0]->name().find(".async_wrapped") != std::string::npos) {
        sugared += inst->called_computations()[0]->instruction_count();
      }
    }
    for (int64_t i = 0; i < computation->parameter_count(); ++i) {
      ASSERT_NE(computation->parameter(i), nullptr) << where;
      EXPECT_EQ(computation->parameter(i)->parameter_number(), i) << where;
    }
    defined.insert(computation.get());
  }
  EXPECT_EQ(module.instruction_count() - sugared, CountInstructionLines(text)) << where;
}

class CorpusParseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusParseTest, EveryModuleParses) {
  const std::vector<std::filesystem::path> files = HloFiles(GetParam());
  ASSERT_FALSE(files.empty()) << "no .hlo files under " << GetParam();
  for (const auto& path : files) {
    const std::string text = ReadFile(path);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
    ASSERT_TRUE(module.ok()) << path << ": " << module.status();
    CheckStructure(**module, text, path.string());
  }
}

INSTANTIATE_TEST_SUITE_P(Data, CorpusParseTest,
                         ::testing::Values("data/corpus/hlo", "data/corpus/small/hlo",
                                           "data/dataset/hlo", "data/corpus/xla_gpu",
                                           "tests/data/hlo"));

}  // namespace
}  // namespace hlogym

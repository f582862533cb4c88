// Malformed input never crashes the parser: every corpus file cut at many
// offsets, and with random bytes flipped, gives a module or an error status
// with a position. (The fuzzer, core/text/parser_fuzzer.cc, goes further.)
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

std::vector<std::string> SeedTexts() {
  std::vector<std::string> texts;
  for (const char* dir : {"data/corpus/hlo", "data/corpus/small/hlo", "data/dataset/hlo",
                          "data/corpus/xla_gpu", "tests/data/hlo"}) {
    const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
    if (!std::filesystem::exists(root)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) texts.push_back(testing_util::ReadFile(path));
  }
  return texts;
}

bool EndsWithClosingBrace(std::string_view text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  return end != std::string_view::npos && text[end] == '}';
}

bool IsPositionedError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument &&
         std::string(status.message()).rfind("line ", 0) == 0;
}

TEST(ParserRobustnessTest, TruncatedFilesGiveErrors) {
  const std::vector<std::string> texts = SeedTexts();
  ASSERT_FALSE(texts.empty());
  int64_t parses = 0;
  for (const std::string& text : texts) {
    // 24 cuts per file, spread over the whole file, plus the first bytes.
    std::vector<size_t> cuts = {0, 1, 2, 7, 11, 12, 13};
    for (int i = 1; i < 24; ++i) cuts.push_back(text.size() * i / 24);
    for (size_t cut : cuts) {
      const std::string_view prefix = std::string_view(text).substr(0, cut);
      auto module = ParseModule(prefix);
      ++parses;
      if (module.ok()) {
        // Only a cut right after a whole computation can be a valid module.
        EXPECT_TRUE(EndsWithClosingBrace(prefix)) << "cut at " << cut;
      } else {
        EXPECT_TRUE(IsPositionedError(module.status())) << module.status();
      }
    }
  }
  EXPECT_GT(parses, 1000);
}

TEST(ParserRobustnessTest, RandomByteFlipsNeverCrash) {
  const std::vector<std::string> texts = SeedTexts();
  ASSERT_FALSE(texts.empty());
  std::mt19937 rng(1234);
  int64_t errors = 0;
  for (const std::string& original : texts) {
    if (original.size() > 200000) continue;
    for (int round = 0; round < 8; ++round) {
      std::string text = original;
      const int flips = 1 + round;
      for (int f = 0; f < flips; ++f) {
        const size_t pos = rng() % text.size();
        switch (rng() % 4) {
          case 0:
            text[pos] = static_cast<char>(rng());
            break;  // any byte
          case 1:
            text[pos] = "{}()[],=:%\"'/*-<>?.x_"[rng() % 21];
            break;  // syntax
          case 2:
            text.erase(pos, 1 + rng() % 8);
            break;
          default:
            text.insert(pos, text.substr(rng() % text.size(), 1 + rng() % 16));
        }
      }
      auto module = ParseModule(text);
      if (!module.ok()) {
        ++errors;
        EXPECT_TRUE(IsPositionedError(module.status())) << module.status();
      }
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(ParserRobustnessTest, PathologicalInputs) {
  const std::vector<std::string> inputs = {
      std::string(100000, '('),
      std::string(100000, '{'),
      "HloModule m\nENTRY e {\n  ROOT c = f32[2]{0} constant(" + std::string(50000, '{'),
      "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), metadata=" + std::string(50000, '['),
      "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(999999999999)\n}",
      "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(-1)\n}",
      "HloModule m\nENTRY e {\n  ROOT x = f32[" + std::string(100, '1') + "] parameter(0)\n}",
      "HloModule m\nENTRY e {\n  ROOT x = f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
      "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1] "
      "parameter(0)\n}",
      "HloModule m\nENTRY e {\n  ROOT c = u8[3]{0} constant({1, 2, 3e9})\n}",
      "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(nan(0x" + std::string(40, 'f') + "))\n}",
      "HloModule m\nENTRY e {\n  x = f32[8]{0} parameter(0)\n  ROOT d = f32[8]{0} "
      "fusion-done(x)\n}",
      "HloModule m\nENTRY e {\n  x = f32[8]{0} parameter(0)\n  ROOT d = f32[8]{0} "
      "fusion-start(x), kind=kLoop\n}",
      std::string("HloModule m\0\0\0", 14),
      "\xef\xbb\xbfHloModule m",
  };
  for (const std::string& text : inputs) {
    auto module = ParseModule(text);
    ASSERT_FALSE(module.ok()) << text.substr(0, 80);
    EXPECT_TRUE(IsPositionedError(module.status())) << module.status();
  }
}

TEST(ParserRobustnessTest, DeeplyNestedOperandsAndComputationsAreBounded) {
  // negate(negate(...(x)...)) and to_apply={ ... to_apply={ ... } ... }.
  auto nested_operands = [](int depth) {
    std::string text = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = ";
    for (int i = 0; i < depth; ++i) text += "f32[] negate(";
    text += "x";
    for (int i = 0; i < depth; ++i) text += ")";
    return text + "\n}";
  };
  EXPECT_TRUE(ParseModule(nested_operands(200)).ok());
  auto deep = ParseModule(nested_operands(400));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nesting deeper than 256 levels"), std::string::npos)
      << deep.status();

  auto nested_computations = [](int depth) {
    std::string text = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n";
    for (int i = 0; i < depth; ++i)
      text += "  ROOT c = f32[] call(x), to_apply={\n  x = f32[] parameter(0)\n";
    text += "  ROOT n = f32[] negate(x)\n";
    for (int i = 0; i < depth; ++i) text += "}\n";
    return text + "}";
  };
  EXPECT_TRUE(ParseModule(nested_computations(60)).ok());
  auto deep_calls = ParseModule(nested_computations(300));
  ASSERT_FALSE(deep_calls.ok());
  EXPECT_NE(deep_calls.status().message().find("nesting deeper than 256 levels"), std::string::npos)
      << deep_calls.status();
}

}  // namespace
}  // namespace hlogym

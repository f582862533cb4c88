// A short run of the parser fuzzer in the normal suite: the fuzzer's own
// entry point (core/text/parser_fuzzer.cc, linked in here without libFuzzer)
// on every seed file and on deterministic mutations of them: byte flips,
// truncations, splices of two files and duplicated spans. The entry point
// traps on a crash or on a verified module that does not print and parse
// back to the same fingerprint, so reaching the end is the assertion.
// The long run needs clang: see the comment at the top of parser_fuzzer.cc.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace hlogym {
namespace {

int FuzzOne(const std::string& text) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

std::vector<std::string> Seeds() {
  std::vector<std::string> texts;
  for (const char* dir : {"data/corpus/small/hlo", "data/dataset/hlo", "tests/data/hlo"}) {
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

std::string Mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string text = seeds[pick(seeds.size())];
  if (text.empty()) return text;
  switch (pick(4)) {
    case 0:  // flip a few bytes, to printable and unprintable values
      for (int i = 0; i < 4; ++i) text[pick(text.size())] = static_cast<char>(pick(256));
      break;
    case 1:  // cut
      text.resize(pick(text.size()));
      break;
    case 2: {  // the head of one file, the tail of another
      const std::string& other = seeds[pick(seeds.size())];
      text = text.substr(0, pick(text.size())) + other.substr(pick(other.size() + 1) % (other.size() + 1));
      break;
    }
    default: {  // a span repeated in place
      const size_t at = pick(text.size());
      const size_t len = std::min<size_t>(pick(200) + 1, text.size() - at);
      text.insert(at, text.substr(at, len));
      break;
    }
  }
  return text;
}

TEST(ParserFuzzerReplayTest, SeedsAndMutationsNeitherCrashNorBreakRoundTrips) {
  const std::vector<std::string> seeds = Seeds();
  ASSERT_GT(seeds.size(), 100u);
  for (const std::string& seed : seeds) EXPECT_EQ(FuzzOne(seed), 0);
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 3000; ++i) EXPECT_EQ(FuzzOne(Mutate(seeds, rng)), 0);
}

}  // namespace
}  // namespace hlogym

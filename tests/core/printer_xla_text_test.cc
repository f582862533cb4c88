// JAX's text (XLA's short-parsable style) is what the printer writes: every
// bundled JAX module prints back byte for byte, constants included, so a
// module that came from JAX and went through parse -> print is unchanged.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::ReadFile;

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

class JaxTextTest : public ::testing::TestWithParam<const char*> {};

TEST_P(JaxTextTest, EveryModulePrintsAsWritten) {
  const auto files = HloFiles(GetParam());
  ASSERT_FALSE(files.empty()) << "no .hlo files under " << GetParam();
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string text = ReadFile(path);
    HLOGYM_PARSE_OR_FAIL(m, text);
    const std::string printed = PrintModule(*m);
    if (printed == text) continue;
    // Name the first differing line rather than dumping both modules.
    const std::vector<std::string> want = absl::StrSplit(text, '\n');
    const std::vector<std::string> got = absl::StrSplit(printed, '\n');
    for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
      const std::string w = i < want.size() ? want[i] : "<end of file>";
      const std::string g = i < got.size() ? got[i] : "<end of text>";
      if (w != g) {
        ADD_FAILURE() << "line " << i + 1 << " differs:\n  file:    " << w << "\n  printed: " << g;
        break;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(JaxModuleSets, JaxTextTest,
                         ::testing::Values("data/corpus/hlo", "data/corpus/small/hlo",
                                           "data/dataset/hlo"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

}  // namespace
}  // namespace hlogym

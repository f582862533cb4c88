// Datasets: the bundled data root lists the 151 training modules (corpus and
// dataset, not the small twins or XLA's outputs), sorted, with a split that
// depends only on each file's name.
#include "envs/dataset.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using ::testing::HasSubstr;

const std::string kData = std::string(HLOGYM_SOURCE_DIR) + "/data";

TEST(DatasetTest, BundledDataHas151SortedModules) {
  absl::StatusOr<std::vector<std::string>> files = DatasetFiles(kData, DatasetSplit::kAll);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 151u);
  EXPECT_TRUE(std::is_sorted(files->begin(), files->end()));
  for (const std::string& f : *files) {
    EXPECT_TRUE(f.find("/corpus/hlo/") != std::string::npos ||
                f.find("/dataset/hlo/") != std::string::npos)
        << f;
  }
}

TEST(DatasetTest, SplitPartitionsAll) {
  std::vector<std::string> all = *DatasetFiles(kData, DatasetSplit::kAll);
  std::vector<std::string> train = *DatasetFiles(kData, DatasetSplit::kTrain);
  std::vector<std::string> test = *DatasetFiles(kData, DatasetSplit::kTest);
  EXPECT_EQ(train.size() + test.size(), all.size());
  // About a fifth is held out; pinned, so a change to the split is noticed.
  EXPECT_EQ(test.size(), 26u);
  std::vector<std::string> merged;
  std::merge(train.begin(), train.end(), test.begin(), test.end(), std::back_inserter(merged));
  EXPECT_EQ(merged, all);
  for (const std::string& f : test) EXPECT_TRUE(InTestSplit(f));
  for (const std::string& f : train) EXPECT_FALSE(InTestSplit(f));
}

TEST(DatasetTest, SplitDependsOnTheStemOnly) {
  // FNV-1a 64 (the standard one, so other languages can rebuild the split):
  // "a" hashes to 0xaf63dc4c8601ec8c, 1 mod 5; "f" to 0xaf63db4c8601ead9, 0 mod 5.
  EXPECT_FALSE(InTestSplit("a.hlo"));
  EXPECT_TRUE(InTestSplit("f.hlo"));
  EXPECT_TRUE(InTestSplit("dir.v2/f.hlo"));
  EXPECT_EQ(InTestSplit("/x/y/softmax.hlo"), InTestSplit("softmax.hlo"));
}

TEST(DatasetTest, AnyDirectoryIsListedRecursively) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "hlogym_ds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "b.hlo") << "x";
  std::ofstream(dir / "sub" / "a.hlo") << "x";
  std::ofstream(dir / "notes.txt") << "x";
  absl::StatusOr<std::vector<std::string>> files = DatasetFiles(dir.string(), DatasetSplit::kAll);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir / "b.hlo").string(),
                                               (dir / "sub" / "a.hlo").string()}));
  std::filesystem::remove_all(dir);
}

TEST(DatasetTest, MissingDirectoryNamesThePath) {
  absl::StatusOr<std::vector<std::string>> files =
      DatasetFiles("/nonexistent/hlogym-data", DatasetSplit::kAll);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(files.status().message(), HasSubstr("/nonexistent/hlogym-data"));
}

TEST(DatasetTest, SplitNames) {
  EXPECT_EQ(*DatasetSplitFromName("train"), DatasetSplit::kTrain);
  EXPECT_EQ(*DatasetSplitFromName("test"), DatasetSplit::kTest);
  EXPECT_EQ(*DatasetSplitFromName("all"), DatasetSplit::kAll);
  EXPECT_EQ(DatasetSplitFromName("valid").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hlogym

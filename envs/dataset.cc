#include "envs/dataset.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace hlogym {

namespace fs = std::filesystem;

absl::StatusOr<DatasetSplit> DatasetSplitFromName(const std::string& name) {
  if (name == "all") return DatasetSplit::kAll;
  if (name == "train") return DatasetSplit::kTrain;
  if (name == "test") return DatasetSplit::kTest;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown split `", name, "`; known: all, train, test"));
}

bool InTestSplit(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  uint64_t hash = 14695981039346656037ull;  // the FNV-1a 64 offset basis
  for (unsigned char c : stem) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash % 5 == 0;
}

absl::StatusOr<std::vector<std::string>> DatasetFiles(const std::string& directory,
                                                      DatasetSplit split) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return absl::NotFoundError(absl::StrCat("dataset directory not found: `", directory, "`"));
  }
  std::vector<fs::path> roots;
  // The bundled data root holds training modules in two places only.
  if (fs::is_directory(fs::path(directory) / "corpus" / "hlo") &&
      fs::is_directory(fs::path(directory) / "dataset" / "hlo")) {
    roots = {fs::path(directory) / "corpus" / "hlo", fs::path(directory) / "dataset" / "hlo"};
  } else {
    roots = {fs::path(directory)};
  }
  std::vector<std::string> files;
  for (const fs::path& root : roots) {
    for (auto it = fs::recursive_directory_iterator(root, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (!it->is_regular_file() || it->path().extension() != ".hlo") continue;
      const std::string path = it->path().string();
      const bool test = InTestSplit(path);
      if (split == DatasetSplit::kAll || (split == DatasetSplit::kTest) == test) {
        files.push_back(path);
      }
    }
    if (error) {
      return absl::InternalError(absl::StrCat("cannot list `", root.string(), "`: ", error.message()));
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat("no .hlo files under `", directory, "`"));
  }
  return files;
}

}  // namespace hlogym

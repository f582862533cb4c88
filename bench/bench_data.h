// Where the benchmarks find the bundled HLO files: $HLOGYM_SOURCE_DIR, else
// the source directory the build defines, else the working directory.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hlogym::bench {

inline std::filesystem::path SourceDir() {
  if (const char* env = std::getenv("HLOGYM_SOURCE_DIR")) return env;
#ifdef HLOGYM_SOURCE_DIR
  return HLOGYM_SOURCE_DIR;
#else
  return ".";
#endif
}

// The .hlo files of `dir` (relative to SourceDir(), or absolute), sorted;
// empty when the directory does not exist.
inline std::vector<std::filesystem::path> HloPaths(const std::filesystem::path& dir) {
  const std::filesystem::path root = dir.is_absolute() ? dir : SourceDir() / dir;
  std::vector<std::filesystem::path> paths;
  if (!std::filesystem::exists(root)) return paths;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() == ".hlo") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hlogym::bench

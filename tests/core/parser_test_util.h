// Helpers shared by the parser tests: parse-or-fail, lookup by name, files.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "core/ir/module.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

// Parses `text` into `var` (a std::unique_ptr<Module>) or fails the test.
#define HLOGYM_PARSE_OR_FAIL(var, text)            \
  auto var##_or = ::hlogym::ParseModule(text);     \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status(); \
  std::unique_ptr<::hlogym::Module> var = std::move(var##_or).value()

namespace hlogym::testing_util {

// The instruction called `name` in any computation, or nullptr.
inline Instruction* FindInstruction(const Module& module, std::string_view name) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->name() == name) return inst.get();
    }
  }
  return nullptr;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A file under the source tree, e.g. "tests/data/hlo/while_loop.hlo".
inline std::string ReadSourceFile(std::string_view relative) {
  return ReadFile(std::filesystem::path(HLOGYM_SOURCE_DIR) / std::string(relative));
}

// The raw attribute's value, or "<absent>".
inline std::string RawValue(const Instruction& inst, std::string_view name) {
  const std::string* value = inst.FindRawAttribute(name);
  return value ? *value : "<absent>";
}

}  // namespace hlogym::testing_util

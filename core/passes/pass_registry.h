// The registry of built-in passes: the one place that lists them, so that
// configs, the CLI and Python can make a pass from its spec.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/pass_options.h"

namespace hlogym {

struct PassInfo {
  std::string name;
  std::string description;  // one line, for `hlogym inspect` and docs
  std::function<absl::StatusOr<std::unique_ptr<Pass>>(PassOptions&)> create;
};

// Every registered pass (built-in and added), sorted by name.
std::vector<PassInfo> RegisteredPasses();

// Adds a pass of the user's own (a C++ Pass subclass) under a new name.
absl::Status RegisterPass(PassInfo info);

// Makes a pass from a spec: "dce", "fusion(mode=general)". Unknown names and
// options give an error listing what exists.
absl::StatusOr<std::unique_ptr<Pass>> CreatePass(std::string_view spec);

}  // namespace hlogym

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

// Every built-in pass, sorted by name.
const std::vector<PassInfo>& RegisteredPasses();

// Makes a pass from a spec: "dce", "fusion(mode=general)". Unknown names and
// options give an error listing what exists.
absl::StatusOr<std::unique_ptr<Pass>> CreatePass(std::string_view spec);

}  // namespace hlogym

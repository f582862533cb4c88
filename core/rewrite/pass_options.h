// PassOptions: the `key=value` options of a pass spec such as
// "fusion(mode=general, may_duplicate=true)", and of the other specs written
// the same way (agents, "search(budget=8)"; runtime sources, "cpu(min_runs=3)").
// Each reader takes the keys it knows; any key left unread is an error, so
// typos never pass silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hlogym {

class PassOptions {
 public:
  // Parses the text between the parentheses: "a=1, b=true" (may be empty).
  // `kind` names what the options belong to in errors ("pass", "agent", ...).
  static absl::StatusOr<PassOptions> Parse(std::string_view text,
                                           std::string_view kind = "pass");

  absl::StatusOr<bool> GetBool(std::string_view key, bool default_value);
  absl::StatusOr<int64_t> GetInt(std::string_view key, int64_t default_value);
  absl::StatusOr<double> GetDouble(std::string_view key, double default_value);
  // A value from a fixed set, e.g. mode in {"xla", "general"}.
  absl::StatusOr<std::string> GetChoice(std::string_view key,
                                        std::string_view default_value,
                                        const std::vector<std::string>& allowed);
  // Fails naming the first key no Get* call read.
  absl::Status CheckAllUsed(std::string_view name) const;

 private:
  const std::string* Find(std::string_view key);
  absl::Status BadValue(std::string_view key, std::string_view expected) const;

  std::string kind_ = "pass";
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<bool> used_;
};

}  // namespace hlogym

#include "core/rewrite/pass_options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hlogym {

absl::StatusOr<PassOptions> PassOptions::Parse(std::string_view text, std::string_view kind) {
  PassOptions options;
  options.kind_ = std::string(kind);
  absl::string_view all(text.data(), text.size());
  if (absl::StripAsciiWhitespace(all).empty()) return options;
  for (absl::string_view item : absl::StrSplit(all, ',')) {
    item = absl::StripAsciiWhitespace(item);
    size_t eq = item.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.kind_, " option `", item, "` is not of the form key=value"));
    }
    std::string key(absl::StripAsciiWhitespace(item.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(item.substr(eq + 1)));
    for (const auto& [k, v] : options.values_) {
      if (k == key) {
        return absl::InvalidArgumentError(
            absl::StrCat(options.kind_, " option `", key, "` is given twice"));
      }
    }
    options.values_.emplace_back(std::move(key), std::move(value));
    options.used_.push_back(false);
  }
  return options;
}

const std::string* PassOptions::Find(std::string_view key) {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].first == key) {
      used_[i] = true;
      return &values_[i].second;
    }
  }
  return nullptr;
}

absl::StatusOr<bool> PassOptions::GetBool(std::string_view key, bool default_value) {
  const std::string* value = Find(key);
  if (value == nullptr) return default_value;
  if (*value == "true" || *value == "1") return true;
  if (*value == "false" || *value == "0") return false;
  return BadValue(key, "true or false");
}

absl::StatusOr<int64_t> PassOptions::GetInt(std::string_view key, int64_t default_value) {
  const std::string* value = Find(key);
  if (value == nullptr) return default_value;
  int64_t result;
  if (!absl::SimpleAtoi(*value, &result)) return BadValue(key, "an integer");
  return result;
}

absl::StatusOr<double> PassOptions::GetDouble(std::string_view key, double default_value) {
  const std::string* value = Find(key);
  if (value == nullptr) return default_value;
  double result;
  if (!absl::SimpleAtod(*value, &result)) return BadValue(key, "a number");
  return result;
}

absl::Status PassOptions::BadValue(std::string_view key, std::string_view expected) const {
  std::string got;
  for (const auto& [k, v] : values_) {
    if (k == key) got = v;
  }
  return absl::InvalidArgumentError(absl::StrCat(kind_, " option `", std::string(key),
                                                 "` must be ", std::string(expected), ", got `",
                                                 got, "`"));
}

absl::StatusOr<std::string> PassOptions::GetChoice(
    std::string_view key, std::string_view default_value,
    const std::vector<std::string>& allowed) {
  const std::string* value = Find(key);
  if (value == nullptr) return std::string(default_value);
  for (const std::string& a : allowed) {
    if (*value == a) return *value;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      kind_, " option `", std::string(key), "` must be one of {",
      absl::StrJoin(allowed, ", "), "}, got `", *value, "`"));
}

absl::Status PassOptions::CheckAllUsed(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!used_[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          kind_, " `", std::string(name), "` has no option `", values_[i].first, "`"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlogym

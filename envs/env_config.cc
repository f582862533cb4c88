#include "envs/env_config.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace hlogym {
namespace {

absl::Status KeyError(const std::string& source, const std::string& key,
                      const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": key `", key, "` ", what));
}

absl::Status ReadStringList(const YAML::Node& node, const std::string& source,
                            const std::string& key, std::vector<std::string>* out) {
  if (!node.IsSequence()) return KeyError(source, key, "must be a list of pass specs");
  out->clear();
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) return KeyError(source, key, "must be a list of strings");
    out->push_back(item.as<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ReadBool(const YAML::Node& node, const std::string& source, const std::string& key,
                      bool* out) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    return KeyError(source, key, "must be true or false");
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadPositive(const YAML::Node& node, const std::string& source,
                          const std::string& key, int64_t* out) {
  int64_t value = 0;
  if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value) || value <= 0) {
    return KeyError(source, key, "must be a positive integer");
  }
  *out = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EnvConfig> ParseEnvConfig(const std::string& yaml_text,
                                         const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": invalid YAML: ", e.what()));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": an env config must be a mapping"));
  }
  EnvConfig config;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    const YAML::Node& value = item.second;
    absl::Status status;
    if (key == "id" || key == "reward" || key == "dataset") {
      if (!value.IsScalar()) {
        status = KeyError(source, key, "must be a string");
      } else {
        std::string text = value.as<std::string>();
        (key == "id" ? config.id : key == "reward" ? config.reward : config.dataset) = text;
      }
    } else if (key == "pre_passes") {
      status = ReadStringList(value, source, key, &config.pre_passes);
    } else if (key == "dry_passes") {
      status = ReadStringList(value, source, key, &config.dry_passes);
    } else if (key == "dry_stages") {
      if (!value.IsSequence()) status = KeyError(source, key, "must be a list of lists of pass specs");
      config.dry_stages.clear();
      for (size_t i = 0; status.ok() && i < value.size(); ++i) {
        config.dry_stages.emplace_back();
        status = ReadStringList(value[i], source, absl::StrCat(key, "[", i, "]"),
                                &config.dry_stages.back());
      }
    } else if (key == "post_passes") {
      status = ReadStringList(value, source, key, &config.post_passes);
    } else if (key == "max_steps") {
      status = ReadPositive(value, source, key, &config.max_steps);
    } else if (key == "max_nodes") {
      status = ReadPositive(value, source, key, &config.max_nodes);
    } else if (key == "max_edges") {
      status = ReadPositive(value, source, key, &config.max_edges);
    } else if (key == "max_alternatives") {
      status = ReadPositive(value, source, key, &config.max_alternatives);
    } else if (key == "max_choices") {
      status = ReadPositive(value, source, key, &config.max_choices);
    } else if (key == "observe_candidate_bodies") {
      status = ReadBool(value, source, key, &config.observe_candidate_bodies);
    } else {
      status = absl::InvalidArgumentError(absl::StrCat(
          source, ": unknown key `", key, "`; known keys: id, pre_passes, dry_passes, "
          "dry_stages, post_passes, max_steps, max_nodes, max_edges, max_alternatives, max_choices, "
          "observe_candidate_bodies, reward, dataset"));
    }
    if (!status.ok()) return status;
  }
  if (config.id.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": key `id` is required"));
  }
  if (!config.dry_passes.empty() && !config.dry_stages.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": give `dry_passes` or `dry_stages`, not both"));
  }
  return config;
}

absl::StatusOr<EnvConfig> LoadEnvConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read env config `", path, "`"));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseEnvConfig(text.str(), path);
}

}  // namespace hlogym

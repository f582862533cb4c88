// A small JSON reader for the oracle files (objects, arrays, numbers,
// strings, true/false/null): enough to read data/*/oracle/*.json in tests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hlogym::testing {

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  const Json& operator[](const std::string& key) const { return object.at(key); }
  bool has(const std::string& key) const { return object.count(key) > 0; }
};

// Parses `text`; throws std::runtime_error on malformed input.
Json ParseJson(const std::string& text);
Json ReadJsonFile(const std::string& path);

}  // namespace hlogym::testing

#include "tests/core/oracle_json.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hlogym::testing {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  Json Value() {
    Skip();
    if (i_ >= s_.size()) throw std::runtime_error("json: unexpected end");
    const char c = s_[i_];
    Json j;
    if (c == '{') {
      j.kind = Json::kObject;
      ++i_;
      Skip();
      if (Peek('}')) return ++i_, j;
      while (true) {
        Skip();
        std::string key = String();
        Skip();
        Expect(':');
        j.object[key] = Value();
        Skip();
        if (Peek(',')) { ++i_; continue; }
        Expect('}');
        return j;
      }
    }
    if (c == '[') {
      j.kind = Json::kArray;
      ++i_;
      Skip();
      if (Peek(']')) return ++i_, j;
      while (true) {
        j.array.push_back(Value());
        Skip();
        if (Peek(',')) { ++i_; continue; }
        Expect(']');
        return j;
      }
    }
    if (c == '"') {
      j.kind = Json::kString;
      j.string = String();
      return j;
    }
    if (Word("null")) return j;
    if (Word("true")) { j.kind = Json::kBool; j.boolean = true; return j; }
    if (Word("false")) { j.kind = Json::kBool; return j; }
    if (Word("NaN")) { j.kind = Json::kNumber; j.number = std::nan(""); return j; }
    if (Word("Infinity")) { j.kind = Json::kNumber; j.number = HUGE_VAL; return j; }
    if (Word("-Infinity")) { j.kind = Json::kNumber; j.number = -HUGE_VAL; return j; }
    char* end = nullptr;
    j.kind = Json::kNumber;
    j.number = std::strtod(s_.c_str() + i_, &end);
    if (end == s_.c_str() + i_) throw std::runtime_error("json: bad value");
    i_ = end - s_.c_str();
    return j;
  }

 private:
  void Skip() { while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_; }
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void Expect(char c) {
    if (!Peek(c)) throw std::runtime_error(std::string("json: expected ") + c);
    ++i_;
  }
  bool Word(const char* w) {
    const std::string word(w);
    if (s_.compare(i_, word.size(), word) == 0) {
      i_ += word.size();
      return true;
    }
    return false;
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    Expect('"');
    return out;
  }
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

Json ParseJson(const std::string& text) { return Reader(text).Value(); }

Json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return ParseJson(s.str());
}

}  // namespace hlogym::testing

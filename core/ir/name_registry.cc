#include "core/ir/name_registry.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// Suffixes past this are kept as whole names: a bit set per stem stays small.
constexpr int64_t kMaxBit = int64_t{1} << 24;

// recent_ holds two direct-mapped caches: kRecent entries by a name's
// address (ParseAndFind), then kStems entries by a stem's text
// (FindOrAddStem).
constexpr int kRecentBits = 9;
constexpr size_t kRecent = size_t{1} << kRecentBits;
constexpr int kStemBits = 8;
constexpr size_t kStems = size_t{1} << kStemBits;

// A cheap hash of a stem's text: its length and its first and last eight
// bytes (a stem is mostly an opcode name, distinct within those).
size_t StemSlot(std::string_view stem) {
  const size_t n = stem.size();
  uint64_t head = 0, tail = 0;
  if (n >= 8) {
    std::memcpy(&head, stem.data(), 8);
    std::memcpy(&tail, stem.data() + n - 8, 8);
  } else {
    for (size_t i = 0; i < n; ++i) head |= uint64_t{static_cast<unsigned char>(stem[i])} << (8 * i);
  }
  const uint64_t h = (head ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^ n) * 0x9e3779b97f4a7c15ULL;
  return static_cast<size_t>(h >> (64 - kStemBits));
}

// abseil's string_view may not be std's: heterogeneous lookup needs its own.
absl::string_view Key(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The position of the '.' before a numeric suffix (npos without one): the
// digits at the end are scanned back to the dot, which is the same as
// finding the last '.' and checking that only digits follow.
size_t SuffixDot(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && absl::ascii_isdigit(name[i - 1])) --i;
  if (i == name.size() || i == 0 || name[i - 1] != '.') return std::string_view::npos;
  return i - 1;
}

}  // namespace

std::string_view NameStem(std::string_view name) {
  const size_t dot = SuffixDot(name);
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}

NameRegistry::Parsed NameRegistry::Parse(std::string_view name) {
  // One backward scan finds the suffix and adds up its value (a scan to the
  // dot, then one forward over the digits, was ~1.4% of a gpt2 env step: a
  // registry is rebuilt from every name of the module each step).
  size_t i = name.size();
  size_t count = 0;
  int64_t n = 0;
  int64_t scale = 1;
  while (i > 0) {
    const unsigned digit = static_cast<unsigned char>(name[i - 1]) - unsigned{'0'};
    if (digit > 9) break;
    if (count < 8) {  // more digits than that: kept whole below
      n += digit * scale;
      scale *= 10;
    }
    ++count;
    --i;
  }
  if (count == 0 || i == 0 || name[i - 1] != '.') return {name, -1};
  const std::string_view stem = name.substr(0, i - 1);
  if (count > 8 || (count > 1 && name[i] == '0')) return {stem, -2};
  if (n >= kMaxBit) return {stem, -2};
  return {stem, n};
}

NameRegistry::Stem& NameRegistry::FindOrAddStem(std::string_view stem) {
  // Cached by text before the hash map: rebuilding a module's registry (each
  // env step) looks up a stem per name, the same few hundred stems again
  // and again, and the map's string hash and probe were ~2% of a step.
  if (recent_.empty()) recent_.resize(kRecent + kStems);
  Recent& cached = recent_[kRecent + StemSlot(stem)];
  if (cached.stem != nullptr && std::string_view(cached.text) == stem) return *cached.stem;
  auto it = stems_.find(Key(stem));
  if (it == stems_.end()) it = stems_.try_emplace(std::string(stem), std::make_unique<Stem>()).first;
  cached.text.assign(stem);
  cached.stem = it->second.get();
  return *it->second;
}

NameRegistry::Stem* NameRegistry::ParseAndFind(std::string_view name, Parsed& parsed) {
  // Direct-mapped by the text's address; 512 entries hold most of a dry pass's
  // working set of originals and parameter names.
  if (recent_.empty()) recent_.resize(kRecent + kStems);
  const uint64_t key = reinterpret_cast<uintptr_t>(name.data());
  Recent& recent = recent_[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kRecentBits)];
  if (recent.data == name.data() && recent.stem != nullptr &&
      std::string_view(recent.text) == name) {
    parsed = {name.substr(0, recent.stem_size), recent.number};
    return recent.stem;
  }
  parsed = Parse(name);
  if (parsed.number == -2) return nullptr;  // kept whole: no stem
  Stem& stem = FindOrAddStem(parsed.stem);
  recent.data = name.data();
  recent.text.assign(name);
  recent.stem = &stem;
  recent.stem_size = parsed.stem.size();
  recent.number = parsed.number;
  return &stem;
}

bool NameRegistry::Insert(std::string_view name) {
  const Parsed p = Parse(name);
  if (p.number == -2) return whole_.emplace(Key(name)).second;
  Stem& stem = FindOrAddStem(p.stem);
  if (p.number == -1) {
    const bool fresh = !stem.bare;
    stem.bare = true;
    return fresh;
  }
  const size_t word = static_cast<size_t>(p.number) / 64;
  const uint64_t bit = uint64_t{1} << (p.number % 64);
  if (stem.used.size() <= word) stem.used.resize(word + 1, 0);
  const bool fresh = (stem.used[word] & bit) == 0;
  stem.used[word] |= bit;
  return fresh;
}

bool NameRegistry::Contains(std::string_view name) const {
  const Parsed p = Parse(name);
  if (p.number == -2) return whole_.contains(Key(name));
  auto it = stems_.find(Key(p.stem));
  if (it == stems_.end()) return false;
  const Stem& stem = *it->second;
  if (p.number == -1) return stem.bare;
  const size_t word = static_cast<size_t>(p.number) / 64;
  return word < stem.used.size() && (stem.used[word] >> (p.number % 64)) & 1;
}

std::string NameRegistry::Unique(std::string_view name) {
  Parsed p;
  Stem* found = ParseAndFind(name, p);
  if (found == nullptr) {  // kept whole
    if (whole_.emplace(Key(name)).second) return std::string(name);
    return NextFree(p.stem);
  }
  Stem& stem = *found;
  if (p.number == -1) {
    if (!stem.bare) {
      stem.bare = true;
      return std::string(name);
    }
  } else {
    const size_t word = static_cast<size_t>(p.number) / 64;
    const uint64_t bit = uint64_t{1} << (p.number % 64);
    if (stem.used.size() <= word) stem.used.resize(word + 1, 0);
    if ((stem.used[word] & bit) == 0) {
      stem.used[word] |= bit;
      return std::string(name);
    }
  }
  return NextFreeIn(stem, p.stem);
}

void NameRegistry::Clear() {
  // An empty stem answers as an unknown one: no N in use, not bare, and the
  // next N handed out is the first free one from 1.
  for (auto& [text, stem] : stems_) {
    std::fill(stem->used.begin(), stem->used.end(), 0);
    stem->bare = false;
    stem->counter = 0;
  }
  whole_.clear();
}

std::string NameRegistry::NextFree(std::string_view stem_name) {
  return NextFreeIn(FindOrAddStem(stem_name), stem_name);
}

std::string NameRegistry::NextFreeIn(Stem& stem, std::string_view stem_name) {
  int64_t n = stem.counter + 1;
  // First clear bit at or after n.
  while (true) {
    const size_t word = static_cast<size_t>(n) / 64;
    if (word >= stem.used.size()) break;
    const uint64_t free = ~stem.used[word] & (~uint64_t{0} << (n % 64));
    if (free != 0) {
      n = static_cast<int64_t>(64 * word) + __builtin_ctzll(free);
      break;
    }
    n = static_cast<int64_t>(64 * (word + 1));
  }
  stem.counter = n;
  // Built in a buffer and copied once: StrCat was a fifth of the cost of
  // naming an instruction, and a reserve then three appends (each checking
  // capacity and calling memcpy) were ~40 instructions more per name.
  std::string name;
  char buffer[96];
  const size_t size = stem_name.size();
  if (size + 1 + 20 <= sizeof(buffer)) {
    std::memcpy(buffer, stem_name.data(), size);
    buffer[size] = '.';
    const std::to_chars_result end = std::to_chars(buffer + size + 1, buffer + sizeof(buffer), n);
    name.assign(buffer, end.ptr);
  } else {
    char digits[24];
    const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), n);
    name.reserve(size + 1 + static_cast<size_t>(end.ptr - digits));
    name.append(stem_name);
    name.push_back('.');
    name.append(digits, end.ptr);
  }
  if (n < kMaxBit) {
    const size_t word = static_cast<size_t>(n) / 64;
    if (stem.used.size() <= word) stem.used.resize(word + 1, 0);
    stem.used[word] |= uint64_t{1} << (n % 64);
  } else if (!whole_.insert(name).second) {
    name = NextFree(stem_name);  // past the bit set: probe whole names
  }
  // The one return: a second one (of NextFree's result) kept the compiler
  // from building `name` in the caller's slot, and the copy out was a
  // memcpy per name (~0.5% of an env step).
  return name;
}

}  // namespace hlogym

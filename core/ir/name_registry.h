// NameRegistry: the names in use in a module (of its instructions, or of its
// computations) and the new unique names Module hands out: `stem.N` for the
// first free N above the last N handed out for that stem, as XLA names them.
//
// Names of the form stem.N (N written without leading zeros) are kept as one
// bit per N under their stem. A module is cloned every environment step and
// its registry rebuilt from scratch, with counters back at zero, so a new
// name for a common stem used to probe every taken stem.N in turn, building
// and hashing a string per probe; here the probe is a bit scan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace hlogym {

class NameRegistry {
 public:
  // Reserves `name`; false if it was already in use.
  bool Insert(std::string_view name);
  bool Contains(std::string_view name) const;
  // `stem`.N for the first free N above the last one handed out for `stem`
  // (from 1), reserved.
  std::string NextFree(std::string_view stem);
  // `name` if free, else NextFree(NameStem(name)); reserved. The same as
  // Insert then NextFree with one parse and one stem lookup (naming was ~10%
  // of an env step, most of it for clones whose name is taken).
  std::string Unique(std::string_view name);
  // Forgets every name and counter, as a new registry starts, keeping its
  // storage: stems known stay known, empty (a module rebuilds its registry
  // every env step, from mostly the same stems).
  void Clear();

 private:
  struct Stem {
    std::vector<uint64_t> used;  // bit N: stem.N is in use
    bool bare = false;           // the stem itself is in use as a name
    int64_t counter = 0;         // the last N handed out
  };
  // A name split as stem and N; `number` is -1 when the name is bare (no
  // numeric suffix) and -2 when it is kept whole (a suffix with leading
  // zeros, or too large for a bit set).
  struct Parsed {
    std::string_view stem;
    int64_t number;
  };
  static Parsed Parse(std::string_view name);
  Stem& FindOrAddStem(std::string_view stem);
  std::string NextFreeIn(Stem& stem, std::string_view stem_name);
  // Parse and FindOrAddStem for a name asked for before from the same
  // place: a dry pass names each copy in a candidate's body after its
  // original, and each parameter param_<n>, so the same text comes back
  // again and again (the parse and the stem's hash lookup were ~5% of a gpt2
  // env step). Hits are checked against the text kept, so a place reused for
  // other text is only a miss.
  struct Recent {
    const char* data = nullptr;
    std::string text;
    Stem* stem = nullptr;
    size_t stem_size = 0;
    int64_t number = 0;
  };
  // Null (with `parsed` set) for a name kept whole.
  Stem* ParseAndFind(std::string_view name, Parsed& parsed);

  // Stems by name; each Stem on the heap, so that Recent can point at it.
  absl::flat_hash_map<std::string, std::unique_ptr<Stem>> stems_;
  absl::flat_hash_set<std::string> whole_;
  std::vector<Recent> recent_;
};

// "add.12" -> "add": the part of a name before a numeric suffix (the name
// itself when it has none).
std::string_view NameStem(std::string_view name);

}  // namespace hlogym

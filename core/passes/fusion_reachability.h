// Reachability among one computation's instructions, kept as one bitset of
// ancestors per instruction. The fusion passes use it to never merge two
// instructions when one depends on the other (the merged fusion would read
// its own result), and update it as they merge.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/ir/computation.h"

namespace hlogym {

class ReachabilityMap {
 public:
  // Every instruction of `computation`; O(n^2 / 64) time and bits.
  explicit ReachabilityMap(const Computation& computation);

  bool Contains(const Instruction* inst) const { return index_.contains(inst); }
  // Whether `to` depends on `from` through operands or control edges (every
  // instruction reaches itself). Both must be known to the map.
  bool IsReachable(const Instruction* from, const Instruction* to) const;
  // Either depends on the other.
  bool IsConnected(const Instruction* a, const Instruction* b) const {
    return IsReachable(a, b) || IsReachable(b, a);
  }

  // Records a new instruction that nothing uses yet: its ancestors are its
  // operands' (which must be known).
  void Add(const Instruction* inst);
  // Records a merge: `merged` (new) computes what `parts` computed, and
  // replacements[k] (new, reading `merged`; may be `merged` itself) took
  // parts[k]'s users. Everything that depended on parts[k] now depends on
  // replacements[k], `merged`, and all of `merged`'s ancestors.
  void Merge(const Instruction* merged, absl::Span<const Instruction* const> parts,
             absl::Span<const Instruction* const> replacements);

 private:
  int64_t IndexOf(const Instruction* inst) const { return index_.at(inst); }
  uint64_t* Row(int64_t i) { return bits_.data() + i * words_; }
  const uint64_t* Row(int64_t i) const { return bits_.data() + i * words_; }
  // Assigns the next index to `inst`, widening the rows when full.
  int64_t NewIndex(const Instruction* inst);

  absl::flat_hash_map<const Instruction*, int64_t> index_;
  int64_t size_ = 0;
  int64_t words_ = 0;           // 64-bit words per row
  std::vector<uint64_t> bits_;  // row i: the ancestors of instruction i
};

}  // namespace hlogym

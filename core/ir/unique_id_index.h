// Indexing instructions by unique id instead of hashing their addresses. A
// module hands ids out in order, so the ids of one computation (or of one
// module's graph) usually fill a small range, and a vector indexed by
// id - base costs far less than a hash map on the hot paths of an env step
// (a step's copy, the cost model's fused bodies, observations). Callers fall back to hashing
// by address when the ids do not allow it. These callers fill a vector of
// their own per use; for values kept in a per-thread table that needs no
// clearing between uses (post orders, fingerprints), see InstructionTable
// (core/ir/instruction_table.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/ir/instruction.h"

namespace hlogym {

inline const Instruction* AsInstruction(const Instruction* inst) { return inst; }
inline const Instruction* AsInstruction(const std::unique_ptr<Instruction>& inst) {
  return inst.get();
}

// Prepares `slots` (a vector-like container) for indexing `instructions` (a
// container of Instruction pointers or unique_ptrs) by unique id: on success
// `slots` holds `empty` for every id in [base, base + slots.size()) and the
// result is true. False, with `slots` cleared, when there are no
// instructions, an id is negative or shared by two of them, or the ids span
// more than `max_spread` (hi - lo >= max_spread). `mark` is any value other
// than `empty`: the check for shared ids writes it and then clears it.
template <typename Instructions, typename Slots>
bool IndexByUniqueId(const Instructions& instructions, int64_t max_spread,
                     typename Slots::value_type empty, typename Slots::value_type mark,
                     Slots& slots, int64_t& base) {
  slots.clear();
  if (instructions.empty()) return false;
  int64_t lo = AsInstruction(*instructions.begin())->unique_id(), hi = lo;
  for (const auto& inst : instructions) {
    lo = std::min(lo, AsInstruction(inst)->unique_id());
    hi = std::max(hi, AsInstruction(inst)->unique_id());
  }
  if (lo < 0 || hi - lo >= max_spread) return false;
  slots.assign(static_cast<size_t>(hi - lo + 1), empty);
  for (const auto& inst : instructions) {
    auto& slot = slots[static_cast<size_t>(AsInstruction(inst)->unique_id() - lo)];
    if (slot != empty) {
      slots.clear();
      return false;
    }
    slot = mark;
  }
  std::fill(slots.begin(), slots.end(), empty);
  base = lo;
  return true;
}

}  // namespace hlogym

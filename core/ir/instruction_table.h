// InstructionTable: a map from the instructions of one computation or one
// module to small values, for the walks on an env step's hot paths (post
// orders, fingerprints). An env step's ids spread over everything its dry
// passes numbered (tens of thousands of ids for a thousand instructions), so
// a table cleared per walk outgrew its use, and a hash map by address cost
// ~400 instructions a node. Instead the values live in a per-thread table
// indexed by unique id, each slot tagged with a generation: a new map neither
// clears nor allocates it. A map falls back to hashing by address when the
// ids do not allow the table (a shared or negative id, a spread past
// kMaxSpread) or when another map holds the thread's table; both behave
// alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

namespace hlogym {

template <typename V>
class InstructionTable {
 public:
  // For any instructions: hashed by address.
  InstructionTable() : slots_(Storage()) {}
  // For the instructions of `computation` (null: as the default).
  explicit InstructionTable(const Computation* computation)
      : slots_(Storage()), computation_(computation) {
    if (computation == nullptr) return;
    Index([&](auto visit) {
      for (const auto& inst : computation->instructions()) visit(inst.get());
    });
  }
  // For the instructions of every computation of `module`.
  explicit InstructionTable(const Module& module) : slots_(Storage()), module_(&module) {
    Index([&](auto visit) {
      for (const auto& computation : module.computations()) {
        for (const auto& inst : computation->instructions()) visit(inst.get());
      }
    });
  }
  ~InstructionTable() {
    if (dense_) slots_.in_use = false;
  }
  InstructionTable(const InstructionTable&) = delete;
  InstructionTable& operator=(const InstructionTable&) = delete;

  // The value of `inst`, or null when it has none.
  const V* Find(const Instruction* inst) const {
    if (const int64_t slot = Slot(inst); slot >= 0) {
      return slots_.tags[slot] == slots_.generation ? &slots_.values[slot] : nullptr;
    }
    auto it = map_.find(inst);
    return it == map_.end() ? nullptr : &it->second;
  }
  void Set(const Instruction* inst, V value) {
    if (const int64_t slot = Slot(inst); slot >= 0) {
      slots_.tags[slot] = slots_.generation;
      slots_.values[slot] = value;
    } else {
      map_[inst] = value;
    }
  }

 private:
  static constexpr int64_t kMaxSpread = int64_t{1} << 20;
  struct Slots {
    std::vector<uint32_t> tags;  // a slot holds a value when its tag is `generation`
    std::vector<V> values;
    uint32_t generation = 0;
    bool in_use = false;
  };
  static Slots& Storage() {
    thread_local Slots slots;
    return slots;
  }

  // `for_each(visit)` calls visit(inst) for every instruction in scope.
  template <typename ForEach>
  void Index(ForEach for_each) {
    Slots& s = slots_;
    size_t n = 0;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for_each([&](const Instruction* inst) {
      lo = std::min(lo, inst->unique_id());
      hi = std::max(hi, inst->unique_id());
      ++n;
    });
    if (n == 0 || s.in_use || lo < 0 || hi - lo >= kMaxSpread) {
      map_.reserve(n);
      return;
    }
    // Two generations: the shared-id check's marks, then "holds a value".
    if (s.generation >= std::numeric_limits<uint32_t>::max() - 2) {
      std::fill(s.tags.begin(), s.tags.end(), 0);
      s.generation = 0;
    }
    s.generation += 2;
    const size_t size = static_cast<size_t>(hi - lo + 1);
    if (s.tags.size() < size) {
      s.tags.resize(size, 0);  // generation 0 is never current
      s.values.resize(size);
    }
    // Two instructions sharing an id would share a slot: hashed then.
    const uint32_t seen = s.generation - 1;
    bool distinct = true;
    for_each([&](const Instruction* inst) {
      uint32_t& tag = s.tags[static_cast<size_t>(inst->unique_id() - lo)];
      distinct &= tag != seen;
      tag = seen;
    });
    if (!distinct) {
      map_.reserve(n);
      return;
    }
    dense_ = true;
    s.in_use = true;
    base_ = lo;
    size_ = static_cast<int64_t>(size);
  }

  // The slot of `inst`, or -1 when it is hashed: an instruction outside the
  // scope may share an id with one inside.
  int64_t Slot(const Instruction* inst) const {
    if (!dense_) return -1;
    const Computation* parent = inst->parent();
    if (computation_ != nullptr ? parent != computation_
                                : parent == nullptr || parent->parent() != module_) {
      return -1;
    }
    const int64_t slot = inst->unique_id() - base_;
    return slot >= 0 && slot < size_ ? slot : -1;
  }

  Slots& slots_;  // the thread's (a thread_local costs a call per access)
  const Computation* computation_ = nullptr;
  const Module* module_ = nullptr;
  bool dense_ = false;
  int64_t base_ = 0;
  int64_t size_ = 0;
  absl::flat_hash_map<const Instruction*, V> map_;
};

}  // namespace hlogym

// Buffer assignment for the CPU executable: which buffer holds each leaf of
// each instruction's value, and where each temporary lives in one arena.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/computation.h"

namespace hlogym {

// Temporaries start at multiples of this, so kernels may use aligned vector
// loads and no two buffers share a cache line.
inline constexpr int64_t kBufferAlignment = 64;

// The leaves of a shape in order (arrays, tokens, opaques; tuples flattened).
std::vector<Shape> FlattenLeafShapes(const Shape& shape);
// Bytes of one leaf as the reference interpreter stores it (0 for tokens).
int64_t LeafBytes(const Shape& leaf);

// Instructions whose value is made of their operands' buffers, so they run no
// code: parameter, constant, tuple, get-tuple-element, bitcast, reshape (our
// buffers are dense row-major, so a reshape keeps the bytes), alternatives,
// opt-barrier, add-dependency.
bool IsBufferAlias(const Instruction& instruction);

struct LogicalBuffer {
  enum class Kind { kParameter, kConstant, kTemp };
  Kind kind = Kind::kTemp;
  const Instruction* producer = nullptr;
  int64_t leaf = 0;             // leaf of the producer's value it holds
  int64_t parameter_leaf = -1;  // kParameter: index among all parameter leaves
  int64_t size = 0;             // bytes
  int64_t offset = -1;          // kTemp: offset in the arena
  int64_t defined_at = 0;       // schedule position of the producer
  int64_t last_use = 0;         // last schedule position reading it
};

class BufferAssignment {
 public:
  // `schedule` is the order the computation's instructions run in (def before
  // use, every instruction once). Temporaries whose live ranges do not overlap
  // share arena bytes; the root's leaves live to the end.
  static absl::StatusOr<BufferAssignment> Assign(const Computation& computation,
                                                 absl::Span<Instruction* const> schedule);

  // Buffer ids of an instruction's leaves, in flattened order.
  absl::Span<const int64_t> leaves(const Instruction* instruction) const {
    return leaves_.at(instruction);
  }
  const LogicalBuffer& buffer(int64_t id) const { return buffers_[id]; }
  int64_t buffer_count() const { return static_cast<int64_t>(buffers_.size()); }
  int64_t parameter_leaf_count() const { return parameter_leaf_count_; }
  // Bytes of the arena holding every temporary (after sharing).
  int64_t arena_bytes() const { return arena_bytes_; }
  // Bytes the temporaries would take with no sharing (aligned).
  int64_t unshared_bytes() const { return unshared_bytes_; }

 private:
  void PackArena();

  std::vector<LogicalBuffer> buffers_;
  absl::flat_hash_map<const Instruction*, std::vector<int64_t>> leaves_;
  int64_t parameter_leaf_count_ = 0;
  int64_t arena_bytes_ = 0;
  int64_t unshared_bytes_ = 0;
};

}  // namespace hlogym

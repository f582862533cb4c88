#include "backend/buffer_assignment.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

void Flatten(const Shape& shape, std::vector<Shape>& out) {
  if (!shape.IsTuple()) {
    out.push_back(shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) Flatten(element, out);
}

// Leaves of a tuple-shaped value that belong to its element `index`.
std::pair<int64_t, int64_t> ElementLeafRange(const Shape& tuple, int64_t index) {
  int64_t begin = 0;
  for (int64_t i = 0; i < index; ++i) {
    begin += static_cast<int64_t>(FlattenLeafShapes(tuple.tuple_shape(i)).size());
  }
  const int64_t count = static_cast<int64_t>(FlattenLeafShapes(tuple.tuple_shape(index)).size());
  return {begin, begin + count};
}

int64_t AlignUp(int64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

}  // namespace

std::vector<Shape> FlattenLeafShapes(const Shape& shape) {
  std::vector<Shape> leaves;
  Flatten(shape, leaves);
  return leaves;
}

int64_t LeafBytes(const Shape& leaf) {
  if (!leaf.IsArray()) return 0;
  return leaf.element_count() * ByteWidth(leaf.element_type());
}

bool IsBufferAlias(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement: case Opcode::kAlternatives:
    case Opcode::kOptimizationBarrier: case Opcode::kAddDependency:
      return true;
    case Opcode::kBitcast: case Opcode::kReshape:
      // Same bytes only when the element width is kept.
      return instruction.shape().IsArray() && instruction.operand(0)->shape().IsArray() &&
             LeafBytes(instruction.shape()) == LeafBytes(instruction.operand(0)->shape());
    default:
      return false;
  }
}

absl::StatusOr<BufferAssignment> BufferAssignment::Assign(
    const Computation& computation, absl::Span<Instruction* const> schedule) {
  BufferAssignment a;
  // Parameter leaves are numbered parameter by parameter.
  std::vector<int64_t> first_parameter_leaf(computation.parameter_count() + 1, 0);
  for (int64_t p = 0; p < computation.parameter_count(); ++p) {
    first_parameter_leaf[p + 1] =
        first_parameter_leaf[p] +
        static_cast<int64_t>(FlattenLeafShapes(computation.parameter(p)->shape()).size());
  }
  a.parameter_leaf_count_ = first_parameter_leaf.back();

  auto new_buffers = [&](const Instruction* inst, int64_t position, LogicalBuffer::Kind kind) {
    std::vector<int64_t> ids;
    const std::vector<Shape> leaf_shapes = FlattenLeafShapes(inst->shape());
    for (size_t leaf = 0; leaf < leaf_shapes.size(); ++leaf) {
      LogicalBuffer b;
      b.kind = kind;
      b.producer = inst;
      b.leaf = static_cast<int64_t>(leaf);
      b.size = LeafBytes(leaf_shapes[leaf]);
      b.defined_at = position;
      b.last_use = position;
      if (kind == LogicalBuffer::Kind::kParameter) {
        b.parameter_leaf = first_parameter_leaf[inst->parameter_number()] + b.leaf;
      }
      ids.push_back(static_cast<int64_t>(a.buffers_.size()));
      a.buffers_.push_back(b);
    }
    return ids;
  };

  for (int64_t position = 0; position < static_cast<int64_t>(schedule.size()); ++position) {
    const Instruction* inst = schedule[position];
    for (const Instruction* operand : inst->operands()) {
      auto it = a.leaves_.find(operand);
      if (it == a.leaves_.end()) {
        return absl::InternalError(absl::StrCat("the schedule runs `", inst->name(),
                                                "` before its operand `", operand->name(), "`"));
      }
      for (int64_t id : it->second) {
        a.buffers_[id].last_use = std::max(a.buffers_[id].last_use, position);
      }
    }
    std::vector<int64_t> ids;
    switch (inst->opcode()) {
      case Opcode::kParameter:
        ids = new_buffers(inst, position, LogicalBuffer::Kind::kParameter);
        break;
      case Opcode::kConstant:
        ids = new_buffers(inst, position, LogicalBuffer::Kind::kConstant);
        break;
      case Opcode::kTuple:
        for (const Instruction* operand : inst->operands()) {
          const std::vector<int64_t>& from = a.leaves_.at(operand);
          ids.insert(ids.end(), from.begin(), from.end());
        }
        break;
      case Opcode::kGetTupleElement: {
        const Instruction* operand = inst->operand(0);
        if (!operand->shape().IsTuple() || inst->tuple_index() < 0 ||
            inst->tuple_index() >= operand->shape().tuple_size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("get-tuple-element `", inst->name(), "` has a bad tuple index"));
        }
        const auto [begin, end] = ElementLeafRange(operand->shape(), inst->tuple_index());
        const std::vector<int64_t>& from = a.leaves_.at(operand);
        ids.assign(from.begin() + begin, from.begin() + end);
        break;
      }
      default:
        if (IsBufferAlias(*inst)) {
          ids = a.leaves_.at(inst->operand(0));
        } else {
          ids = new_buffers(inst, position, LogicalBuffer::Kind::kTemp);
        }
        break;
    }
    a.leaves_[inst] = std::move(ids);
  }
  if (computation.root() == nullptr || !a.leaves_.contains(computation.root())) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation `", computation.name(), "` has no scheduled root"));
  }
  const int64_t end = static_cast<int64_t>(schedule.size());
  for (int64_t id : a.leaves_.at(computation.root())) a.buffers_[id].last_use = end;
  a.PackArena();
  return a;
}

// Greedy first fit, largest buffers first (as TensorFlow's and XLA's heap
// simulators do): each temporary takes the lowest offset not used by a
// temporary whose live range overlaps its own.
void BufferAssignment::PackArena() {
  std::vector<int64_t> order;
  for (int64_t id = 0; id < buffer_count(); ++id) {
    if (buffers_[id].kind == LogicalBuffer::Kind::kTemp) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return buffers_[x].size > buffers_[y].size;
  });
  std::vector<int64_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of overlapping ones
  for (int64_t id : order) {
    LogicalBuffer& b = buffers_[id];
    const int64_t size = AlignUp(std::max<int64_t>(b.size, 1));
    unshared_bytes_ += size;
    busy.clear();
    for (int64_t other : placed) {
      const LogicalBuffer& o = buffers_[other];
      // A kernel reads its operands while writing its result, so a buffer
      // may only take bytes whose last reader ran strictly before it.
      const bool overlaps = !(o.last_use < b.defined_at || b.last_use < o.defined_at);
      if (overlaps) busy.emplace_back(o.offset, o.offset + AlignUp(std::max<int64_t>(o.size, 1)));
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (lo - offset >= size) break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    arena_bytes_ = std::max(arena_bytes_, offset + size);
    placed.push_back(id);
  }
}

}  // namespace hlogym

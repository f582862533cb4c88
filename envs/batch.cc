#include "envs/batch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

namespace hlogym {
namespace {

// Zeros [begin, end): the whole pages inside by handing them back to the OS
// (private anonymous memory, calloc's, reads as zeros after MADV_DONTNEED and
// costs nothing until written again), the partial ones at the ends by memset.
void ZeroRange(uint8_t* begin, uint8_t* end) {
  if (end <= begin) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t e = reinterpret_cast<uintptr_t>(end);
  const uintptr_t lo = (b + page - 1) & ~(page - 1);
  const uintptr_t hi = e & ~(page - 1);
  if (hi <= lo || madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) {
    std::memset(begin, 0, end - begin);
    return;
  }
  std::memset(begin, 0, lo - b);
  std::memset(reinterpret_cast<uint8_t*>(hi), 0, e - hi);
}

// The zero-padded per-node and per-edge arrays ReleaseUnused trims.
constexpr BatchField kNodeZeroFields[] = {kNodeFeaturesField, kNodeMaskField};
constexpr BatchField kEdgeZeroFields[] = {kEdgeFeaturesField, kEdgeMaskField};

}  // namespace

int DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: case DType::kInt32: return 4;
    case DType::kFloat64: case DType::kUInt64: return 8;
    case DType::kUInt8: case DType::kBool: return 1;
  }
  return 1;
}

int64_t BatchArray::bytes() const {
  int64_t n = DTypeSize(dtype);
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<BatchArray> Batch::Layout(int64_t b, const FeatureLimits& l) {
  auto array = [](const char* name, DType dtype, std::vector<int64_t> shape) {
    return BatchArray{name, dtype, std::move(shape), nullptr};
  };
  return {
      array("node_features", DType::kFloat32, {b, l.max_nodes, kNodeFeatureCount}),
      array("node_opcode", DType::kInt32, {b, l.max_nodes}),
      array("node_mask", DType::kBool, {b, l.max_nodes}),
      array("edge_index", DType::kInt32, {b, 2, l.max_edges}),
      array("edge_features", DType::kFloat32, {b, l.max_edges, kEdgeFeatureCount}),
      array("edge_mask", DType::kBool, {b, l.max_edges}),
      array("in_edge_offsets", DType::kInt32, {b, l.max_nodes + 1}),
      array("alt_nodes", DType::kInt32, {b, l.max_alternatives}),
      array("alt_valid", DType::kBool, {b, l.max_alternatives}),
      array("alt_num_choices", DType::kInt32, {b, l.max_alternatives}),
      array("alt_mask", DType::kBool, {b, l.max_alternatives, l.max_choices}),
      array("env_id", DType::kInt32, {b}),
      array("reward", DType::kFloat32, {b}),
      array("terminated", DType::kBool, {b}),
      array("truncated", DType::kBool, {b}),
      array("elapsed_step", DType::kInt32, {b}),
      array("benchmark", DType::kInt32, {b}),
      array("num_alternatives", DType::kInt32, {b}),
      array("rewrites_applied", DType::kInt32, {b}),
      array("original_runtime", DType::kFloat64, {b}),
      array("default_runtime", DType::kFloat64, {b}),
      array("current_runtime", DType::kFloat64, {b}),
      array("fingerprint", DType::kUInt64, {b}),
  };
}

double Batch::Bytes(int64_t batch_size, const FeatureLimits& limits) {
  double total = 0;
  for (const BatchArray& array : Layout(batch_size, limits)) {
    double bytes = DTypeSize(array.dtype);
    for (int64_t d : array.shape) bytes *= static_cast<double>(d);
    total += bytes;
  }
  return total;
}

Batch::Batch(int64_t batch_size, const FeatureLimits& l) : size_(batch_size) {
  const int64_t b = batch_size;
  arrays_ = Layout(b, l);
  for (BatchArray& array : arrays_) {
    // Zeroed so a row no environment wrote (partial batches) holds no garbage.
    auto* memory = static_cast<uint8_t*>(std::calloc(std::max<int64_t>(array.bytes(), 1), 1));
    if (memory == nullptr) throw std::bad_alloc();
    array.data = std::shared_ptr<uint8_t>(memory, [](uint8_t* p) { std::free(p); });
  }
  errors_.assign(b, "");
  // Rows start as padding (calloc gave the zeros), so no write needs to
  // clear more than it uses.
  for (BatchField field : {kNodeOpcodeField, kEdgeIndexField, kAltNodesField}) {
    const BatchArray& a = arrays_[field];
    std::fill_n(reinterpret_cast<int32_t*>(a.data.get()), a.bytes() / sizeof(int32_t), -1);
  }
  extents_.assign(b, GraphCounts());
  touched_.assign(b, GraphCounts());
  oversized_writes_.assign(b, 0);
  last_writer_.assign(b, -1);
}

const BatchArray& Batch::array(const std::string& name) const {
  for (const BatchArray& a : arrays_) {
    if (a.name == name) return a;
  }
  throw std::out_of_range("no batch array " + name);
}

ObservationView Batch::Observation(int64_t i) const {
  const auto& a = arrays_;
  return ObservationView{
      a[kNodeFeaturesField].row<float>(i),   a[kNodeOpcodeField].row<int32_t>(i),
      a[kNodeMaskField].row<uint8_t>(i),     a[kEdgeIndexField].row<int32_t>(i),
      a[kEdgeFeaturesField].row<float>(i),   a[kEdgeMaskField].row<uint8_t>(i),
      a[kInEdgeOffsetsField].row<int32_t>(i), a[kAltNodesField].row<int32_t>(i),
      a[kAltValidField].row<uint8_t>(i),     a[kAltNumChoicesField].row<int32_t>(i),
      a[kAltMaskField].row<uint8_t>(i)};
}

void Batch::ClearRow(int64_t i) const {
  for (int field = 0; field < kNumBatchFields; ++field) {
    const BatchArray& a = arrays_[field];
    const int64_t per_row = a.bytes() / a.shape[0];
    uint8_t* row = a.data.get() + i * per_row;
    const bool minus_one = field == kNodeOpcodeField || field == kEdgeIndexField ||
                           field == kAltNodesField;
    if (minus_one) {
      std::fill_n(reinterpret_cast<int32_t*>(row), per_row / sizeof(int32_t), -1);
    } else {
      ZeroRange(row, row + per_row);
    }
  }
  extents_[i] = GraphCounts();
  touched_[i] = GraphCounts();
  oversized_writes_[i] = 0;
  last_writer_[i] = -1;
}

void Batch::ReleaseUnused(int64_t i, int32_t env_id) const {
  const bool same_writer = std::exchange(last_writer_[i], env_id) == env_id;
  const GraphCounts& used = extents_[i];
  GraphCounts& touched = touched_[i];
  touched.nodes = std::max(touched.nodes, used.nodes);
  touched.edges = std::max(touched.edges, used.edges);
  touched.alternatives = std::max(touched.alternatives, used.alternatives);
  auto row_bytes = [&](BatchField field) {
    const BatchArray& a = arrays_[field];
    return a.bytes() / a.shape[0];
  };
  int64_t node_bytes = 0, edge_bytes = 0;  // per node, per edge
  auto item_bytes = [&](BatchField field) {
    const int64_t items = arrays_[field].shape[1];
    return items > 0 ? row_bytes(field) / items : 0;
  };
  for (BatchField f : kNodeZeroFields) node_bytes += item_bytes(f);
  for (BatchField f : kEdgeZeroFields) edge_bytes += item_bytes(f);
  const int64_t used_bytes = used.nodes * node_bytes + used.edges * edge_bytes;
  const int64_t touched_bytes = touched.nodes * node_bytes + touched.edges * edge_bytes;
  int32_t& oversized = oversized_writes_[i];
  if (touched_bytes - used_bytes < (int64_t{1} << 20) || touched_bytes <= 2 * used_bytes) {
    oversized = 0;
    return;
  }
  if (++oversized < kReleaseAfterWrites && !same_writer) return;
  oversized = 0;
  auto trim = [&](BatchField field, int64_t from, int64_t to) {
    const int64_t per_item = item_bytes(field);
    uint8_t* row = arrays_[field].data.get() + i * row_bytes(field);
    ZeroRange(row + from * per_item, row + to * per_item);
  };
  for (BatchField f : kNodeZeroFields) trim(f, used.nodes, touched.nodes);
  for (BatchField f : kEdgeZeroFields) trim(f, used.edges, touched.edges);
  touched = used;
}

bool Batch::shared_outside() const {
  for (const BatchArray& a : arrays_) {
    if (a.data.use_count() > 1) return true;
  }
  return false;
}

}  // namespace hlogym

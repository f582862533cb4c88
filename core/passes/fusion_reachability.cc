#include "core/passes/fusion_reachability.h"

#include <algorithm>

namespace hlogym {

ReachabilityMap::ReachabilityMap(const Computation& computation) {
  const std::vector<Instruction*> order = computation.MakePostOrder();
  const int64_t n = static_cast<int64_t>(order.size());
  // Room for the instructions a pass adds (fusions and their GTEs).
  words_ = (n + n / 2 + 64) / 64;
  bits_.assign(static_cast<size_t>(words_) * words_ * 64, 0);
  index_.reserve(order.size());
  for (const Instruction* inst : order) Add(inst);
}

int64_t ReachabilityMap::NewIndex(const Instruction* inst) {
  if (size_ == words_ * 64) {
    const int64_t old_words = words_;
    const int64_t new_words = old_words * 2;
    std::vector<uint64_t> wider(static_cast<size_t>(new_words) * new_words * 64, 0);
    for (int64_t i = 0; i < size_; ++i) {
      std::copy(Row(i), Row(i) + old_words, wider.data() + i * new_words);
    }
    bits_ = std::move(wider);
    words_ = new_words;
  }
  const int64_t i = size_++;
  index_[inst] = i;
  return i;
}

bool ReachabilityMap::IsReachable(const Instruction* from, const Instruction* to) const {
  const int64_t f = IndexOf(from);
  return (Row(IndexOf(to))[f / 64] >> (f % 64)) & 1;
}

void ReachabilityMap::Add(const Instruction* inst) {
  const int64_t i = NewIndex(inst);
  uint64_t* row = Row(i);
  row[i / 64] |= uint64_t{1} << (i % 64);
  auto merge_from = [&](const Instruction* pred) {
    const uint64_t* src = Row(IndexOf(pred));
    for (int64_t w = 0; w < words_; ++w) row[w] |= src[w];
  };
  for (const Instruction* operand : inst->operands()) merge_from(operand);
  for (const Instruction* pred : inst->control_predecessors()) merge_from(pred);
}

void ReachabilityMap::Merge(const Instruction* merged,
                            absl::Span<const Instruction* const> parts,
                            absl::Span<const Instruction* const> replacements) {
  if (!Contains(merged)) Add(merged);
  const int64_t m = IndexOf(merged);
  for (const Instruction* part : parts) {
    const uint64_t* src = Row(IndexOf(part));
    uint64_t* row = Row(m);
    for (int64_t w = 0; w < words_; ++w) row[w] |= src[w];
  }
  std::vector<int64_t> part_index, replacement_index;
  for (size_t k = 0; k < parts.size(); ++k) {
    part_index.push_back(IndexOf(parts[k]));
    if (!Contains(replacements[k])) Add(replacements[k]);
    replacement_index.push_back(IndexOf(replacements[k]));
  }
  const uint64_t* merged_row = Row(m);
  for (int64_t y = 0; y < size_; ++y) {
    if (y == m || std::find(replacement_index.begin(), replacement_index.end(), y) !=
                      replacement_index.end()) {
      continue;  // the new instructions already have the right ancestors
    }
    uint64_t* row = Row(y);
    bool touched = false;
    for (size_t k = 0; k < part_index.size(); ++k) {
      const int64_t p = part_index[k];
      if (y == p || !((row[p / 64] >> (p % 64)) & 1)) continue;
      const int64_t r = replacement_index[k];
      row[r / 64] |= uint64_t{1} << (r % 64);
      touched = true;
    }
    if (!touched) continue;
    for (int64_t w = 0; w < words_; ++w) row[w] |= merged_row[w];
  }
}

}  // namespace hlogym

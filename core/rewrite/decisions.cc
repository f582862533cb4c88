#include "core/rewrite/decisions.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ir/node_order.h"
#include "core/rewrite/prune.h"

namespace hlogym {
namespace {

absl::Status CheckChoice(const AlternativeNode& alt, int64_t choice) {
  if (choice < 0 || choice >= alt.num_choices()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "choice ", choice, " for alternatives node ", alt.node_index, " (`",
        alt.node->name(), "`) is out of range: it has ", alt.num_choices(),
        " choices (0..", alt.num_choices() - 1, ")"));
  }
  return absl::OkStatus();
}

// Replaces each node by its chosen operand, then prunes. Inputs are valid.
void Select(Module& module, absl::Span<const AlternativeNode> alts,
            absl::Span<const int64_t> choices) {
  for (size_t i = 0; i < alts.size(); ++i) {
    Instruction* node = alts[i].node;
    node->ReplaceAllUsesWith(node->operand(choices[i]));
  }
  Prune(module);
}

}  // namespace

std::vector<AlternativeNode> FindAlternatives(const Module& module) {
  std::vector<AlternativeNode> alts;
  for (const auto& [inst, index] : FindInNodeOrder(module, [](const Instruction& inst) {
         return inst.opcode() == Opcode::kAlternatives;
       })) {
    alts.push_back({inst, index});
  }
  return alts;
}

absl::Status ApplyDecisions(Module& module, absl::Span<const int64_t> decisions,
                            int64_t rows, int64_t cols) {
  std::vector<AlternativeNode> alts = FindAlternatives(module);
  if (cols != 2 || rows < 0 || static_cast<int64_t>(decisions.size()) != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decisions must have shape [num_alternatives, 2] = [", alts.size(),
        ", 2]; got [", rows, ", ", cols, "]"));
  }
  if (rows != static_cast<int64_t>(alts.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decisions must have one row per alternatives node: expected ",
        alts.size(), " rows, got ", rows));
  }
  absl::flat_hash_map<int64_t, size_t> slot_of_index;
  for (size_t i = 0; i < alts.size(); ++i) slot_of_index[alts[i].node_index] = i;
  std::vector<int64_t> choices(alts.size(), -1);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t index = decisions[2 * r];
    const int64_t choice = decisions[2 * r + 1];
    auto it = slot_of_index.find(index);
    if (it == slot_of_index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decision row ", r, ": node ", index, " is not an alternatives node"));
    }
    if (choices[it->second] != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decision row ", r, ": node ", index, " is decided twice"));
    }
    if (absl::Status s = CheckChoice(alts[it->second], choice); !s.ok()) return s;
    choices[it->second] = choice;
  }
  Select(module, alts, choices);
  return absl::OkStatus();
}

absl::Status ApplyChoices(Module& module, absl::Span<const int64_t> choices) {
  std::vector<AlternativeNode> alts = FindAlternatives(module);
  if (choices.size() != alts.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected one choice per alternatives node (", alts.size(), "), got ",
        choices.size()));
  }
  for (size_t i = 0; i < alts.size(); ++i) {
    if (absl::Status s = CheckChoice(alts[i], choices[i]); !s.ok()) return s;
  }
  Select(module, alts, choices);
  return absl::OkStatus();
}

}  // namespace hlogym

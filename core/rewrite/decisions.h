// Decisions: the agent's choice for each `alternatives` node. Applying them
// replaces every alternatives node by its chosen operand (0 keeps the
// original), then prunes what no longer has a use.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/module.h"

namespace hlogym {

// An alternatives node and its index in NodeOrder(module).
struct AlternativeNode {
  Instruction* node;
  int64_t node_index;
  int64_t num_choices() const { return node->operand_count(); }
};

// The alternatives nodes, in NodeOrder.
std::vector<AlternativeNode> FindAlternatives(const Module& module);

// One choice per alternatives node, each in range; the errors name the node.
absl::Status CheckChoices(absl::Span<const AlternativeNode> alts,
                          absl::Span<const int64_t> choices);

// HloEnv-style decisions: a row-major [rows, cols] int array with cols == 2
// holding (node index, chosen operand), one row per alternatives node. On any
// error (wrong shape, an index that is no alternatives node, a node named
// twice or not at all, a choice out of range) nothing is changed.
absl::Status ApplyDecisions(Module& module, absl::Span<const int64_t> decisions,
                            int64_t rows, int64_t cols);

// One choice per alternatives node, in FindAlternatives order. Same checks
// and the same all-or-nothing behaviour as ApplyDecisions.
absl::Status ApplyChoices(Module& module, absl::Span<const int64_t> choices);
// The same, given `alts` = FindAlternatives(module) found by the caller, and
// each computation left stored as CloneWithChoices(module, alts, choices,
// entry_order) stores its copy (its post-order before the choices, less what
// they prune). The two give the same module once each is stored as cloned
// (Module::StoreAsCloned: user lists then follow storage), which an env step
// relies on to edit in place rather than copy.
absl::Status ApplyChoices(Module& module, absl::Span<const AlternativeNode> alts,
                          absl::Span<const int64_t> choices,
                          absl::Span<Instruction* const> entry_order = {});

// The module that module.Clone() followed by ApplyChoices(clone, choices)
// makes (the same instructions, names, ids, storage, user and operand
// order), without copying what the choices prune: only the instructions that
// survive are copied, which matters after a dry pass whose unchosen
// candidates outnumber the module's own instructions. The same checks as
// ApplyChoices; `module` is not changed.
absl::StatusOr<std::unique_ptr<Module>> CloneWithChoices(const Module& module,
                                                         absl::Span<const int64_t> choices);
// The same, given `alts` = FindAlternatives(module) found by the caller (the
// env finds them when it offers the alternatives; the walk over every
// candidate is not repeated at the step).
// `entry_order`: module.entry()->MakePostOrder() when the caller has it
// (the env orders the entry to find the alternatives), so that the copy does
// not walk the entry again; empty, the entry is walked.
absl::StatusOr<std::unique_ptr<Module>> CloneWithChoices(
    const Module& module, absl::Span<const AlternativeNode> alts,
    absl::Span<const int64_t> choices, absl::Span<Instruction* const> entry_order = {});

}  // namespace hlogym

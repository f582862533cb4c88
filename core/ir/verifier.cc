#include "core/ir/verifier.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/shape_inference.h"

namespace hlogym {
namespace {

absl::Status At(const Computation& c, const Instruction* inst, const std::string& what) {
  if (inst == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("computation `", c.name(), "`: ", what));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("computation `", c.name(), "`, instruction `", inst->name(), "`: ", what));
}

// No cycle through operands: every instruction must appear in the post-order
// after all its operands.
absl::Status CheckAcyclic(const Computation& c) {
  absl::flat_hash_map<const Instruction*, size_t> position;
  std::vector<Instruction*> order = c.MakePostOrder();
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (const Instruction* inst : order) {
    for (const Instruction* o : inst->operands()) {
      auto it = position.find(o);
      if (it == position.end()) return At(c, inst, "an operand is in another computation");
      if (it->second >= position.at(inst)) return At(c, inst, "is part of a cycle");
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyComputation(const Module& module, const Computation& c,
                               const VerifyOptions& options,
                               const absl::flat_hash_set<const Computation*>& in_module) {
  if (c.root() == nullptr) return At(c, nullptr, "has no root");
  for (int64_t i = 0; i < c.parameter_count(); ++i) {
    if (c.parameter(i) == nullptr) {
      return At(c, nullptr, absl::StrCat("parameter ", i, " is missing (numbers must be 0..n-1)"));
    }
  }
  absl::flat_hash_set<std::string_view> names;
  absl::flat_hash_set<const Instruction*> members;
  for (const auto& inst : c.instructions()) members.insert(inst.get());
  if (!members.contains(c.root())) return At(c, c.root(), "the root is not in the computation");
  for (const auto& owned : c.instructions()) {
    const Instruction* inst = owned.get();
    if (!names.insert(inst->name()).second) return At(c, inst, "the name is used twice");
    if (inst->parent() != &c) return At(c, inst, "its parent is another computation");
    for (const Instruction* o : inst->operands()) {
      if (!members.contains(o)) return At(c, inst, "an operand is not in this computation");
      if (std::find(o->users().begin(), o->users().end(), inst) == o->users().end()) {
        return At(c, inst, absl::StrCat("is missing from the users of operand `", o->name(), "`"));
      }
    }
    for (const Instruction* u : inst->users()) {
      if (std::find(u->operands().begin(), u->operands().end(), inst) == u->operands().end()) {
        return At(c, inst, absl::StrCat("lists `", u->name(), "` as a user that does not use it"));
      }
    }
    for (const Computation* callee : inst->called_computations()) {
      if (callee == nullptr || !in_module.contains(callee)) {
        return At(c, inst, "calls a computation that is not in the module");
      }
    }
    if (inst->opcode() == Opcode::kFusion && !inst->called_computations().empty() &&
        inst->fused_computation()->fusion_instruction() != inst) {
      return At(c, inst, "its fused computation does not point back to it");
    }
    absl::StatusOr<Shape> inferred = InferShape(*inst);
    if (!inferred.ok()) return At(c, inst, std::string(inferred.status().message()));
    const bool same = options.layout_sensitive ? *inferred == inst->shape()
                                               : inferred->Compatible(inst->shape());
    const bool types_free = inst->opcode() == Opcode::kDot;  // preferred element type
    if (!same && !(types_free && inferred->SameDimensions(inst->shape()))) {
      return At(c, inst, absl::StrCat("shape is ", inst->shape().ToString(false), " but expected ",
                                      inferred->ToString(false)));
    }
  }
  (void)module;
  return CheckAcyclic(c);
}

}  // namespace

absl::Status Verify(const Module& module, const VerifyOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("module `", module.name(), "` has no entry"));
  }
  absl::flat_hash_set<const Computation*> in_module;
  for (const auto& c : module.computations()) in_module.insert(c.get());
  if (!in_module.contains(module.entry())) {
    return absl::InvalidArgumentError("the entry computation is not in the module");
  }
  for (const auto& c : module.computations()) {
    if (absl::Status s = VerifyComputation(module, *c, options, in_module); !s.ok()) return s;
  }
  if (const auto& layout = module.entry_computation_layout()) {
    const Computation& entry = *module.entry();
    if (static_cast<int64_t>(layout->parameters.size()) != entry.parameter_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry_computation_layout has ", layout->parameters.size(), " parameters; the entry has ",
          entry.parameter_count()));
    }
    for (int64_t i = 0; i < entry.parameter_count(); ++i) {
      if (!layout->parameters[i].Compatible(entry.parameter(i)->shape())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "entry_computation_layout parameter ", i, " is ", layout->parameters[i].ToString(false),
            " but the entry's is ", entry.parameter(i)->shape().ToString(false)));
      }
    }
    if (!layout->result.Compatible(entry.root()->shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry_computation_layout result is ", layout->result.ToString(false),
          " but the entry returns ", entry.root()->shape().ToString(false)));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlogym

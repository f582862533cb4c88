// DescribeModule: a module as passes see it, for tests that compare two
// modules down to storage, user and control order.
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "core/ir/module.h"

namespace hlogym {

// Everything of a module that passes can see: computations in order, and in
// each its instructions in storage order with names, ids, operand, user and
// control lists (in their order), callees, parameters, root and fusion.
inline std::string DescribeModule(const Module& module) {
  auto name = [](const Instruction* inst) { return inst == nullptr ? "null" : inst->name(); };
  std::string out = absl::StrCat(module.name(), " entry=", module.entry()->name(), "\n");
  for (const auto& comp : module.computations()) {
    absl::StrAppend(&out, comp->name(), " root=", name(comp->root()),
                    " fusion=", name(comp->fusion_instruction()), " params=");
    for (const Instruction* p : comp->parameters()) absl::StrAppend(&out, name(p), ",");
    absl::StrAppend(&out, "\n");
    for (const auto& inst : comp->instructions()) {
      absl::StrAppend(&out, "  ", inst->name(), "#", inst->unique_id(), " ",
                      std::string(OpcodeName(inst->opcode())),
                      " parent=", inst->parent() == comp.get(), " (");
      for (const Instruction* o : inst->operands()) absl::StrAppend(&out, name(o), ",");
      absl::StrAppend(&out, ") users=");
      for (const Instruction* u : inst->users()) absl::StrAppend(&out, name(u), ",");
      absl::StrAppend(&out, " preds=");
      for (const Instruction* c : inst->control_predecessors()) absl::StrAppend(&out, name(c), ",");
      absl::StrAppend(&out, " succs=");
      for (const Instruction* c : inst->control_successors()) absl::StrAppend(&out, name(c), ",");
      absl::StrAppend(&out, " calls=");
      for (const Computation* c : inst->called_computations()) {
        absl::StrAppend(&out, c == nullptr ? "null" : c->name(), ",");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  return out;
}

}  // namespace hlogym

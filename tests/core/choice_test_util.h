// Shared by the tests of choosing among alternatives (CloneWithChoices,
// ApplyChoices in place): DescribeModule, a module as passes see it, to
// compare two down to storage, user and control order, and small modules
// with alternatives nodes.
#pragma once

#include <memory>
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

// p -> negate -> negate -> exp, and add(second negation, exp) as the root.
inline std::unique_ptr<Module> NegationChainModule() {
  auto module = std::make_unique<Module>("m");
  auto comp = std::make_unique<Computation>("main");
  Shape s = Shape::Array(PrimitiveType::kF32, {4});
  Instruction* p = comp->AddInstruction(Instruction::CreateParameter(0, s, "p"));
  Instruction* n1 = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* n2 = comp->AddInstruction(Instruction::Create(Opcode::kNegate, s, {n1}));
  Instruction* e = comp->AddInstruction(Instruction::Create(Opcode::kExp, s, {n2}));
  Instruction* add = comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {n2, e}));
  comp->set_root(add);
  module->set_entry(module->AddComputation(std::move(comp)));
  return module;
}

// The chain with two alternatives nodes read by its add, one choosing the
// other (so the order of selection matters): the outer among (exp, the
// inner, negate(p)), the inner among (the second negation, abs(p)); and a
// control edge from abs(p) to exp.
inline std::unique_ptr<Module> NestedAlternativesModule() {
  std::unique_ptr<Module> module = NegationChainModule();
  Computation* main = module->entry();
  Instruction* p = main->parameter(0);
  Instruction* add = main->root();
  Instruction* n2 = add->operand(0);
  Instruction* e = add->operand(1);
  const Shape& s = p->shape();
  Instruction* abs = main->AddInstruction(Instruction::Create(Opcode::kAbs, s, {p}));
  Instruction* neg = main->AddInstruction(Instruction::Create(Opcode::kNegate, s, {p}));
  Instruction* inner =
      main->AddInstruction(Instruction::Create(Opcode::kAlternatives, s, {n2, abs}));
  Instruction* outer =
      main->AddInstruction(Instruction::Create(Opcode::kAlternatives, s, {e, inner, neg}));
  add->ReplaceOperandWith(e, outer);
  add->ReplaceOperandWith(n2, inner);
  abs->AddControlDependencyTo(e);
  return module;
}

}  // namespace hlogym

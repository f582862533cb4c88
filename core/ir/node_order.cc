#include "core/ir/node_order.h"

#include <algorithm>

namespace hlogym {

std::vector<Instruction*> NodeOrder(const Module& module) {
  std::vector<Instruction*> order;
  FillNodeOrder(module, order);
  return order;
}

bool IsCandidate(const Instruction& instruction) {
  for (const Instruction* user : instruction.users()) {
    if (user->opcode() != Opcode::kAlternatives) continue;
    for (int64_t k = 1; k < user->operand_count(); ++k) {
      if (user->operand(k) == &instruction) return true;
    }
  }
  return false;
}

ComputationScope::ComputationScope(const Module& module, NodeScope scope) {
  if (scope == NodeScope::kAll || module.entry() == nullptr) return;
  // The computations the entry reaches through calls that are no
  // candidate's: usually a few hundred, while candidates' bodies can be
  // thousands.
  all_ = false;
  reached_.insert(module.entry());
  std::vector<const Computation*> walk = {module.entry()};
  for (size_t i = 0; i < walk.size(); ++i) {
    for (const auto& inst : walk[i]->instructions()) {
      if (inst->called_computations().empty() || IsCandidate(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) {
        if (callee != nullptr && reached_.insert(callee).second) walk.push_back(callee);
      }
    }
  }
}

void FillNodeOrder(const Module& module, std::vector<Instruction*>& order,
                   std::vector<int32_t>* computations, NodeScope scope) {
  order.clear();
  order.reserve(module.instruction_count());
  if (computations != nullptr) {
    computations->clear();
    computations->reserve(module.instruction_count());
  }
  // One post-order buffer for all computations: a module holds a fused
  // computation per dry-pass candidate (~1,400 in a gpt2 step), and a fresh
  // vector for each was a malloc and a free per computation per observation.
  thread_local std::vector<Instruction*> post_order;
  const ComputationScope in_scope(module, scope);
  const auto& all = module.computations();
  int32_t numbered = 0;  // computations in scope so far
  for (size_t c = 0; c < all.size(); ++c) {
    if (!in_scope.Contains(*all[c])) continue;
    all[c]->MakePostOrder(post_order);
    order.insert(order.end(), post_order.begin(), post_order.end());
    if (computations != nullptr) {
      computations->insert(computations->end(), post_order.size(), numbered);
    }
    ++numbered;
  }
}

namespace {

template <typename Wanted>
std::vector<std::pair<Instruction*, int64_t>> Find(const Module& module, const Wanted& wanted) {
  std::vector<std::pair<Instruction*, int64_t>> found;
  int64_t offset = 0;
  for (const auto& computation : module.computations()) {
    const auto& instructions = computation->instructions();
    if (std::any_of(instructions.begin(), instructions.end(),
                    [&](const auto& inst) { return wanted(*inst); })) {
      // A post-order holds every instruction of its computation, so the
      // offsets of the computations skipped are their sizes.
      const std::vector<Instruction*> order = computation->MakePostOrder();
      for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
        if (wanted(*order[i])) found.emplace_back(order[i], offset + i);
      }
    }
    offset += computation->instruction_count();
  }
  return found;
}

}  // namespace

std::vector<std::pair<Instruction*, int64_t>> FindInNodeOrder(
    const Module& module, const std::function<bool(const Instruction&)>& wanted) {
  return Find(module, wanted);
}

std::vector<std::pair<Instruction*, int64_t>> FindInNodeOrder(const Module& module,
                                                              Opcode opcode) {
  return Find(module, [opcode](const Instruction& inst) { return inst.opcode() == opcode; });
}

}  // namespace hlogym

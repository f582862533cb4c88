#include "core/ir/node_order.h"

namespace hlogym {

std::vector<Instruction*> NodeOrder(const Module& module) {
  std::vector<Instruction*> order;
  order.reserve(module.instruction_count());
  for (const auto& computation : module.computations()) {
    for (Instruction* inst : computation->MakePostOrder()) order.push_back(inst);
  }
  return order;
}

}  // namespace hlogym

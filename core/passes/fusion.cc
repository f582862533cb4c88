#include "core/passes/fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

#include "core/base/status_macros.h"
#include "core/passes/fusion_builder.h"

namespace hlogym {
namespace {

// Whether another operand of `consumer` depends on `producer`. Fusing such a
// producer would bring it back through that operand later and copy it once
// per path, which grows exponentially on reconvergent graphs (XLA refuses
// these pairs too).
bool ReachesThroughAnotherOperand(const Instruction& consumer, const Instruction* producer) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack;
  for (const Instruction* o : consumer.operands()) {
    if (o != producer) stack.push_back(o);
  }
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst == producer) return true;
    if (!seen.insert(inst).second) continue;
    for (const Instruction* o : inst->operands()) stack.push_back(o);
  }
  return false;
}

// The distinct operands of `consumer` that may be fused into it, in order.
std::vector<Instruction*> FusibleProducers(const Instruction& consumer, FusionMode mode,
                                           const Rewriter& rewriter) {
  std::vector<Instruction*> producers;
  for (Instruction* operand : consumer.operands()) {
    if (rewriter.IsRemoved(operand)) continue;
    if (std::find(producers.begin(), producers.end(), operand) != producers.end()) continue;
    if (CanFuse(*operand, consumer, mode) && !ReachesThroughAnotherOperand(consumer, operand)) {
      producers.push_back(operand);
    }
  }
  return producers;
}

// Computations run as kernels' inner functions (reducers, comparators, scan
// bodies): XLA never fuses inside them, and neither do we.
absl::flat_hash_set<const Computation*> EmbeddedComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> embedded;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
        case Opcode::kFusion: case Opcode::kAsyncStart:
          break;
        default:
          for (const Computation* callee : inst->called_computations()) embedded.insert(callee);
      }
    }
  }
  return embedded;
}

}  // namespace

absl::StatusOr<bool> FusionPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  const absl::flat_hash_set<const Computation*> embedded = EmbeddedComputations(module);
  std::vector<Computation*> computations;
  for (const auto& c : module.computations()) {
    if (!c->IsFusionComputation() && !embedded.contains(c.get())) computations.push_back(c.get());
  }
  for (Computation* computation : computations) {
    std::vector<Instruction*> order = computation->MakePostOrder();
    if (rewriter.dry()) {
      for (Instruction* consumer : order) {
        for (Instruction* producer : FusibleProducers(*consumer, mode_, rewriter)) {
          ASSIGN_OR_RETURN(Instruction* fused,
                           FuseProducerIntoConsumer(rewriter, producer, consumer));
          RETURN_IF_ERROR(rewriter.Replace(consumer, fused));
          changed = true;
        }
      }
      continue;
    }
    // Apply: consumers from the root up, each absorbing producers in turn.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* consumer = *it;
      if (rewriter.IsRemoved(consumer)) continue;
      while (true) {
        std::vector<Instruction*> producers = FusibleProducers(*consumer, mode_, rewriter);
        if (producers.empty()) break;
        ASSIGN_OR_RETURN(Instruction* fused,
                         FuseProducerIntoConsumer(rewriter, producers.front(), consumer));
        RETURN_IF_ERROR(rewriter.Replace(consumer, fused));
        consumer = fused;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace hlogym

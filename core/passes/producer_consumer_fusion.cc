#include "core/passes/producer_consumer_fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/base/status_macros.h"
#include "core/passes/fusion_builder.h"

namespace hlogym {
namespace {

// The distinct operands of `consumer`, in operand order.
absl::InlinedVector<Instruction*, 8> DistinctOperands(const Instruction& consumer) {
  absl::InlinedVector<Instruction*, 8> operands;
  for (Instruction* operand : consumer.operands()) {
    if (std::find(operands.begin(), operands.end(), operand) == operands.end()) {
      operands.push_back(operand);
    }
  }
  return operands;
}

// The fusion computing `consumer` with `producer` inside, or null when the
// merged computation would not be emittable. `orders`: BuildFusion's.
absl::StatusOr<Instruction*> Fuse(Rewriter& rewriter, Instruction* producer,
                                  Instruction* consumer, FusedBodyOrders* orders = nullptr) {
  // One spec per thread, refilled: two fresh vectors per candidate of a dry
  // pass were two mallocs each.
  thread_local FusionSpec spec;
  spec.members.assign({producer, consumer});
  spec.outputs.assign({FusedValue{consumer, -1}});
  absl::StatusOr<Instruction*> fused = BuildFusion(rewriter, spec, nullptr, orders);
  if (!fused.ok() && absl::IsFailedPrecondition(fused.status())) return nullptr;
  return fused;
}

}  // namespace

absl::StatusOr<bool> ProducerConsumerFusionPass::FuseStepByStep(
    Rewriter& rewriter, Instruction* consumer, FusionAnalysis& analysis,
    const std::function<int64_t(const Instruction*)>& position) {
  bool changed = false;
  bool fused_one = true;
  while (fused_one) {
    fused_one = false;
    absl::InlinedVector<Instruction*, 8> producers = DistinctOperands(*consumer);
    std::stable_sort(producers.begin(), producers.end(), [&](const Instruction* a, const Instruction* b) {
      return position(a) > position(b);
    });
    for (Instruction* producer : producers) {
      if (!CanFuseProducerConsumer(*producer, *consumer, options_, analysis)) continue;
      ASSIGN_OR_RETURN(Instruction * fused, Fuse(rewriter, producer, consumer));
      if (fused == nullptr) continue;
      RETURN_IF_ERROR(rewriter.Replace(consumer, fused));
      analysis.Forget(consumer);
      consumer = fused;
      fused_one = changed = true;
      break;
    }
  }
  return changed;
}

absl::StatusOr<bool> ProducerConsumerFusionPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  FusionAnalysis analysis(module, rewriter.dry());
  // Dry mode only: the originals stay as they are while the pass runs.
  FusedBodyOrders body_orders;
  for (Computation* computation : FusibleComputations(module)) {
    const std::vector<Instruction*> order = computation->MakePostOrder();
    if (rewriter.dry()) {
      for (Instruction* consumer : order) {
        if (analysis.UserCount(*consumer) == 0 && !consumer->IsRoot()) continue;
        const LoneConsumer checked(consumer, analysis);
        for (Instruction* producer : checked.operands()) {
          if (!CanFuseProducerConsumer(*producer, checked, options_, analysis)) continue;
          ASSIGN_OR_RETURN(Instruction * fused, Fuse(rewriter, producer, consumer, &body_orders));
          if (fused == nullptr) continue;
          // The fusion reads the producer's and the consumer's operands,
          // all of which the consumer depends on: no choice of it can close
          // a cycle.
          RETURN_IF_ERROR(ReplaceOriginal(rewriter, analysis, consumer, fused,
                                          CandidateReads::kOriginalsDependencies));
          changed = true;
        }
      }
      continue;
    }
    // Apply: consumers from the root up. Each absorbs producers until none
    // is left, trying the latest operand in post-order first (so a producer
    // shared by several operands is fused once, after its users). The whole
    // fusion is planned first and built once.
    absl::flat_hash_map<const Instruction*, int64_t> position;
    for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) position[order[i]] = i;
    auto pos = [&](const Instruction* inst) {
      auto it = position.find(inst);
      return it == position.end() ? int64_t{-1} : it->second;
    };
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* consumer = *it;
      if (rewriter.IsRemoved(consumer)) continue;
      if (consumer->user_count() == 0 && !consumer->IsRoot()) continue;
      FusionGroup group(consumer, analysis);
      while (true) {
        std::vector<Instruction*> producers = group.operands();
        std::stable_sort(producers.begin(), producers.end(),
                         [&](const Instruction* a, const Instruction* b) { return pos(a) > pos(b); });
        auto next = std::find_if(producers.begin(), producers.end(), [&](Instruction* p) {
          return static_cast<bool>(CanFuseIntoGroup(*p, group, options_, analysis));
        });
        if (next == producers.end()) break;
        group.Add(*next, analysis);
      }
      if (group.members().size() < 2) continue;
      std::vector<Instruction*> members = group.members();
      std::stable_sort(members.begin(), members.end(),
                       [&](const Instruction* a, const Instruction* b) { return pos(a) < pos(b); });
      absl::StatusOr<Instruction*> fused =
          BuildFusion(rewriter, {members, {{consumer, -1}}});
      if (!fused.ok() && !absl::IsFailedPrecondition(fused.status())) return fused.status();
      if (fused.ok()) {
        RETURN_IF_ERROR(rewriter.Replace(consumer, *fused));
        changed = true;
        continue;
      }
      // The planned fusion would not emit (a rule only the built fusion
      // shows): grow it one producer at a time instead, checking each step.
      ASSIGN_OR_RETURN(const bool grown, FuseStepByStep(rewriter, consumer, analysis, pos));
      changed |= grown;
    }
  }
  return changed;
}

}  // namespace hlogym

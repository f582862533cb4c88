#include "core/passes/multi_output_fusion.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/base/status_macros.h"
#include "core/passes/fusion_builder.h"
#include "core/passes/fusion_reachability.h"

namespace hlogym {
namespace {

std::vector<Instruction*> Distinct(absl::Span<Instruction* const> list) {
  std::vector<Instruction*> out;
  for (Instruction* inst : list) {
    if (std::find(out.begin(), out.end(), inst) == out.end()) out.push_back(inst);
  }
  return out;
}

// The computation's instructions in a post-order that depends on the graph
// alone: operands first, in operand order, from the root; what the root
// does not reach after, in MakePostOrder's order. MakePostOrder follows the
// storage, which differs between a module rewritten in place and a copy of
// it; sibling merges taken in another order give other fusions.
std::vector<Instruction*> GraphPostOrder(const Computation& computation) {
  const std::vector<Instruction*> stored = computation.MakePostOrder();
  std::vector<Instruction*> order;
  order.reserve(stored.size());
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<std::pair<Instruction*, size_t>> stack;
  auto walk = [&](Instruction* start) {
    if (!seen.insert(start).second) return;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t operands = inst->operands().size();
      if (next < operands + inst->control_predecessors().size()) {
        Instruction* dep = next < operands ? inst->operand(next)
                                           : inst->control_predecessors()[next - operands];
        ++next;
        if (dep->parent() == &computation && seen.insert(dep).second) stack.emplace_back(dep, 0);
        continue;
      }
      order.push_back(inst);
      stack.pop_back();
    }
  };
  if (computation.root() != nullptr) walk(computation.root());
  for (Instruction* inst : stored) walk(inst);
  return order;
}

// Runs one pass over a computation; `dry` decides whether merges feed
// later decisions (apply) or are all offered against the unchanged graph.
class MultiOutputFuser {
 public:
  MultiOutputFuser(Computation& computation, Rewriter& rewriter, const FusionOptions& options,
                   FusionAnalysis& analysis, const MultiOutputFusionPass::MergeObserver& observer)
      : computation_(computation), rewriter_(rewriter), options_(options),
        analysis_(analysis), observer_(observer), reach_(computation) {}

  absl::StatusOr<bool> Run() {
    const std::vector<Instruction*> order = GraphPostOrder(computation_);
    for (size_t i = 0; i < order.size(); ++i) rank_[order[i]] = static_cast<int64_t>(i);
    // Uses before defs, as XLA: siblings under each instruction, then the
    // instruction as the consumer of a producer-consumer merge.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* inst = *it;
      if (rewriter_.IsRemoved(inst)) continue;
      RETURN_IF_ERROR(FuseSiblings(inst));
      if (rewriter_.IsRemoved(inst)) continue;
      RETURN_IF_ERROR(FuseProducersMultiOutput(inst));
    }
    return changed_;
  }

 private:
  absl::Status FuseSiblings(Instruction* parent) {
    if (!IsProfitableSharedOperand(*parent)) return absl::OkStatus();
    bool merged = true;
    while (merged) {
      merged = false;
      // In the graph's post-order rather than in the order the users were
      // added, which differs between a module rewritten in place and a copy.
      std::vector<Instruction*> users = analysis_.Users(*parent);
      std::stable_sort(users.begin(), users.end(), [&](Instruction* a, Instruction* b) {
        return Rank(a) < Rank(b);
      });
      for (size_t i = 0; i < users.size() && !merged; ++i) {
        for (size_t j = i + 1; j < users.size() && !merged; ++j) {
          Instruction* a = users[i];
          Instruction* b = users[j];
          if (rewriter_.dry()) {
            if (offers_[a] >= kMaxSiblingOffers || offers_[b] >= kMaxSiblingOffers) continue;
            if (!offered_pairs_.insert({std::min(a, b), std::max(a, b)}).second) continue;
          }
          if (!CanFuseSiblings(*a, *b, options_, analysis_)) continue;
          if (reach_.IsConnected(a, b)) continue;
          std::vector<FusedValue> outputs = MemberOutputs(a, analysis_);
          const std::vector<FusedValue> b_outputs = MemberOutputs(b, analysis_);
          if (outputs.empty() || b_outputs.empty()) continue;  // nothing reads one
          outputs.insert(outputs.end(), b_outputs.begin(), b_outputs.end());
          ASSIGN_OR_RETURN(Instruction * fused, Build({{a, b}, outputs}, outputs));
          if (fused == nullptr) continue;
          std::vector<OutputReplacement> done;
          ASSIGN_OR_RETURN(done, ReplaceMemberByOutputs(rewriter_, analysis_, a, fused, outputs));
          ASSIGN_OR_RETURN(std::vector<OutputReplacement> more,
                           ReplaceMemberByOutputs(rewriter_, analysis_, b, fused, outputs));
          done.insert(done.end(), more.begin(), more.end());
          changed_ = true;
          if (rewriter_.dry()) {
            ++offers_[a];
            ++offers_[b];
          } else {
            if (observer_) observer_({a, b}, *fused);
            Merged(fused, done);
            merged = true;  // the users changed: look at them again
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status FuseProducersMultiOutput(Instruction* consumer) {
    for (Instruction* producer : Distinct(consumer->operands())) {
      if (!rewriter_.dry() && rewriter_.IsRemoved(consumer)) break;
      if (!CanFuseProducerConsumerMultiOutput(*producer, *consumer, options_, analysis_)) {
        continue;
      }
      // Another path from the producer to the consumer would make the
      // consumer's other operands depend on the fusion.
      bool other_path = false;
      for (const Instruction* operand : consumer->operands()) {
        other_path |= operand != producer && reach_.IsReachable(producer, operand);
      }
      if (other_path) continue;
      std::vector<FusedValue> outputs = MemberOutputs(consumer, analysis_);
      if (outputs.empty()) continue;
      outputs.push_back({producer, -1});
      ASSIGN_OR_RETURN(Instruction * fused, Build({{producer, consumer}, outputs}, outputs));
      if (fused == nullptr) continue;
      int64_t producer_output = 0;
      while (outputs[producer_output].member != producer) ++producer_output;
      ASSIGN_OR_RETURN(std::vector<OutputReplacement> done,
                       ReplaceMemberByOutputs(rewriter_, analysis_, consumer, fused, outputs));
      Instruction* produced = AddGetTupleElement(rewriter_, fused, producer_output);
      const std::vector<Instruction*> users = analysis_.Users(*producer);
      for (Instruction* user : users) {
        if (user != consumer) RETURN_IF_ERROR(rewriter_.ReplaceUse(producer, user, produced));
      }
      done.push_back({producer, produced});
      changed_ = true;
      if (!rewriter_.dry()) {
        if (observer_) observer_({producer, consumer}, *fused);
        Merged(fused, done);
        return absl::OkStatus();  // the consumer is gone
      }
    }
    return absl::OkStatus();
  }

  // The new fusion, or null when the merge is not emittable. `outputs`
  // receives spec's outputs in the fusion's order.
  absl::StatusOr<Instruction*> Build(const FusionSpec& spec, std::vector<FusedValue>& outputs) {
    absl::StatusOr<Instruction*> fused = BuildFusion(rewriter_, spec, &outputs);
    if (!fused.ok() && absl::IsFailedPrecondition(fused.status())) return nullptr;
    return fused;
  }

  // An instruction's place in the computation's post-order when the pass
  // began; a merge made since takes its first member's.
  int64_t Rank(const Instruction* inst) const {
    auto it = rank_.find(inst);
    return it == rank_.end() ? std::numeric_limits<int64_t>::max() : it->second;
  }

  // Apply mode: keeps reachability and ranks true after a merge.
  void Merged(Instruction* fused, const std::vector<OutputReplacement>& done) {
    std::vector<const Instruction*> parts, replacements;
    int64_t rank = std::numeric_limits<int64_t>::max();
    for (const OutputReplacement& r : done) {
      parts.push_back(r.original);
      replacements.push_back(r.replacement);
      rank = std::min(rank, Rank(r.original));
    }
    rank_[fused] = rank;
    for (const Instruction* replacement : replacements) rank_[replacement] = rank;
    reach_.Merge(fused, parts, replacements);
  }

  Computation& computation_;
  Rewriter& rewriter_;
  const FusionOptions& options_;
  FusionAnalysis& analysis_;
  const MultiOutputFusionPass::MergeObserver& observer_;
  ReachabilityMap reach_;
  absl::flat_hash_map<const Instruction*, int64_t> rank_;
  bool changed_ = false;
  // Dry mode: offers per instruction, and the sibling pairs already offered.
  absl::flat_hash_map<const Instruction*, int64_t> offers_;
  absl::flat_hash_set<std::pair<const Instruction*, const Instruction*>> offered_pairs_;
};

}  // namespace

absl::StatusOr<bool> MultiOutputFusionPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  FusionAnalysis analysis(module, rewriter.dry());
  for (Computation* computation : FusibleComputations(module)) {
    MultiOutputFuser fuser(*computation, rewriter, options_, analysis, observer_);
    ASSIGN_OR_RETURN(const bool fused, fuser.Run());
    changed |= fused;
  }
  return changed;
}

}  // namespace hlogym

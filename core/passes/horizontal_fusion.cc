#include "core/passes/horizontal_fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "core/base/status_macros.h"
#include "core/passes/fusion_builder.h"
#include "core/passes/fusion_emittable.h"
#include "core/passes/fusion_reachability.h"

namespace hlogym {
namespace {

// Groups `candidates` by output dimensions, keeping first-seen order.
std::vector<std::vector<Instruction*>> GroupByDimensions(
    const std::vector<Instruction*>& candidates) {
  std::vector<std::vector<Instruction*>> groups;
  for (Instruction* inst : candidates) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front()->shape().SameDimensions(inst->shape());
    });
    if (it == groups.end()) {
      groups.push_back({inst});
    } else {
      it->push_back(inst);
    }
  }
  return groups;
}

class HorizontalFuser {
 public:
  HorizontalFuser(Computation& computation, Rewriter& rewriter, const FusionOptions& options,
                  FusionAnalysis& analysis)
      : rewriter_(rewriter), options_(options), analysis_(analysis), reach_(computation) {
    order_ = computation.MakePostOrder();
  }

  absl::StatusOr<bool> Run() {
    for (Instruction* consumer : order_) {
      if (rewriter_.IsRemoved(consumer)) continue;
      std::vector<Instruction*> candidates;
      for (Instruction* operand : consumer->operands()) {
        if (std::find(candidates.begin(), candidates.end(), operand) != candidates.end()) continue;
        if (rewriter_.IsRemoved(operand)) continue;
        if (IsHorizontalCandidate(*operand, options_, analysis_)) candidates.push_back(operand);
      }
      if (candidates.size() < 2) continue;
      for (const std::vector<Instruction*>& group : GroupByDimensions(candidates)) {
        // Split the group into fusions within the operand budget; each
        // member independent of those already taken.
        std::vector<Instruction*> rest = group;
        while (rest.size() >= 2) {
          std::vector<Instruction*> members, left;
          absl::flat_hash_set<const Instruction*> operands;
          for (Instruction* inst : rest) {
            bool fits = std::none_of(members.begin(), members.end(), [&](Instruction* m) {
              return reach_.IsConnected(m, inst);
            });
            if (fits) {
              absl::flat_hash_set<const Instruction*> grown = operands;
              grown.insert(inst->operands().begin(), inst->operands().end());
              const int64_t limit = options_.xla() ? kMaxFusionOperands : kMaxKernelBuffers;
              fits = static_cast<int64_t>(grown.size() + members.size() + 1) <= limit;
              if (fits) operands = std::move(grown);
            }
            (fits ? members : left).push_back(inst);
          }
          if (members.size() < 2) break;
          RETURN_IF_ERROR(Fuse(members));
          rest = std::move(left);
        }
      }
    }
    return changed_;
  }

 private:
  absl::Status Fuse(const std::vector<Instruction*>& members) {
    std::vector<FusedValue> outputs;
    for (Instruction* m : members) outputs.push_back({m, -1});
    absl::StatusOr<Instruction*> fused = BuildFusion(rewriter_, {members, outputs}, &outputs);
    if (!fused.ok()) {
      return absl::IsFailedPrecondition(fused.status()) ? absl::OkStatus() : fused.status();
    }
    std::vector<const Instruction*> parts, replacements;
    for (size_t k = 0; k < members.size(); ++k) {
      ASSIGN_OR_RETURN(std::vector<OutputReplacement> done,
                       ReplaceMemberByOutputs(rewriter_, analysis_, members[k], *fused, outputs));
      for (const OutputReplacement& r : done) {
        parts.push_back(r.original);
        replacements.push_back(r.replacement);
      }
    }
    if (!rewriter_.dry()) reach_.Merge(*fused, parts, replacements);
    changed_ = true;
    return absl::OkStatus();
  }

  Rewriter& rewriter_;
  const FusionOptions& options_;
  FusionAnalysis& analysis_;
  ReachabilityMap reach_;
  std::vector<Instruction*> order_;
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<bool> HorizontalFusionPass::Run(Module& module, Rewriter& rewriter) {
  bool changed = false;
  FusionAnalysis analysis(module, rewriter.dry());
  for (Computation* computation : FusibleComputations(module)) {
    HorizontalFuser fuser(*computation, rewriter, options_, analysis);
    ASSIGN_OR_RETURN(const bool fused, fuser.Run());
    changed |= fused;
  }
  return changed;
}

}  // namespace hlogym

#include "agents/choice_groups.h"

#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "core/base/status_macros.h"
#include "core/rewrite/decisions.h"

namespace hlogym {

std::vector<ChoiceGroup> GroupAlternatives(absl::Span<const AlternativeNode> alternatives) {
  std::vector<ChoiceGroup> groups;
  // Key: the node's operands (original first, then the candidates), as a
  // view of its operand list (hashed and compared by content; a vector per
  // node was most of this on the large samplers' thousands of nodes).
  absl::flat_hash_map<absl::Span<Instruction* const>, size_t> index;
  index.reserve(alternatives.size());
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const Instruction* node = alternatives[i].node;
    auto [it, inserted] = index.try_emplace(node->operands(), groups.size());
    if (inserted) {
      ChoiceGroup group;
      group.num_choices = node->operand_count();
      group.original = node->operand(0);
      group.candidates.assign(node->operands().begin() + 1, node->operands().end());
      groups.push_back(std::move(group));
    }
    groups[it->second].members.push_back(static_cast<int64_t>(i));
  }
  return groups;
}

std::vector<int64_t> ExpandGroupChoices(const std::vector<ChoiceGroup>& groups,
                                        absl::Span<const int64_t> group_choices,
                                        int64_t num_alternatives) {
  std::vector<int64_t> choices(num_alternatives, 0);
  for (size_t g = 0; g < groups.size() && g < group_choices.size(); ++g) {
    for (int64_t member : groups[g].members) choices[member] = group_choices[g];
  }
  return choices;
}

absl::StatusOr<double> LookaheadRuntime(const HloRewriteEnv& env,
                                        absl::Span<const int64_t> choices) {
  // Copies only what the choices keep: the unchosen candidates of a dry pass
  // can outnumber the module's own instructions several times.
  ASSIGN_OR_RETURN(std::unique_ptr<Module> copy, CloneWithChoices(env.module(), env.alternatives(), choices));
  RETURN_IF_ERROR(RunPassSpecs(env.spec().post_passes, *copy));
  return env.benchmarks().runtime().Runtime(*copy);
}

namespace {

// Post-passes whose effect on a lookahead the view sees: DCE is the pruning
// the view does, and what CSE changes it costs or leaves to a copy (see
// backend/cost_after_choices.h).
bool OnlyCleansUp(const std::vector<std::string>& post_passes) {
  return std::all_of(post_passes.begin(), post_passes.end(),
                     [](const std::string& pass) { return pass == "cse" || pass == "dce"; });
}

}  // namespace

Lookahead::Lookahead(const HloRewriteEnv& env) : env_(&env) {
  const DeviceSpec* device = env.benchmarks().runtime().cost_model_device();
  if (device == nullptr || !OnlyCleansUp(env.spec().post_passes)) return;
  // Not supported (an alternatives node inside a fused computation) leaves
  // the copies.
  absl::StatusOr<CostAfterChoices> view =
      CostAfterChoices::Create(env.module(), env.alternatives(), *device,
                               absl::c_linear_search(env.spec().post_passes, "cse"));
  if (view.ok()) view_.emplace(std::move(*view));
}

absl::StatusOr<double> Lookahead::Runtime(absl::Span<const int64_t> choices) const {
  if (view_.has_value()) {
    ASSIGN_OR_RETURN(std::optional<double> seconds, view_->Seconds(choices));
    if (seconds.has_value()) return *seconds;
  }
  copies_.fetch_add(1, std::memory_order_relaxed);
  return LookaheadRuntime(*env_, choices);
}

// What an operand stands for: in the alternative graph a consumer reads its
// producers through alternatives nodes whose operand 0 is the original.
static const Instruction* Original(const Instruction* operand) {
  return operand->opcode() == Opcode::kAlternatives ? operand->operand(0) : operand;
}

// The producer a fusion candidate took in: the one operand of `consumer`
// that the candidate no longer reads (its own operands come in instead;
// candidates read the originals). Null when that is not exactly one operand.
const Instruction* FusedProducer(const Instruction& consumer, const Instruction& candidate) {
  const Instruction* producer = nullptr;
  const auto& read = candidate.operands();
  for (const Instruction* operand : consumer.operands()) {
    const Instruction* original = Original(operand);
    if (std::find(read.begin(), read.end(), original) != read.end() ||
        std::find(read.begin(), read.end(), operand) != read.end()) {
      continue;
    }
    if (producer != nullptr && producer != original) return nullptr;
    producer = original;
  }
  return producer;
}

bool IsProducerConsumerFusion(const std::string& dry_pass) {
  return dry_pass == "fusion" || dry_pass.rfind("fusion(", 0) == 0;
}

absl::Status CheckActable(const HloRewriteEnv& env) {
  if (!env.in_episode()) {
    return absl::FailedPreconditionError("the agent was shown an env before reset: call reset first");
  }
  return absl::OkStatus();
}

}  // namespace hlogym

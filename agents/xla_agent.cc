#include "agents/xla_agent.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agents/choice_groups.h"
#include "agents/episode_runner.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "core/passes/multi_output_fusion.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "envs/benchmark_set.h"

namespace hlogym {
namespace {

bool StartsWith(const std::string& dry_pass, const char* pass) {
  return dry_pass.rfind(pass, 0) == 0;
}

// Multi-output and horizontal fusion offer each member's uses the outputs
// (get-tuple-elements) of every fusion the member could join. Apply mode
// merges them one after the other, each member into one fusion; so the
// agent takes the offered fusions in the order the pass made them, each one
// whose members are all still free and, where `wanted` is given, that it
// wants; each member's uses read that fusion. (What a merge makes possible
// next, e.g. a third sibling, the pass offers in the next step.)
using MemberFilter = std::function<bool(const std::vector<const Instruction*>&)>;
std::vector<int64_t> FreeMemberFusions(const std::vector<ChoiceGroup>& groups,
                                       const MemberFilter& wanted = nullptr) {
  std::vector<int64_t> group_choices(groups.size(), 0);
  // Per fusion, in the order first offered: the (group, choice) that read it.
  std::vector<const Instruction*> order;
  absl::flat_hash_map<const Instruction*, std::vector<std::pair<size_t, int64_t>>> readers;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t c = 0; c < groups[g].candidates.size(); ++c) {
      const Instruction* candidate = groups[g].candidates[c];
      const Instruction* fusion = candidate->opcode() == Opcode::kGetTupleElement
                                      ? candidate->operand(0)
                                      : candidate;
      auto [it, inserted] = readers.try_emplace(fusion);
      if (inserted) order.push_back(fusion);
      it->second.emplace_back(g, static_cast<int64_t>(c) + 1);
    }
  }
  // Instructions get increasing ids as they are added: the fusions' ids
  // give the order in which the pass offered them.
  std::sort(order.begin(), order.end(), [](const Instruction* a, const Instruction* b) {
    return a->unique_id() < b->unique_id();
  });
  std::vector<bool> taken(groups.size(), false);
  // A fusion offered now reads its operands as they are. Apply mode makes
  // the merges one after the other, so a fusion reading a member of another
  // merge reads that merge's output; taken in one step, it would read the
  // member, kept alive beside the merge: the pair waits a step instead.
  absl::flat_hash_set<const Instruction*> merged_members, read_by_taken;
  for (const Instruction* fusion : order) {
    const auto& members = readers.at(fusion);
    if (std::any_of(members.begin(), members.end(), [&](const auto& m) {
          return taken[m.first] || read_by_taken.contains(groups[m.first].original);
        })) {
      continue;
    }
    if (std::any_of(fusion->operands().begin(), fusion->operands().end(),
                    [&](const Instruction* operand) { return merged_members.contains(operand); })) {
      continue;
    }
    std::vector<const Instruction*> originals;
    for (const auto& [g, choice] : members) originals.push_back(groups[g].original);
    if (wanted != nullptr && !wanted(originals)) continue;
    for (const auto& [g, choice] : members) {
      group_choices[g] = choice;
      taken[g] = true;
    }
    merged_members.insert(originals.begin(), originals.end());
    read_by_taken.insert(fusion->operands().begin(), fusion->operands().end());
  }
  return group_choices;
}

// For every outer instruction of `before` that fusion merged away in
// `after`, the unique id of the fusion of `after` its users now read
// instead (for a tuple-shaped one read only through get-tuple-elements,
// theirs). One whose users were all merged away too is left out: where it
// went (with them, or into another fusion they read) the result does not
// tell.
absl::flat_hash_map<int64_t, int64_t> MergedInto(const Module& before, const Module& after) {
  absl::flat_hash_map<int64_t, int64_t> merged;
  for (const auto& computation : before.computations()) {
    const Computation* result = after.FindComputation(computation->name());
    if (result == nullptr) continue;
    absl::flat_hash_map<int64_t, const Instruction*> kept;
    for (const auto& inst : result->instructions()) kept[inst->unique_id()] = inst.get();
    std::vector<const Instruction*> gone;
    for (const auto& inst : computation->instructions()) {
      if (!kept.contains(inst->unique_id())) gone.push_back(inst.get());
    }
    for (const Instruction* inst : gone) {
      for (const Instruction* user : inst->users()) {
        auto it = kept.find(user->unique_id());
        if (it == kept.end()) continue;
        for (size_t i = 0; i < user->operands().size(); ++i) {
          if (user->operand(i) != inst) continue;
          const Instruction* read = it->second->operand(i);
          if (read->opcode() == Opcode::kGetTupleElement) read = read->operand(0);
          if (read->opcode() == Opcode::kFusion) merged[inst->unique_id()] = read->unique_id();
        }
      }
    }
    for (const Instruction* inst : gone) {
      const auto& users = inst->users();
      if (merged.contains(inst->unique_id()) ||
          !std::all_of(users.begin(), users.end(), [](const Instruction* user) {
            return user->opcode() == Opcode::kGetTupleElement;
          })) {
        continue;
      }
      for (const Instruction* user : users) {
        auto it = merged.find(user->unique_id());
        if (it == merged.end()) continue;
        merged[inst->unique_id()] = it->second;
        break;
      }
    }
  }
  return merged;
}

// The member a multi-output or horizontal fusion merges: the group's
// original, or the tuple-shaped instruction whose element it is.
const Instruction* Member(const Instruction* original) {
  return original->opcode() == Opcode::kGetTupleElement ? original->operand(0) : original;
}

// Multi-output fusion: of the fusions offered, those whose members one
// fusion of one apply-mode run takes in together. The run is the
// pipeline's for this round: from the module the round began on (later
// steps see it partly merged, where a run merges more, e.g. a sibling into a
// fusion the round made, which the pipeline leaves to its next round). The
// pass merges a sibling into the fusion it just made before looking
// further, which pair by pair merges reach only in that order. A member the
// round made stands for what it took in of the round's start, as far as
// its readers there tell (all it took in is of one fusion of the run: the
// steps took it so).
absl::StatusOr<std::vector<int64_t>> ApplyModeMerges(const HloRewriteEnv& env,
                                                     const std::vector<ChoiceGroup>& groups) {
  ASSIGN_OR_RETURN(std::unique_ptr<Module> start, env.RoundStartModule());
  // Per fusion the round made: the members of its start it took in (a
  // tuple-shaped one for its get-tuple-elements, as the pass merges it).
  absl::flat_hash_map<int64_t, std::vector<int64_t>> taken_in;
  {
    absl::flat_hash_set<int64_t> elements;
    for (const auto& computation : start->computations()) {
      for (const auto& inst : computation->instructions()) {
        if (inst->opcode() == Opcode::kGetTupleElement) elements.insert(inst->unique_id());
      }
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Module> now, EndModule(env));
    for (const auto& [inst, fusion] : MergedInto(*start, *now)) {
      if (!elements.contains(inst)) taken_in[fusion].push_back(inst);
    }
  }
  // The run, on the round's start, and per merge the fusion that took in
  // each of its members (a fusion the run made may be merged on).
  ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(env.info().dry_pass));
  auto* multi_output = dynamic_cast<MultiOutputFusionPass*>(pass.get());
  if (multi_output == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("`", env.info().dry_pass, "` is no multi-output fusion pass"));
  }
  absl::flat_hash_map<int64_t, int64_t> merged_into;
  multi_output->set_merge_observer(
      [&](const std::vector<const Instruction*>& members, const Instruction& fusion) {
        for (const Instruction* member : members) merged_into[member->unique_id()] = fusion.unique_id();
      });
  RETURN_IF_ERROR(RunPass(*pass, *start).status());
  // The fusion of the run's result that took `id` (of the round's start) in.
  auto planned = [&](int64_t id) -> std::optional<int64_t> {
    auto it = merged_into.find(id);
    if (it == merged_into.end()) return std::nullopt;
    for (auto next = merged_into.find(it->second); next != merged_into.end();
         next = merged_into.find(it->second)) {
      it = next;
    }
    return it->second;
  };
  const int64_t round_first_id = env.round_first_id();
  return FreeMemberFusions(groups, [&](const std::vector<const Instruction*>& originals) {
    std::optional<int64_t> into;
    for (const Instruction* original : originals) {
      const int64_t member = Member(original)->unique_id();
      std::vector<int64_t> parts = {member};
      if (member >= round_first_id) {
        auto it = taken_in.find(member);
        if (it == taken_in.end()) return false;
        parts = it->second;
      }
      for (int64_t part : parts) {
        const std::optional<int64_t> fusion = planned(part);
        if (!fusion.has_value() || (into.has_value() && *into != *fusion)) return false;
        into = fusion;
      }
    }
    return into.has_value();
  });
}

// The instructions of the module before the dry pass that read `value`
// (offered candidates left out; a use the pass rewrote counts through its
// alternatives node).
int64_t OriginalReaders(const Instruction& value,
                        const absl::flat_hash_set<const Instruction*>& offered) {
  absl::flat_hash_set<const Instruction*> readers;
  for (const Instruction* user : value.users()) {
    if (user->opcode() == Opcode::kAlternatives) {
      if (user->operand(0) != &value) continue;  // `value` is a candidate's operand there
      for (const Instruction* reader : user->users()) {
        if (!offered.contains(reader)) readers.insert(reader);
      }
    } else if (!offered.contains(user)) {
      readers.insert(user);
    }
  }
  return static_cast<int64_t>(readers.size());
}

// Producer-consumer fusion: each consumer no user can still absorb fuses
// its latest operand in post-order, as XLA visits consumers from the root up.
// A fusion made in this round of the pass (id from `round_first_id` on) is
// not copied into a consumer while it has other readers: one run of the pass
// visits consumers from the root up, so no fusion it makes is a producer of
// a later one, and the next round comes after multi-output fusion has had
// its turn (the pipeline's fixed-point loop), which may merge it instead.
// Its one reader may take it: that is the run's plan for the reader, which
// took the producer's ops once all their other readers had joined, where
// the steps let them fuse among themselves first.
std::vector<int64_t> ProducerConsumerChoices(const std::vector<ChoiceGroup>& groups,
                                             int64_t round_first_id) {
  std::vector<int64_t> group_choices(groups.size(), 0);
  // Post-order positions, per computation, computed when first needed.
  absl::flat_hash_map<const Computation*, absl::flat_hash_map<const Instruction*, int64_t>>
      positions;
  auto position = [&](const Instruction* inst) -> int64_t {
    auto [it, inserted] = positions.try_emplace(inst->parent());
    if (inserted) {
      const std::vector<Instruction*> order = inst->parent()->MakePostOrder();
      for (size_t i = 0; i < order.size(); ++i) it->second[order[i]] = static_cast<int64_t>(i);
    }
    auto found = it->second.find(inst);
    return found == it->second.end() ? -1 : found->second;
  };
  // The producer each candidate fuses in, and every producer some
  // consumer could absorb now.
  std::vector<std::vector<const Instruction*>> producers(groups.size());
  std::vector<std::vector<bool>> copies_round_fusion(groups.size());
  absl::flat_hash_set<const Instruction*> absorbable, offered;
  for (const ChoiceGroup& group : groups) {
    offered.insert(group.candidates.begin(), group.candidates.end());
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const Instruction* candidate : groups[g].candidates) {
      const Instruction* producer = FusedProducer(*groups[g].original, *candidate);
      const bool copies = producer != nullptr && producer->unique_id() >= round_first_id &&
                        OriginalReaders(*producer, offered) > 1;
      producers[g].push_back(producer);
      copies_round_fusion[g].push_back(copies);
      if (producer != nullptr && !copies) absorbable.insert(producer);
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    // XLA visits consumers from the root up, so a consumer that one of its
    // users could still absorb waits: it is either absorbed whole, or
    // fuses its own producers once no user can take it any more.
    if (absorbable.contains(groups[g].original)) {
      group_choices[g] = 0;
      continue;
    }
    int64_t latest = -2;
    for (size_t c = 0; c < producers[g].size(); ++c) {
      if (copies_round_fusion[g][c]) continue;
      const int64_t pos = producers[g][c] == nullptr ? -1 : position(producers[g][c]);
      if (pos > latest) {
        latest = pos;
        group_choices[g] = static_cast<int64_t>(c) + 1;
      }
    }
  }
  // A fusion taken now reads its producer's operands as they are: a
  // consumer among them that fused too would stay behind, copied, for it.
  // XLA's run fuses that consumer after, and the fusion reads the result;
  // so it waits a step, and then fuses with the fusion reading it.
  absl::flat_hash_set<const Instruction*> newly_read;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (group_choices[g] == 0) continue;
    const Instruction* original = groups[g].original;
    for (const Instruction* operand : groups[g].candidates[group_choices[g] - 1]->operands()) {
      if (std::find(original->operands().begin(), original->operands().end(), operand) ==
          original->operands().end()) {
        newly_read.insert(operand);
      }
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (newly_read.contains(groups[g].original)) group_choices[g] = 0;
  }
  return group_choices;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> XlaAgent::Act(const HloRewriteEnv& env) {
  RETURN_IF_ERROR(CheckActable(env));
  const int64_t num_alternatives = static_cast<int64_t>(env.alternatives().size());
  const std::vector<ChoiceGroup> groups = GroupAlternatives(env.alternatives());
  // Apply mode takes the first rewrite a pass finds, candidate 1.
  std::vector<int64_t> group_choices(groups.size(), 1);
  if (StartsWith(env.info().dry_pass, "multi-output-fusion")) {
    ASSIGN_OR_RETURN(group_choices, ApplyModeMerges(env, groups));
  } else if (StartsWith(env.info().dry_pass, "horizontal-fusion")) {
    group_choices = FreeMemberFusions(groups);
  } else if (IsProducerConsumerFusion(env.info().dry_pass)) {
    group_choices = ProducerConsumerChoices(groups, env.round_first_id());
  }
  return ExpandGroupChoices(groups, group_choices, num_alternatives);
}

}  // namespace hlogym

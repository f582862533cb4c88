#include "agents/random_agent.h"

#include "absl/strings/str_cat.h"
#include "agents/choice_groups.h"
#include "core/base/status_macros.h"
#include "core/rewrite/decisions.h"

namespace hlogym {

absl::StatusOr<std::vector<int64_t>> RandomAgent::Act(const HloRewriteEnv& env) {
  RETURN_IF_ERROR(CheckActable(env));
  const int64_t num_alternatives = static_cast<int64_t>(env.alternatives().size());
  const std::vector<ChoiceGroup> groups = GroupAlternatives(env.alternatives());
  std::vector<int64_t> num_choices;
  for (const ChoiceGroup& group : groups) num_choices.push_back(group.num_choices);
  ASSIGN_OR_RETURN(std::vector<int64_t> group_choices, Choose(num_choices));
  return ExpandGroupChoices(groups, group_choices, num_alternatives);
}

absl::StatusOr<std::vector<int64_t>> RandomAgent::Choose(
    absl::Span<const int64_t> num_choices) {
  std::vector<int64_t> choices;
  choices.reserve(num_choices.size());
  for (size_t i = 0; i < num_choices.size(); ++i) {
    if (num_choices[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "alternative ", i, " has ", num_choices[i], " choices; it needs at least 1"));
    }
    std::uniform_int_distribution<int64_t> pick(0, num_choices[i] - 1);
    choices.push_back(pick(rng_));
  }
  return choices;
}

}  // namespace hlogym

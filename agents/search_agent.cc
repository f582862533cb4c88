#include "agents/search_agent.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "agents/choice_groups.h"
#include "core/base/status_macros.h"
#include "core/rewrite/decisions.h"

namespace hlogym {
namespace {

bool Done(const HloRewriteEnv& env) {
  return env.info().terminated || env.info().truncated;
}

// A step that would outgrow the env's graph limits (the env refuses it and
// stays as it was) ends that line of planning, not the plan.
bool AtGraphLimit(const absl::Status& status) { return absl::IsResourceExhausted(status); }

// A state reached on a fork, with the steps that led there from the root.
struct Node {
  std::unique_ptr<HloRewriteEnv> env;
  std::vector<std::vector<int64_t>> path;
  std::vector<uint64_t> fingerprints;  // before each step of `path`
};

}  // namespace

std::string SearchAgent::name() const {
  return absl::StrCat("search(budget=", options_.budget, ", beam=", options_.beam,
                      ", branch=", options_.branch,
                      options_.seconds > 0 ? absl::StrCat(", seconds=", options_.seconds) : "", ")");
}

absl::StatusOr<std::vector<int64_t>> SearchAgent::Act(const HloRewriteEnv& env) {
  RETURN_IF_ERROR(CheckActable(env));
  const EnvInfo& info = env.info();
  auto find_step = [&]() -> const PlanStep* {
    for (const PlanStep& s : plan_) {
      if (s.fingerprint == info.fingerprint && s.step == info.step) return &s;
    }
    return nullptr;
  };
  const PlanStep* planned = find_step();
  const bool at_end =
      plans_ > 0 && info.fingerprint == final_fingerprint_ && info.step >= final_step_;
  if (planned == nullptr && !at_end) {
    RETURN_IF_ERROR(Plan(env));
    planned = find_step();
  }
  const int64_t num_alternatives = static_cast<int64_t>(env.alternatives().size());
  if (planned != nullptr && static_cast<int64_t>(planned->choices.size()) == num_alternatives) {
    return planned->choices;
  }
  return std::vector<int64_t>(num_alternatives, 0);
}

absl::Status SearchAgent::Plan(const HloRewriteEnv& env) {
  ++plans_;
  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return options_.seconds > 0 &&
           std::chrono::steady_clock::now() - start > std::chrono::seconds(options_.seconds);
  };
  Node best{env.Fork(), {}, {}};
  double best_runtime = env.info().current_runtime;
  auto consider = [&](const Node& node) {
    if (node.env->info().current_runtime < best_runtime) {
      best_runtime = node.env->info().current_runtime;
      best.path = node.path;
      best.fingerprints = node.fingerprints;
      best.env = node.env->Fork();
    }
  };
  auto step = [&](const Node& from, const std::vector<int64_t>& choices)
      -> absl::StatusOr<Node> {
    Node child{from.env->Fork(), from.path, from.fingerprints};
    child.fingerprints.push_back(from.env->info().fingerprint);
    RETURN_IF_ERROR(child.env->Step(choices).status());
    child.path.push_back(choices);
    return child;
  };

  // Seeds: the greedy and xla policies to the end; every prefix counts.
  // The greedy run's choices are kept, by state, to vary in the beam (a
  // fresh greedy lookahead per beam state would cost more than the beam).
  absl::flat_hash_map<uint64_t, std::vector<int64_t>> greedy_choice;
  auto all_zero = [](const std::vector<int64_t>& choices) {
    return std::all_of(choices.begin(), choices.end(), [](int64_t c) { return c == 0; });
  };
  // Greedy stops fusing at a plateau (all-0 choices from then on leave the
  // module as it is); xla then carries on from there as a third seed.
  Node plateau{nullptr, {}, {}};
  {
    Node node{env.Fork(), {}, {}};
    while (!Done(*node.env)) {
      absl::StatusOr<std::vector<int64_t>> choices = greedy_.Act(*node.env);
      if (AtGraphLimit(choices.status())) break;
      RETURN_IF_ERROR(choices.status());
      greedy_choice.try_emplace(node.env->info().fingerprint, *choices);
      if (all_zero(*choices) || out_of_time()) {
        plateau = std::move(node);
        break;
      }
      absl::StatusOr<Node> next = step(node, *choices);
      if (AtGraphLimit(next.status())) break;
      ASSIGN_OR_RETURN(node, std::move(next));
      consider(node);
    }
  }
  std::vector<Node> xla_starts;
  xla_starts.push_back(Node{env.Fork(), {}, {}});
  if (plateau.env != nullptr && plateau.env->info().step > env.info().step) {
    xla_starts.push_back(std::move(plateau));
  }
  for (Node& node : xla_starts) {
    while (!Done(*node.env)) {
      ASSIGN_OR_RETURN(std::vector<int64_t> choices, xla_.Act(*node.env));
      absl::StatusOr<Node> next = step(node, choices);
      if (AtGraphLimit(next.status())) break;
      ASSIGN_OR_RETURN(node, std::move(next));
      consider(node);
    }
  }

  // The beam.
  int64_t budget = options_.budget;
  std::vector<Node> beam;
  beam.push_back(Node{env.Fork(), {}, {}});
  // A module met again later has fewer steps left: never better.
  absl::flat_hash_set<uint64_t> seen = {env.info().fingerprint};
  while (budget > 0 && !beam.empty() && !out_of_time()) {
    std::vector<Node> children;
    for (const Node& node : beam) {
      if (Done(*node.env) || budget <= 0) continue;
      const int64_t num_alternatives =
          static_cast<int64_t>(node.env->alternatives().size());
      const std::vector<ChoiceGroup> groups = GroupAlternatives(node.env->alternatives());
      std::vector<std::vector<int64_t>> candidates;
      ASSIGN_OR_RETURN(std::vector<int64_t> xla, xla_.Act(*node.env));
      auto greedy_it = greedy_choice.find(node.env->info().fingerprint);
      const std::vector<int64_t>& greedy =
          greedy_it != greedy_choice.end() ? greedy_it->second : xla;
      candidates.push_back(greedy);
      candidates.push_back(xla);
      for (int64_t b = 0; b < options_.branch && !groups.empty(); ++b) {
        std::vector<int64_t> varied = (b % 2 == 0) ? greedy : xla;
        std::uniform_int_distribution<size_t> pick_group(0, groups.size() - 1);
        const ChoiceGroup& group = groups[pick_group(rng_)];
        std::uniform_int_distribution<int64_t> pick_choice(0, group.num_choices - 1);
        const int64_t choice = pick_choice(rng_);
        for (int64_t m : group.members) varied[m] = choice;
        candidates.push_back(std::move(varied));
      }
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      for (const std::vector<int64_t>& choices : candidates) {
        if (budget <= 0) break;
        if (static_cast<int64_t>(choices.size()) != num_alternatives) continue;
        --budget;
        absl::StatusOr<Node> next = step(node, choices);
        if (AtGraphLimit(next.status())) continue;
        ASSIGN_OR_RETURN(Node child, std::move(next));
        if (!seen.insert(child.env->info().fingerprint).second) {
          continue;
        }
        consider(child);
        children.push_back(std::move(child));
      }
    }
    std::stable_sort(children.begin(), children.end(), [](const Node& a, const Node& b) {
      return a.env->info().current_runtime < b.env->info().current_runtime;
    });
    if (static_cast<int64_t>(children.size()) > options_.beam) children.resize(options_.beam);
    beam = std::move(children);
  }

  // The plan: the path to the best state, then keeping the originals.
  plan_.clear();
  for (size_t i = 0; i < best.path.size(); ++i) {
    plan_.push_back({best.fingerprints[i], env.info().step + static_cast<int64_t>(i),
                     best.path[i]});
  }
  final_fingerprint_ = best.env->info().fingerprint;
  final_step_ = best.env->info().step;
  planned_runtime_ = best_runtime;
  return absl::OkStatus();
}

}  // namespace hlogym

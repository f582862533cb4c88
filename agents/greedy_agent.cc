#include "agents/greedy_agent.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "agents/choice_groups.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"
#include "core/rewrite/decisions.h"

namespace hlogym {
namespace {

// How much slower a plateau move may be (see Act).
constexpr double kPlateauSlack = 0.01;

// A move sets some groups to some choices: one group to one candidate, or,
// under producer-consumer fusion, every group that can take a producer to
// the candidate fusing it (a producer with several users disappears only
// when all of them absorb it, which no single-group move can show).
struct Move {
  std::vector<std::pair<size_t, int64_t>> assignments;  // (group, choice)
  double runtime = std::numeric_limits<double>::infinity();
};

std::vector<Move> Moves(const std::vector<ChoiceGroup>& groups, bool fusion) {
  std::vector<Move> moves;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int64_t c = 1; c < groups[g].num_choices; ++c) moves.push_back({{{g, c}}});
  }
  if (!fusion) return moves;
  absl::flat_hash_map<const Instruction*, size_t> by_producer;
  std::vector<Move> joint;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t c = 0; c < groups[g].candidates.size(); ++c) {
      const Instruction* producer = FusedProducer(*groups[g].original, *groups[g].candidates[c]);
      if (producer == nullptr) continue;
      auto [it, inserted] = by_producer.try_emplace(producer, joint.size());
      if (inserted) joint.emplace_back();
      auto& assignments = joint[it->second].assignments;
      // One candidate per group (the first that takes this producer).
      if (assignments.empty() || assignments.back().first != g) {
        assignments.push_back({g, static_cast<int64_t>(c) + 1});
      }
    }
  }
  for (Move& move : joint) {
    if (move.assignments.size() > 1) moves.push_back(std::move(move));
  }
  return moves;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> GreedyAgent::Act(const HloRewriteEnv& env) {
  RETURN_IF_ERROR(CheckActable(env));
  const int64_t num_alternatives = static_cast<int64_t>(env.alternatives().size());
  const std::vector<ChoiceGroup> groups = GroupAlternatives(env.alternatives());
  const std::vector<int64_t> zeros(num_alternatives, 0);
  if (groups.empty()) return zeros;
  const bool deterministic = env.benchmarks().runtime().deterministic();
  if (deterministic && env.info().fingerprint != 0 &&
      env.info().fingerprint == plateau_fingerprint_.load()) {
    return zeros;
  }
  auto expand = [&](const std::vector<int64_t>& group_choices) {
    return ExpandGroupChoices(groups, group_choices, num_alternatives);
  };
  auto apply = [&](std::vector<int64_t>& group_choices, const Move& move) {
    for (const auto& [g, c] : move.assignments) group_choices[g] = c;
  };

  const Lookahead lookahead(env);
  // Every move alone, in parallel: they are independent lookaheads.
  std::vector<Move> moves = Moves(groups, IsProducerConsumerFusion(env.info().dry_pass));
  std::mutex error_mutex;
  absl::Status error;
  double base = 0;
  ParallelForEach(0, static_cast<int64_t>(moves.size()) + 1, [&](int64_t t_index) {
    const size_t t = static_cast<size_t>(t_index);
    // Slot moves.size() measures the current module (all originals kept).
    std::vector<int64_t> group_choices(groups.size(), 0);
    if (t < moves.size()) apply(group_choices, moves[t]);
    absl::StatusOr<double> runtime = lookahead.Runtime(expand(group_choices));
    if (!runtime.ok()) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (error.ok()) error = runtime.status();
      return;
    }
    (t < moves.size() ? moves[t].runtime : base) = *runtime;
  });
  evaluations_ += static_cast<int64_t>(moves.size()) + 1;
  RETURN_IF_ERROR(error);

  const double tolerance = options_.tolerance >= 0 ? options_.tolerance
                           : env.benchmarks().runtime().deterministic() ? 0.0
                                                                        : 0.02;
  std::vector<const Move*> winners;
  for (const Move& move : moves) {
    if (move.runtime < base * (1.0 - tolerance)) winners.push_back(&move);
  }
  if (winners.empty() && deterministic) {
    // A plateau: no move gains alone. A producer with several users only
    // disappears once all of them absorb it, and the alternative graph
    // cannot offer that in one step (each candidate reads the originals),
    // so moves that cost (almost) nothing are taken: recomputing a producer
    // inside its first user costs a few flops until the last one absorbs it.
    // (Restricting this to producers other groups also offer was measured
    // worse.) Only under a deterministic source, where such small
    // differences are real.
    for (const Move& move : moves) {
      if (move.runtime <= base * (1.0 + kPlateauSlack)) winners.push_back(&move);
    }
  }
  if (winners.empty()) {
    if (deterministic) plateau_fingerprint_.store(env.info().fingerprint);
    return zeros;
  }
  std::stable_sort(winners.begin(), winners.end(),
                   [](const Move* a, const Move* b) { return a->runtime < b->runtime; });

  // The winners that touch disjoint groups, best first, all together. Any
  // combination of choices is a legal selection (alternatives only ever
  // drop edges of a DAG), but gains need not add up.
  std::vector<int64_t> combined(groups.size(), 0);
  std::vector<const Move*> taken;
  for (const Move* move : winners) {
    bool free = true;
    for (const auto& [g, c] : move->assignments) free &= combined[g] == 0;
    if (!free) continue;
    apply(combined, *move);
    taken.push_back(move);
  }
  std::vector<int64_t> best(groups.size(), 0);
  apply(best, *winners.front());
  if (taken.size() == 1) return expand(best);
  ASSIGN_OR_RETURN(double together, lookahead.Runtime(expand(combined)));
  evaluations_ += 1;
  if (together <= winners.front()->runtime) return expand(combined);
  if (winners.front()->runtime >= base) {
    // Plateau moves: together only if that stays within the slack.
    return together <= base * (1.0 + kPlateauSlack) ? expand(combined) : expand(best);
  }

  // They interact: add them one at a time, best first, keeping what helps.
  double runtime = winners.front()->runtime;
  for (size_t i = 1; i < taken.size(); ++i) {
    std::vector<int64_t> trial = best;
    apply(trial, *taken[i]);
    ASSIGN_OR_RETURN(double t, lookahead.Runtime(expand(trial)));
    evaluations_ += 1;
    if (t < runtime * (1.0 - tolerance)) {
      runtime = t;
      best = std::move(trial);
    }
  }
  return expand(best);
}

}  // namespace hlogym

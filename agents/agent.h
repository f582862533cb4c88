// Agent: a baseline policy. Given an environment in the middle of an episode,
// it returns one choice per alternatives node (FindAlternatives order, the
// same layout HloRewriteEnv::Step takes). Agents never change the env they
// are shown; lookahead works on forks or module copies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "envs/hlo_rewrite_env.h"
#include "envs/runtime_source.h"

namespace hlogym {

class Agent {
 public:
  virtual ~Agent() = default;
  // The spec it was made from, e.g. "greedy" or "search(budget=64)".
  virtual std::string name() const = 0;
  // Choices for `env`'s current alternatives. An env with no episode running
  // is an error.
  virtual absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) = 0;
  // Wall time spent so far on a measured source (AgentContext::measured):
  // in all, and of it compiling. Zero for agents that measure nothing.
  struct MeasuringTime {
    double seconds = 0;
    double compile_seconds = 0;
  };
  virtual MeasuringTime measuring_time() const { return {}; }
  // True while the choices the last Act returned follow a plan the agent had
  // finished making (SearchAgent's replay): the episode's end is decided, and
  // stopping it before that end would leave a state nobody chose, timed as
  // the agent's result. RunEpisode's EpisodeLimits leave such steps alone.
  virtual bool following_plan() const { return false; }
  // The state the plan being followed reaches from `env`, where the agent
  // kept it (search keeps the fork its plan ends on): the episode takes it
  // over (HloRewriteEnv::TakeStateOf) rather than stepping the plan again,
  // the same steps to the same state. nullptr: step on.
  virtual std::unique_ptr<HloRewriteEnv> TakePlannedState(const HloRewriteEnv& /*env*/) {
    return nullptr;
  }
  // Whether its episodes on `env` time modules to decide (search(measure=k)
  // on a measured source). Timing wants the whole machine: the CPU backend's
  // kernels spread over every core, as when the table times the end states
  // later. An episode running beside it held the other core, so candidates
  // were ranked by their one-core times, which order some modules the other
  // way (flax_groupnorm_grad's unfused module 0.89x of its fused one on two
  // cores, 1.26x on one); search then ended up to 1.6x slower than xla's
  // end on the table. Such an agent pauses its planning on other threads
  // while it times, in an arena of all cores, and RunEpisodes lets TBB start
  // the workers that arena needs besides the paused episodes'.
  virtual bool times_modules(const HloRewriteEnv& /*env*/) const { return false; }
  // Roughly how long its episodes take against the xla agent's on the same
  // module (one env step per step, no lookahead), so that RunEpisodes can
  // start the longest episodes first. Only the order depends on it.
  virtual double relative_work() const { return 1; }
};

// What an agent may use besides the env it is shown.
struct AgentContext {
  // A measured runtime source (cpu, gpu) for agents with a measurement
  // budget (search(measure=k)), for when the env's rewards come from the
  // cost model: the episodes plan on the model and time a few candidates
  // here. Null: such agents time on the env's own source where it is
  // measured, and not at all where it is deterministic.
  std::shared_ptr<RuntimeSource> measured;
};

// Makes a built-in agent from a spec "name" or "name(key=value, ...)":
// random, greedy, xla, search. Unknown names and options are errors that list
// what exists.
absl::StatusOr<std::unique_ptr<Agent>> MakeAgent(const std::string& spec, uint64_t seed,
                                                 const AgentContext& context = {});

// Names of the built-in agents, for help texts and error messages.
std::vector<std::string> AgentNames();

}  // namespace hlogym

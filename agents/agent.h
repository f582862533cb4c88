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

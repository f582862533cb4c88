// MakeAgent and AgentNames: the one place that lists the built-in agents and
// reads their options (the same "name(key=value, ...)" syntax as pass specs).
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/agent.h"
#include "agents/greedy_agent.h"
#include "agents/random_agent.h"
#include "agents/search_agent.h"
#include "agents/xla_agent.h"
#include "core/base/status_macros.h"
#include "core/rewrite/pass_options.h"

namespace hlogym {
namespace {

using Factory = std::function<absl::StatusOr<std::unique_ptr<Agent>>(
    PassOptions&, uint64_t, const AgentContext&)>;

struct AgentEntry {
  std::string name;
  Factory make;
};

absl::StatusOr<int64_t> PositiveInt(PassOptions& options, std::string_view key,
                                    int64_t default_value) {
  ASSIGN_OR_RETURN(int64_t value, options.GetInt(key, default_value));
  if (value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent option `", std::string(key), "` must be positive, got ", value));
  }
  return value;
}

// An integer option in [low, high]; `what` says what it means, for the error.
absl::StatusOr<int64_t> IntInRange(PassOptions& options, std::string_view key,
                                   int64_t default_value, int64_t low, int64_t high,
                                   std::string_view what) {
  ASSIGN_OR_RETURN(int64_t value, options.GetInt(key, default_value));
  if (value < low || value > high) {
    const std::string range = high == std::numeric_limits<int64_t>::max()
                                  ? absl::StrCat(">= ", low)
                                  : absl::StrCat("in [", low, ", ", high, "]");
    return absl::InvalidArgumentError(absl::StrCat("agent option `", std::string(key), "` (",
                                                   std::string(what), ") must be ", range,
                                                   ", got ", value));
  }
  return value;
}

const std::vector<AgentEntry>& Entries() {
  static const auto* entries = new std::vector<AgentEntry>{
      {"greedy",
       [](PassOptions& options, uint64_t,
          const AgentContext&) -> absl::StatusOr<std::unique_ptr<Agent>> {
         GreedyOptions greedy;
         ASSIGN_OR_RETURN(int64_t percent, options.GetInt("tolerance_percent", -1));
         greedy.tolerance = percent < 0 ? -1.0 : static_cast<double>(percent) / 100.0;
         return std::make_unique<GreedyAgent>(greedy);
       }},
      {"random",
       [](PassOptions&, uint64_t seed,
          const AgentContext&) -> absl::StatusOr<std::unique_ptr<Agent>> {
         return std::make_unique<RandomAgent>(seed);
       }},
      {"search",
       [](PassOptions& options, uint64_t seed,
          const AgentContext& context) -> absl::StatusOr<std::unique_ptr<Agent>> {
         SearchOptions search;
         ASSIGN_OR_RETURN(search.budget, PositiveInt(options, "budget", search.budget));
         ASSIGN_OR_RETURN(search.beam, PositiveInt(options, "beam", search.beam));
         constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
         ASSIGN_OR_RETURN(search.branch, IntInRange(options, "branch", search.branch, 0, kNoLimit,
                                                    "random variations per beam node"));
         ASSIGN_OR_RETURN(search.seconds,
                          IntInRange(options, "seconds", search.seconds, 0, kNoLimit,
                                     "wall-time bound of a plan, 0: none"));
         ASSIGN_OR_RETURN(search.measure,
                          IntInRange(options, "measure", search.measure, 0,
                                     SearchOptions::kMaxMeasure,
                                     "end states timed on the measured source, 0: none"));
         ASSIGN_OR_RETURN(search.measure_ms,
                          IntInRange(options, "measure_ms", search.measure_ms, 0,
                                     SearchOptions::kMaxMeasureMs,
                                     "milliseconds of timed runs per candidate, 0: the "
                                     "measured source's own"));
         return std::make_unique<SearchAgent>(search, seed, context.measured);
       }},
      {"xla",
       [](PassOptions&, uint64_t, const AgentContext&) -> absl::StatusOr<std::unique_ptr<Agent>> {
         return std::make_unique<XlaAgent>();
       }},
  };
  return *entries;
}

}  // namespace

std::vector<std::string> AgentNames() {
  std::vector<std::string> names;
  for (const AgentEntry& entry : Entries()) names.push_back(entry.name);
  return names;
}

absl::StatusOr<std::unique_ptr<Agent>> MakeAgent(const std::string& spec, uint64_t seed,
                                                 const AgentContext& context) {
  absl::string_view text = absl::StripAsciiWhitespace(spec);
  absl::string_view name = text;
  absl::string_view args;
  if (const size_t open = text.find('('); open != absl::string_view::npos) {
    if (text.back() != ')') {
      return absl::InvalidArgumentError(
          absl::StrCat("agent spec `", spec, "` has no closing parenthesis"));
    }
    name = absl::StripAsciiWhitespace(text.substr(0, open));
    args = text.substr(open + 1, text.size() - open - 2);
  }
  for (const AgentEntry& entry : Entries()) {
    if (entry.name != name) continue;
    ASSIGN_OR_RETURN(PassOptions options, PassOptions::Parse(std::string(args), "agent"));
    ASSIGN_OR_RETURN(std::unique_ptr<Agent> made, entry.make(options, seed, context));
    RETURN_IF_ERROR(options.CheckAllUsed(std::string(name)));
    return made;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown agent `", std::string(name),
                                                 "`; known: ", absl::StrJoin(AgentNames(), ", ")));
}

}  // namespace hlogym

// The lookahead's view of a module (CostAfterChoices) against what it stands
// for: the module copied with the choices, the post-passes run and the cost
// model asked. Every move the greedy agent can try, along xla episodes over
// every small corpus module and a spread of dataset modules, must give the
// same number to the last bit; a difference would change greedy's choices.
#include <filesystem>
#include <random>

#include "tests/agents/agent_test_util.h"
#include "agents/choice_groups.h"
#include "agents/greedy_agent.h"
#include "agents/xla_agent.h"
#include "core/base/parallel.h"
#include "backend/cost_after_choices.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

using testing::DatasetModule;
using testing::MakeTestEnv;

std::vector<std::string> CorpusModules() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(HLOGYM_SOURCE_DIR) + "/data/corpus/small/hlo")) {
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Up to `max_steps` of `agent`'s episode; at each state every single-group
// move (and all of them at once, and none) is estimated both ways.
void ExpectViewMatchesCopies(HloRewriteEnv& env, Agent& agent, int64_t benchmark,
                             int64_t max_steps, int64_t* compared) {
  const absl::Status reset = env.Reset(0, benchmark);
  ASSERT_TRUE(reset.ok()) << reset;
  for (int64_t step = 0; step < max_steps && !env.info().terminated && !env.info().truncated;
       ++step) {
    const Lookahead lookahead(env);
    // full-v0 offers algsimp's rewrites inside fused and applied
    // computations too, which the view does not take (the copies serve).
    if (!lookahead.viewed()) {
      ASSERT_EQ(env.spec().id, "full-v0") << env.info().benchmark;
    }
    const std::vector<ChoiceGroup> groups = GroupAlternatives(env.alternatives());
    const int64_t n = static_cast<int64_t>(env.alternatives().size());
    std::vector<std::vector<int64_t>> trials;
    trials.push_back(std::vector<int64_t>(groups.size(), 0));
    std::vector<int64_t> all(groups.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int64_t c = 1; c < groups[g].num_choices; ++c) {
        std::vector<int64_t> one(groups.size(), 0);
        one[g] = c;
        trials.push_back(std::move(one));
      }
      all[g] = groups[g].num_choices - 1;
    }
    trials.push_back(all);
    // The copies in parallel (the CI machine has two cores).
    std::vector<double> viewed(trials.size()), copied(trials.size());
    std::vector<absl::Status> errors(trials.size());
    ParallelForEach(0, static_cast<int64_t>(trials.size()), [&](int64_t t) {
      const std::vector<int64_t> choices = ExpandGroupChoices(groups, trials[t], n);
      absl::StatusOr<double> v = lookahead.Runtime(choices);
      absl::StatusOr<double> c = LookaheadRuntime(env, choices);
      errors[t] = !v.ok() ? v.status() : c.status();
      if (v.ok() && c.ok()) {
        viewed[t] = *v;
        copied[t] = *c;
      }
    });
    for (size_t t = 0; t < trials.size(); ++t) {
      ASSERT_TRUE(errors[t].ok()) << errors[t];
      ASSERT_EQ(viewed[t], copied[t]) << env.info().benchmark << " step " << step << " move " << t;
    }
    *compared += static_cast<int64_t>(trials.size());
    absl::StatusOr<std::vector<int64_t>> choices = agent.Act(env);
    ASSERT_TRUE(choices.ok()) << choices.status();
    const absl::StatusOr<double> stepped = env.Step(*choices);
    ASSERT_TRUE(stepped.ok()) << stepped.status();
  }
}

class LookaheadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LookaheadTest, TheViewGivesTheCopysNumberForEveryMoveOnTheCorpus) {
  const std::vector<std::string> modules = CorpusModules();
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv(GetParam(), modules, 0, 0, 1 << 17, 1 << 19);
  ASSERT_NE(env, nullptr);
  int64_t compared = 0;
  XlaAgent xla;
  for (size_t b = 0; b < modules.size(); ++b) {
    ExpectViewMatchesCopies(*env, xla, static_cast<int64_t>(b), 4, &compared);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(compared, 500);
}

TEST(LookaheadTest, TheViewGivesTheCopysNumberForEveryMoveOnDatasetModules) {
  // Loops and conditionals (while trip counts), scans, the samplers'
  // long chains, optimizers' many small kernels. Along greedy's episodes:
  // on random_gamma its fusions soon offer candidates whose bodies CSE
  // shrinks (a threefry round's iota and broadcasts twice), which the view
  // costs from a copy of them (they were 1 in 10 of its lookaheads).
  const std::vector<std::string> present = {
      DatasetModule("random_gamma"), DatasetModule("random_split_fold"),
      DatasetModule("flax_rnn_gru_train"), DatasetModule("jnp_searchsorted"),
      DatasetModule("optax_novograd_256"), DatasetModule("optax_adam_256")};
  std::unique_ptr<HloRewriteEnv> env = MakeTestEnv("xla-v0", present, 0, 0, 1 << 17, 1 << 19, 1 << 14);
  ASSERT_NE(env, nullptr);
  int64_t compared = 0;
  GreedyAgent greedy;
  for (size_t b = 0; b < present.size(); ++b) {
    ExpectViewMatchesCopies(*env, greedy, static_cast<int64_t>(b), 6, &compared);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(compared, 100);
}

INSTANTIATE_TEST_SUITE_P(Configs, LookaheadTest,
                         ::testing::Values("xla-v0", "fusion-v0", "algsimp-v0", "full-v0"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace hlogym

// RandomAgent: choices in range, reproducible from the seed, errors for
// alternatives without a legal choice.
#include "agents/random_agent.h"

#include <vector>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(RandomAgentTest, ChoicesAreInRange) {
  RandomAgent agent(7);
  const std::vector<int64_t> num_choices = {1, 2, 3, 8, 1000};
  for (int round = 0; round < 100; ++round) {
    absl::StatusOr<std::vector<int64_t>> choices = agent.Choose(num_choices);
    ASSERT_TRUE(choices.ok()) << choices.status();
    ASSERT_EQ(choices->size(), num_choices.size());
    for (size_t i = 0; i < num_choices.size(); ++i) {
      EXPECT_GE((*choices)[i], 0);
      EXPECT_LT((*choices)[i], num_choices[i]);
    }
  }
}

TEST(RandomAgentTest, SameSeedSameChoices) {
  RandomAgent a(42), b(42), c(43);
  const std::vector<int64_t> num_choices(64, 8);
  std::vector<int64_t> from_a = *a.Choose(num_choices);
  EXPECT_EQ(from_a, *b.Choose(num_choices));
  EXPECT_NE(from_a, *c.Choose(num_choices));
}

TEST(RandomAgentTest, EveryChoiceIsTaken) {
  RandomAgent agent(1);
  std::vector<int> seen(4, 0);
  for (int round = 0; round < 400; ++round) ++seen[(*agent.Choose({4}))[0]];
  for (int count : seen) EXPECT_GT(count, 50);  // uniform: about 100 each
}

TEST(RandomAgentTest, EmptyInputGivesNoChoices) {
  RandomAgent agent(0);
  absl::StatusOr<std::vector<int64_t>> choices = agent.Choose({});
  ASSERT_TRUE(choices.ok());
  EXPECT_TRUE(choices->empty());
}

TEST(RandomAgentTest, NoLegalChoiceIsAnError) {
  RandomAgent agent(0);
  for (int64_t bad : {0, -3}) {
    absl::StatusOr<std::vector<int64_t>> choices = agent.Choose({2, bad});
    ASSERT_FALSE(choices.ok());
    EXPECT_EQ(choices.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(choices.status().message().find("alternative 1"), std::string::npos)
        << choices.status();
  }
}

}  // namespace
}  // namespace hlogym

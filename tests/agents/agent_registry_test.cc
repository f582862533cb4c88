// MakeAgent and AgentNames: every built-in agent by name, options read and
// checked, unknown names and options rejected with messages that help.
#include <string>
#include <vector>

#include "agents/agent.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AgentRegistryTest, NamesTheBuiltInAgents) {
  EXPECT_THAT(AgentNames(), ElementsAre("greedy", "random", "search", "xla"));
}

TEST(AgentRegistryTest, MakesEachAgentByName) {
  for (const std::string& name : AgentNames()) {
    absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(name, 1);
    ASSERT_TRUE(agent.ok()) << name << ": " << agent.status();
    EXPECT_THAT((*agent)->name(), HasSubstr(name));
  }
}

TEST(AgentRegistryTest, ReadsOptions) {
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent(" search( budget=8, beam=2 ) ", 0);
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ((*agent)->name(), "search(budget=8, beam=2, branch=4)");
  absl::StatusOr<std::unique_ptr<Agent>> timed = MakeAgent("search(seconds=5)", 0);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_EQ((*timed)->name(), "search(budget=64, beam=4, branch=4, seconds=5)");
  EXPECT_FALSE(MakeAgent("search(seconds=-1)", 0).ok());
  EXPECT_TRUE(MakeAgent("greedy(tolerance_percent=2)", 0).ok());
  EXPECT_TRUE(MakeAgent("xla()", 0).ok());
}

TEST(AgentRegistryTest, UnknownAgentListsTheKnownOnes) {
  absl::StatusOr<std::unique_ptr<Agent>> agent = MakeAgent("genius", 0);
  ASSERT_FALSE(agent.ok());
  EXPECT_EQ(agent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(agent.status().message(), "unknown agent `genius`; known: greedy, random, search, xla");
}

TEST(AgentRegistryTest, BadOptionsAreErrors) {
  absl::StatusOr<std::unique_ptr<Agent>> unknown = MakeAgent("search(depth=3)", 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("agent `search` has no option `depth`"));
  absl::StatusOr<std::unique_ptr<Agent>> negative = MakeAgent("search(budget=0)", 0);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("`budget` must be positive"));
  absl::StatusOr<std::unique_ptr<Agent>> not_int = MakeAgent("search(beam=wide)", 0);
  ASSERT_FALSE(not_int.ok());
  EXPECT_FALSE(MakeAgent("search(budget=8", 0).ok());
  EXPECT_FALSE(MakeAgent("random(seed)", 0).ok());
}

}  // namespace
}  // namespace hlogym

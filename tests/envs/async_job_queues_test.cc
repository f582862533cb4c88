// Tests of the async pool's job queues: each env's job goes to the slot that
// ran its last one, a slot runs its own oldest job, and no job waits on a
// busy slot for more than `patience` later jobs.
#include "envs/async_job_queues.h"

#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

// The env ids slot `slot` takes until the queues are empty.
std::vector<int32_t> Drain(AsyncJobQueues& queues, int slot, int64_t patience) {
  std::vector<int32_t> order;
  while (std::optional<AsyncJobQueues::Job> job = queues.Take(slot, patience)) {
    order.push_back(job->env_id);
  }
  return order;
}

TEST(AsyncJobQueuesTest, EmptyQueuesGiveNothing) {
  AsyncJobQueues queues(4, 2);
  EXPECT_EQ(queues.queued(), 0);
  EXPECT_FALSE(queues.Take(0, 8).has_value());
  EXPECT_FALSE(queues.Take(1, 8).has_value());
}

TEST(AsyncJobQueuesTest, JobsKeepTheirActionsAndEnvsStartHomedRoundRobin) {
  AsyncJobQueues queues(3, 2);
  EXPECT_EQ(queues.home(0), 0);
  EXPECT_EQ(queues.home(1), 1);
  EXPECT_EQ(queues.home(2), 0);
  queues.Push(1, {7, 8});
  EXPECT_EQ(queues.queued(), 1);
  std::optional<AsyncJobQueues::Job> job = queues.Take(1, 0);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->env_id, 1);
  EXPECT_EQ(job->action, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(queues.queued(), 0);
}

TEST(AsyncJobQueuesTest, ASlotRunsItsOwnJobsFirstWithinPatience) {
  // Envs 0, 2, 4 are homed on slot 0 and 1, 3, 5 on slot 1, sent in env
  // order. Slot 1 alone: its job 5 was sent 5 jobs after slot 0's oldest,
  // job 0, so with a patience of 5 it runs all its own first...
  AsyncJobQueues queues(6, 2);
  for (int32_t env = 0; env < 6; ++env) queues.Push(env, {});
  EXPECT_EQ(Drain(queues, 1, 5), (std::vector<int32_t>{1, 3, 5, 0, 2, 4}));
  // What a slot ran is its home now: the next round queues all six to it.
  for (int32_t env = 0; env < 6; ++env) EXPECT_EQ(queues.home(env), 1);
  // ...and with a patience of 2 it takes job 0 before its own job 3 (sent
  // 3 after it), and so on.
  AsyncJobQueues again(6, 2);
  for (int32_t env = 0; env < 6; ++env) again.Push(env, {});
  EXPECT_EQ(Drain(again, 1, 2), (std::vector<int32_t>{1, 0, 3, 2, 5, 4}));
}

TEST(AsyncJobQueuesTest, AJobWaitingMoreThanPatienceIsTakenByAnotherSlot) {
  // Slot 1 is busy (it takes nothing) while slot 0 runs. Slot 1's four
  // jobs were sent first, slot 0's after them.
  AsyncJobQueues queues(8, 2);
  for (int32_t env = 1; env < 8; env += 2) queues.Push(env, {});  // slot 1's
  for (int32_t env = 0; env < 8; env += 2) queues.Push(env, {});  // slot 0's
  // Sent order: 1 3 5 7 (slot 1) then 0 2 4 6 (slot 0). With patience 4 a
  // slot-0 job sent 4 after the oldest is still its own turn, 5 is not.
  std::vector<int32_t> order;
  for (int i = 0; i < 3; ++i) order.push_back(queues.Take(0, 4).value().env_id);
  // 0 is 4 jobs after 1: own. Then 2 is 5 after 1: 1 goes first. Then 2 is
  // 4 after 3: own.
  EXPECT_EQ(order, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(queues.home(1), 0);  // moved
  EXPECT_EQ(queues.home(3), 1);  // still waiting at home
}

TEST(AsyncJobQueuesTest, ZeroPatienceIsOneQueueInSendOrder) {
  AsyncJobQueues queues(4, 2);
  for (int32_t env : {3, 0, 1, 2}) queues.Push(env, {});
  EXPECT_EQ(Drain(queues, 0, 0), (std::vector<int32_t>{3, 0, 1, 2}));
}

TEST(AsyncJobQueuesTest, AnEmptyOwnQueueTakesTheOldestElsewhere) {
  AsyncJobQueues queues(6, 3);  // homes 0 1 2 0 1 2
  queues.Push(5, {});           // slot 2
  queues.Push(1, {});           // slot 1
  queues.Push(4, {});           // slot 1
  EXPECT_EQ(Drain(queues, 0, 100), (std::vector<int32_t>{5, 1, 4}));
}

}  // namespace
}  // namespace hlogym

// Tests of the environment pool: sync and async stepping, autoreset,
// determinism across thread counts, bad actions, buffer ownership.
#include "envs/env_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

using testing::TestBenchmarks;
using testing::TestSpec;

std::unique_ptr<EnvPool> MakePool(int64_t num_envs, int threads, int64_t batch = 0,
                                  int64_t max_steps = 4) {
  return EnvPool::Create(TestSpec(max_steps), TestBenchmarks(),
                         {num_envs, batch, threads, /*seed=*/5})
      .value();
}

// Random legal actions from a batch's observation.
std::vector<int64_t> RandomActions(const Batch& batch, const EnvSpec& spec, std::mt19937_64& rng) {
  const int64_t width = spec.limits.max_alternatives;
  std::vector<int64_t> actions(batch.size() * width, 0);
  const BatchArray& counts = batch.arrays()[kAltNumChoicesField];
  for (int64_t e = 0; e < batch.size(); ++e) {
    for (int64_t s = 0; s < batch.num_alternatives(e); ++s) {
      const int32_t k = counts.row<int32_t>(e)[s];
      actions[e * width + s] = std::uniform_int_distribution<int64_t>(0, k - 1)(rng);
    }
  }
  return actions;
}

bool SameBytes(const Batch& a, const Batch& b) {
  for (size_t i = 0; i < a.arrays().size(); ++i) {
    const BatchArray& x = a.arrays()[i];
    const BatchArray& y = b.arrays()[i];
    if (x.bytes() != y.bytes() || std::memcmp(x.data.get(), y.data.get(), x.bytes()) != 0) {
      return false;
    }
  }
  return true;
}

TEST(EnvPoolTest, SameSeedSameTrajectoryWhateverTheThreadCount) {
  auto one = MakePool(6, 1);
  auto two = MakePool(6, 2);
  std::shared_ptr<Batch> a = one->Reset(11, {}).value();
  std::shared_ptr<Batch> b = two->Reset(11, {}).value();
  ASSERT_TRUE(SameBytes(*a, *b));
  std::mt19937_64 rng(3);
  for (int step = 0; step < 12; ++step) {
    std::vector<int64_t> actions = RandomActions(*a, one->spec(), rng);
    a = one->Step(actions).value();
    b = two->Step(actions).value();
    ASSERT_TRUE(SameBytes(*a, *b)) << "step " << step;
  }
}

// Graphs of over 4,096 nodes have their observation rows written by every
// free thread of a sync step (RowWriters::kArena): the same bytes.
TEST(EnvPoolTest, LargeGraphsWrittenByBothThreadsAreTheSame) {
  testing::RegisterTestPass();
  auto pool = [](int threads) {
    std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules;
    // 2,000 chains: over 8,192 nodes, so node rows are written in chunks
    // (edge rows from 16,384 edges: GraphFeaturesTest covers those).
    modules.emplace_back("large", std::move(*ParseModule(testing::DoubleNegationHlo(2000, 8))));
    modules.emplace_back("small", std::move(*ParseModule(testing::DoubleNegationHlo(3, 8))));
    auto set = *BenchmarkSet::FromModules(std::move(modules), {"dce"},
                                          std::make_shared<CostModelSource>(H100Device()));
    EnvSpec spec = TestSpec(3);
    spec.limits = {16384, 32768, 2048, 4};
    return EnvPool::Create(spec, set, {3, 0, threads, /*seed=*/5}).value();
  };
  auto one = pool(1);
  auto two = pool(2);
  std::shared_ptr<Batch> a = one->Reset(2, {}).value();
  std::shared_ptr<Batch> b = two->Reset(2, {}).value();
  ASSERT_TRUE(SameBytes(*a, *b));
  int64_t most_nodes = 0;
  std::mt19937_64 rng(3);
  for (int step = 0; step < 6; ++step) {
    for (int64_t e = 0; e < a->size(); ++e) {
      const BatchArray& mask = a->arrays()[kNodeMaskField];
      const uint8_t* row = mask.row<uint8_t>(e);
      const int64_t max_nodes = one->spec().limits.max_nodes;
      most_nodes = std::max<int64_t>(most_nodes, std::count(row, row + max_nodes, 1));
    }
    std::vector<int64_t> actions = RandomActions(*a, one->spec(), rng);
    a = one->Step(actions).value();
    b = two->Step(actions).value();
    ASSERT_TRUE(SameBytes(*a, *b)) << "step " << step;
  }
  EXPECT_GT(most_nodes, 8192);  // the chunked write ran
}

// Observations without candidates' bodies: the same bytes whatever the
// thread count, and fewer nodes than with the bodies, on the same episodes.
TEST(EnvPoolTest, ObservationsWithoutCandidateBodiesAreTheSameWhateverTheThreadCount) {
  const std::string small = std::string(HLOGYM_SOURCE_DIR) + "/data/corpus/small/hlo/";
  auto set = BenchmarkSet::Load({small + "softmax_4096x1024_small.hlo",
                                 small + "layernorm_8192x1024_small.hlo",
                                 small + "gelu_4096x4096_small.hlo"},
                                {"algsimp", "dce"}, std::make_shared<CostModelSource>(H100Device()))
                 .value();
  auto pool = [&](int threads, NodeScope scope) {
    EnvSpec spec = TestSpec(6);
    spec.dry_passes = {"fusion"};
    spec.limits = {1024, 4096, 64, 16};
    spec.node_scope = scope;
    return EnvPool::Create(spec, set, {4, 0, threads, /*seed=*/5}).value();
  };
  auto one = pool(1, NodeScope::kWithoutCandidateBodies);
  auto two = pool(2, NodeScope::kWithoutCandidateBodies);
  auto full = pool(1, NodeScope::kAll);
  std::shared_ptr<Batch> a = one->Reset(2, {}).value();
  std::shared_ptr<Batch> b = two->Reset(2, {}).value();
  std::shared_ptr<Batch> f = full->Reset(2, {}).value();
  auto nodes = [&](const Batch& batch, int64_t e) {
    const uint8_t* row = batch.arrays()[kNodeMaskField].row<uint8_t>(e);
    return std::count(row, row + one->spec().limits.max_nodes, 1);
  };
  int64_t fewer = 0;
  std::mt19937_64 rng(3);
  for (int step = 0; step < 6; ++step) {
    ASSERT_TRUE(SameBytes(*a, *b)) << "step " << step;
    for (int64_t e = 0; e < a->size(); ++e) {
      EXPECT_EQ(a->num_alternatives(e), f->num_alternatives(e));
      EXPECT_LE(nodes(*a, e), nodes(*f, e));
      fewer += nodes(*a, e) < nodes(*f, e);
    }
    std::vector<int64_t> actions = RandomActions(*a, one->spec(), rng);
    a = one->Step(actions).value();
    b = two->Step(actions).value();
    f = full->Step(actions).value();
  }
  EXPECT_GT(fewer, 0);
}

TEST(EnvPoolTest, AutoresetIsNextStep) {
  auto pool = MakePool(1, 1);
  std::shared_ptr<Batch> batch = pool->Reset(std::nullopt, {}).value();
  const int64_t width = pool->spec().limits.max_alternatives;
  std::vector<int64_t> take_all(width, 1);
  batch = pool->Step(take_all).value();
  ASSERT_TRUE(batch->terminated(0));
  EXPECT_GT(batch->reward(0), 0);
  EXPECT_EQ(batch->num_alternatives(0), 0);
  // The next step resets: action ignored, reward 0, a fresh episode.
  batch = pool->Step(std::vector<int64_t>(width, 7)).value();
  EXPECT_FALSE(batch->terminated(0));
  EXPECT_EQ(batch->reward(0), 0);
  EXPECT_EQ(batch->elapsed_step(0), 0);
  EXPECT_GT(batch->num_alternatives(0), 0);
}

TEST(EnvPoolTest, BadActionsFailWholeAndChangeNothing) {
  auto pool = MakePool(2, 1);
  std::shared_ptr<Batch> batch = pool->Reset(1, {}).value();
  const int64_t width = pool->spec().limits.max_alternatives;
  absl::Status shape = pool->Step(std::vector<int64_t>(width, 0)).status();
  EXPECT_NE(shape.message().find("actions must have shape [2, 8]"), std::string::npos) << shape;
  std::vector<int64_t> bad(2 * width, 0);
  bad[width] = 5;  // env 1, alternative 0
  absl::Status range = pool->Step(bad).status();
  EXPECT_NE(range.message().find("env 1, alternative 0: choice 5 is out of range [0, 2)"),
            std::string::npos) << range;
  EXPECT_EQ(pool->Info(1)->step, 0);
  EXPECT_TRUE(pool->Step(std::vector<int64_t>(2 * width, 0)).ok());
  EXPECT_EQ(pool->Info(1)->step, 1);
}

TEST(EnvPoolTest, AsyncSendRecvReturnsBatchesTaggedWithEnvIds) {
  auto pool = MakePool(4, 2, /*batch=*/2);
  EXPECT_FALSE(pool->Recv().ok());  // nothing pending: an error, not a hang
  ASSERT_TRUE(pool->AsyncReset().ok());
  std::set<int32_t> seen;
  for (int i = 0; i < 2; ++i) {
    std::shared_ptr<Batch> batch = pool->Recv().value();
    ASSERT_EQ(batch->size(), 2);
    for (int64_t r = 0; r < 2; ++r) seen.insert(batch->env_id(r));
  }
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2, 3}));
  const int64_t width = pool->spec().limits.max_alternatives;
  ASSERT_TRUE(pool->Send(std::vector<int64_t>(2 * width, 0), std::vector<int32_t>{3, 1}).ok());
  absl::Status twice = pool->Send(std::vector<int64_t>(width, 0), std::vector<int32_t>{3});
  std::shared_ptr<Batch> batch = pool->Recv().value();
  std::set<int32_t> ids = {batch->env_id(0), batch->env_id(1)};
  EXPECT_EQ(ids, (std::set<int32_t>{1, 3}));
  // Sending to an env still in flight is refused (it may have finished by
  // then, in which case the send is legal and its result must be received).
  if (twice.ok()) {
    ASSERT_TRUE(pool->Send(std::vector<int64_t>(width, 0), std::vector<int32_t>{0}).ok());
    EXPECT_EQ(pool->Recv().value()->size(), 2);
  } else {
    EXPECT_NE(twice.message().find("in flight"), std::string::npos) << twice;
  }
}

// With one thread the arena has no worker: Recv's thread runs the queued
// steps (the queue used to wait forever). Several rounds of recv and send.
TEST(EnvPoolTest, AsyncWithOneThreadStepsInRecv) {
  auto pool = MakePool(4, 1, /*batch=*/2);
  ASSERT_TRUE(pool->AsyncReset().ok());
  const int64_t width = pool->spec().limits.max_alternatives;
  std::multiset<int32_t> seen;
  std::vector<int32_t> steps(4, 0);
  for (int round = 0; round < 8; ++round) {
    std::shared_ptr<Batch> batch = pool->Recv().value();
    ASSERT_EQ(batch->size(), 2);
    std::vector<int32_t> ids;
    for (int64_t r = 0; r < 2; ++r) {
      const int32_t id = batch->env_id(r);
      seen.insert(id);
      ids.push_back(id);
      if (round >= 2) {
        EXPECT_EQ(batch->elapsed_step(r), steps[id] + 1) << "env " << id;
      }
      steps[id] = batch->elapsed_step(r);
    }
    ASSERT_TRUE(pool->Send(std::vector<int64_t>(2 * width, 0), ids).ok());
  }
  for (int32_t id = 0; id < 4; ++id) EXPECT_GE(seen.count(id), 1u) << "env " << id;
}

// Each env's async steps (2 threads, envs queued to the thread that ran
// them last, taken by the other once they waited more than a batch) come out
// as a sync pool steps it with the same actions: no step lost, repeated or
// given another env's state, whichever thread ran it; and every env comes
// back.
TEST(EnvPoolTest, AsyncStepsEachEnvAsSyncDoes) {
  constexpr int64_t kEnvs = 6;
  auto async = MakePool(kEnvs, 2, /*batch=*/2, /*max_steps=*/6);
  const int64_t width = async->spec().limits.max_alternatives;
  // Env e's k-th action: a fixed legal choice per alternative slot.
  auto action = [&](const Batch& batch, int64_t row, int64_t k) {
    std::vector<int64_t> a(width, 0);
    const int32_t* counts = batch.arrays()[kAltNumChoicesField].row<int32_t>(row);
    for (int64_t s = 0; s < batch.num_alternatives(row); ++s) {
      a[s] = (batch.env_id(row) + k + s) % counts[s];
    }
    return a;
  };
  struct Seen {
    uint64_t fingerprint;
    float reward;
    int32_t step;
    bool done;
  };
  std::vector<std::vector<Seen>> seen(kEnvs);
  std::vector<std::vector<std::vector<int64_t>>> sent(kEnvs);
  ASSERT_TRUE(async->AsyncReset().ok());
  // 40 rounds, and on until every env came back 3 times: a worker thread the
  // machine does not run for a while holds the step it took that long
  // (under `ctest -j2` one held its env through all 40 rounds), so only an
  // env that does not come back at all (20 s here) is a failure.
  auto fewest = [&] {
    size_t n = seen[0].size();
    for (const auto& s : seen) n = std::min(n, s.size());
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int round = 0; round < 40 || fewest() < 3; ++round) {
    ASSERT_TRUE(std::chrono::steady_clock::now() < deadline)
        << "an env came back " << fewest() << " times in " << round << " rounds";
    std::shared_ptr<Batch> batch = async->Recv().value();
    std::vector<int64_t> actions;
    std::vector<int32_t> ids;
    for (int64_t r = 0; r < batch->size(); ++r) {
      const int32_t id = batch->env_id(r);
      seen[id].push_back({batch->fingerprint(r), batch->reward(r), batch->elapsed_step(r),
                          batch->terminated(r) || batch->truncated(r)});
      std::vector<int64_t> a = action(*batch, r, static_cast<int64_t>(sent[id].size()));
      sent[id].push_back(a);
      actions.insert(actions.end(), a.begin(), a.end());
      ids.push_back(id);
    }
    ASSERT_TRUE(async->Send(actions, ids).ok());
  }
  auto sync = MakePool(kEnvs, 1, 0, /*max_steps=*/6);
  std::shared_ptr<Batch> batch = sync->Reset(std::nullopt, {}).value();
  size_t longest = 0;
  for (const auto& s : seen) longest = std::max(longest, s.size());
  for (size_t k = 0; k < longest; ++k) {
    std::vector<int64_t> actions(kEnvs * width, 0);
    for (int64_t e = 0; e < kEnvs; ++e) {
      if (k < seen[e].size()) {
        const Seen& want = seen[e][k];
        EXPECT_EQ(batch->fingerprint(e), want.fingerprint) << "env " << e << " step " << k;
        EXPECT_EQ(batch->reward(e), want.reward) << "env " << e << " step " << k;
        EXPECT_EQ(batch->elapsed_step(e), want.step) << "env " << e << " step " << k;
        EXPECT_EQ(batch->terminated(e) || batch->truncated(e), want.done) << "env " << e;
        std::copy(sent[e][k].begin(), sent[e][k].end(), actions.begin() + e * width);
      }
    }
    batch = sync->Step(actions).value();
  }
}

// Python threads may call one pool at once (the GIL is released while it
// works): the calls take turns, so no env is stepped twice at once or read
// half-stepped (two threads stepping one pool used to crash the process: in
// two of three runs of this test before the fix; TSan sees every such race).
TEST(EnvPoolTest, CallsFromSeveralThreadsTakeTurns) {
  constexpr int64_t kEnvs = 4;
  auto pool = MakePool(kEnvs, 2, /*batch=*/0, /*max_steps=*/1000);
  ASSERT_TRUE(pool->Reset(1, {}).ok());
  const std::vector<int64_t> decline_all(kEnvs * pool->spec().limits.max_alternatives, 0);
  std::atomic<int> failures{0};
  auto step = [&] {
    for (int i = 0; i < 300; ++i) failures += !pool->Step(decline_all).ok();
  };
  auto read = [&] {
    for (int i = 0; i < 1200; ++i) {
      failures += !pool->ModuleCopy(i % kEnvs).ok();
      failures += !pool->ForkEnv(i % kEnvs).ok();
    }
  };
  std::thread a(step), b(step), c(read);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(failures, 0);
  for (int64_t e = 0; e < kEnvs; ++e) EXPECT_EQ(pool->Info(e)->step, 600) << "env " << e;
}

// Agents read envs in place through ReadEnvs: an env in flight is refused
// (its async step may be running), the others are read.
TEST(EnvPoolTest, ReadEnvsRefusesAnEnvInFlight) {
  auto pool = MakePool(3, 1, /*batch=*/1);  // one thread: a sent step waits for Recv
  ASSERT_TRUE(pool->AsyncReset().ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool->Recv().ok());
  const int64_t width = pool->spec().limits.max_alternatives;
  ASSERT_TRUE(pool->Send(std::vector<int64_t>(width, 0), std::vector<int32_t>{2}).ok());
  int64_t read = 0;
  auto count = [&](absl::Span<const HloRewriteEnv* const> envs) {
    for (const HloRewriteEnv* env : envs) read += env->in_episode();
    return absl::OkStatus();
  };
  EXPECT_TRUE(pool->ReadEnvs(std::vector<int64_t>{0, 1}, count).ok());
  EXPECT_EQ(read, 2);
  absl::Status in_flight = pool->ReadEnvs(std::vector<int64_t>{1, 2}, count);
  EXPECT_NE(in_flight.message().find("env 2 has a step in flight"), std::string::npos) << in_flight;
  EXPECT_EQ(read, 2);  // nothing read
  ASSERT_TRUE(pool->Recv().ok());
  EXPECT_TRUE(pool->ReadEnvs(std::vector<int64_t>{2}, count).ok());
  EXPECT_EQ(read, 3);
}

TEST(EnvPoolTest, BuffersHeldOutsideAreNeverReused) {
  auto pool = MakePool(2, 1);
  std::shared_ptr<Batch> first = pool->Reset(1, {}).value();
  std::shared_ptr<uint8_t> held = first->arrays()[kNodeFeaturesField].data;  // like numpy
  const uint8_t* address = held.get();
  const std::vector<uint8_t> contents(address, address + first->arrays()[0].bytes());
  first.reset();
  const int64_t width = pool->spec().limits.max_alternatives;
  for (int i = 0; i < 4; ++i) {
    std::shared_ptr<Batch> next = pool->Step(std::vector<int64_t>(2 * width, 0)).value();
    EXPECT_NE(next->arrays()[kNodeFeaturesField].data.get(), address);
  }
  EXPECT_EQ(std::memcmp(held.get(), contents.data(), contents.size()), 0);
}

TEST(EnvPoolTest, PartialResetAndOptionsAreChecked) {
  auto pool = MakePool(3, 1);
  ASSERT_TRUE(pool->Reset(1, {}).ok());
  const int64_t width = pool->spec().limits.max_alternatives;
  ASSERT_TRUE(pool->Step(std::vector<int64_t>(3 * width, 0)).ok());
  std::shared_ptr<Batch> batch = pool->Reset(std::nullopt, {false, true, false}).value();
  EXPECT_EQ(batch->elapsed_step(0), 1);
  EXPECT_EQ(batch->elapsed_step(1), 0);
  EXPECT_FALSE(pool->Reset(std::nullopt, {true}).ok());
  EXPECT_FALSE(EnvPool::Create(TestSpec(), TestBenchmarks(), {2, 3, 1, 0}).ok());
  EXPECT_FALSE(EnvPool::Create(TestSpec(), TestBenchmarks(), {0, 0, 1, 0}).ok());
}

// A pool whose batches of observations or envs could never fit in memory is a
// config error, not a process the OOM killer ends while it makes its envs.
TEST(EnvPoolTest, PoolsLargerThanMemoryAreAConfigError) {
  absl::StatusOr<std::unique_ptr<EnvPool>> huge =
      EnvPool::Create(TestSpec(), TestBenchmarks(), {int64_t{1} << 40, 0, 1, 0});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("per batch, at max_nodes"), std::string::npos)
      << huge.status();
  EXPECT_NE(huge.status().message().find("lower num_envs (or batch_size) or the limits"),
            std::string::npos)
      << huge.status();
  // Envs of an async pool count too, beyond its small batches.
  absl::StatusOr<std::unique_ptr<EnvPool>> many =
      EnvPool::Create(TestSpec(), TestBenchmarks(), {int64_t{1} << 40, 1, 1, 0});
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("GiB for its envs"), std::string::npos)
      << many.status();
}

}  // namespace
}  // namespace hlogym

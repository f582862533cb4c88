// Batch rows are rewritten again and again: a write clears only what the
// row's last write used, and must leave exactly what a write into fresh,
// all-padding buffers leaves.
#include "envs/batch.h"

#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "core/rewrite/pass.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/envs/env_test_util.h"

namespace hlogym {
namespace {

using testing::DoubleNegationHlo;

// The observation arrays of row `r` of `a` and row 0 of `b` hold the same bytes.
void ExpectSameObservation(const Batch& a, int64_t r, const Batch& b, const std::string& what) {
  for (int field = 0; field <= kAltMaskField; ++field) {
    const BatchArray& x = a.arrays()[field];
    const BatchArray& y = b.arrays()[field];
    const int64_t per_row = x.bytes() / x.shape[0];
    EXPECT_EQ(std::memcmp(x.data.get() + r * per_row, y.data.get(), per_row), 0)
        << what << ": " << x.name;
  }
}

std::unique_ptr<Module> Offered(int chains) {
  testing::RegisterTestPass();
  std::unique_ptr<Module> module = *ParseModule(DoubleNegationHlo(chains, 16));
  EXPECT_TRUE(RunDryPass(*CreatePass("test-double-negation").value(), *module).ok());
  return module;
}

TEST(BatchTest, RewritingARowClearsWhatTheLastWriteUsed) {
  const FeatureLimits limits{64, 128, 8, 4};
  Batch reused(2, limits);
  std::unique_ptr<Module> big = Offered(4);
  std::unique_ptr<Module> small = Offered(1);
  ASSERT_TRUE(WriteObservation(*big, limits, reused.Observation(1), reused.extent(1)).ok());
  EXPECT_EQ(reused.extent(1)->alternatives, 4);
  ASSERT_TRUE(WriteObservation(*small, limits, reused.Observation(1), reused.extent(1)).ok());
  Batch fresh(1, limits);
  ASSERT_TRUE(WriteObservation(*small, limits, fresh.Observation(0)).ok());
  ExpectSameObservation(reused, 1, fresh, "small after big");

  // A graph over the limits leaves the row all padding, like a fresh one.
  const FeatureLimits tight{64, 128, 2, 4};
  Batch row(1, tight);
  ASSERT_TRUE(WriteObservation(*small, tight, row.Observation(0), row.extent(0)).ok());
  EXPECT_FALSE(WriteObservation(*big, tight, row.Observation(0), row.extent(0)).ok());
  EXPECT_EQ(row.extent(0)->nodes, 0);
  ExpectSameObservation(row, 0, Batch(1, tight), "after an error");

  // ClearRow too.
  ASSERT_TRUE(WriteObservation(*big, limits, reused.Observation(0), reused.extent(0)).ok());
  reused.ClearRow(0);
  ExpectSameObservation(reused, 0, Batch(1, limits), "cleared");
  EXPECT_EQ(reused.fingerprint(0), 0u);
}

// Every order of graph sizes (nodes, edges and alternatives growing and
// shrinking, a graph written over itself, an empty row): a reused row ends
// up byte for byte as a fresh one. The last write's edge count matters too:
// in_edge_offsets past the nodes holds it, and is rewritten when it changes.
TEST(BatchTest, EveryOrderOfGraphSizesLeavesWhatAFreshWriteLeaves) {
  const FeatureLimits limits{64, 128, 8, 4};
  std::vector<std::unique_ptr<Module>> graphs;
  for (int chains : {1, 2, 4}) graphs.push_back(Offered(chains));
  // The plain module (no alternatives): same nodes as none of the others.
  graphs.push_back(*ParseModule(DoubleNegationHlo(3, 16)));
  for (size_t first = 0; first < graphs.size(); ++first) {
    for (size_t second = 0; second < graphs.size(); ++second) {
      Batch reused(1, limits);
      ASSERT_TRUE(
          WriteObservation(*graphs[first], limits, reused.Observation(0), reused.extent(0)).ok());
      ASSERT_TRUE(
          WriteObservation(*graphs[second], limits, reused.Observation(0), reused.extent(0)).ok());
      Batch fresh(1, limits);
      ASSERT_TRUE(WriteObservation(*graphs[second], limits, fresh.Observation(0)).ok());
      ExpectSameObservation(reused, 0, fresh,
                            "graph " + std::to_string(second) + " after " + std::to_string(first));
      // And after a cleared row.
      reused.ClearRow(0);
      ASSERT_TRUE(
          WriteObservation(*graphs[second], limits, reused.Observation(0), reused.extent(0)).ok());
      ExpectSameObservation(reused, 0, fresh, "graph " + std::to_string(second) + " after a clear");
    }
  }
}

// Resident pages among the whole pages of [begin, end).
int64_t ResidentPages(const uint8_t* begin, const uint8_t* end) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t hi = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (hi <= lo) return 0;
  std::vector<unsigned char> in((hi - lo) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()), 0);
  int64_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(BatchTest, ReleaseUnusedHandsBackWhatABigGraphLeftAndKeepsTheRow) {
  const FeatureLimits limits{16384, 65536, 8, 4};
  Batch batch(2, limits);
  const BatchArray& nodes = batch.arrays()[kNodeFeaturesField];
  const BatchArray& edges = batch.arrays()[kEdgeFeaturesField];
  const int64_t node_row = nodes.bytes() / 2, edge_row = edges.bytes() / 2;
  uint8_t* node0 = nodes.data.get();
  uint8_t* edge0 = edges.data.get();
  std::unique_ptr<Module> small = Offered(1);
  ASSERT_TRUE(WriteObservation(*small, limits, batch.Observation(1), batch.extent(1)).ok());

  // Row 0 as a graph of 16384 nodes and 65536 edges leaves it: written
  // (resident), and padding again once a smaller graph is written over it.
  std::memset(node0, 0, node_row);
  std::memset(edge0, 0, edge_row);
  *batch.extent(0) = GraphCounts{16384, 65536, 0};
  batch.ReleaseUnused(0, /*env_id=*/7);  // nothing: the row uses what it touched
  const int64_t before = ResidentPages(node0 + node_row / 2, node0 + node_row);
  EXPECT_GT(before, 0);
  // Written by other envs in turn (an async pool's rows), the pages are kept
  // while fewer than kReleaseAfterWrites small graphs came in a row (a large
  // one coming back would fault them in again), then handed back.
  for (int k = 1; k <= Batch::kReleaseAfterWrites; ++k) {
    ASSERT_TRUE(WriteObservation(*small, limits, batch.Observation(0), batch.extent(0)).ok());
    batch.ReleaseUnused(0, k % 2);
    if (k < Batch::kReleaseAfterWrites) {
      EXPECT_EQ(ResidentPages(node0 + node_row / 2, node0 + node_row), before) << k;
    }
  }
  EXPECT_EQ(ResidentPages(node0 + node_row / 2, node0 + node_row), 0);
  EXPECT_EQ(ResidentPages(edge0 + edge_row / 2, edge0 + edge_row), 0);

  Batch fresh(1, limits);
  ASSERT_TRUE(WriteObservation(*small, limits, fresh.Observation(0)).ok());
  ExpectSameObservation(batch, 0, fresh, "row 0 after the release");
  ExpectSameObservation(batch, 1, fresh, "row 1, untouched");

  // A row that keeps about the size it had keeps its pages.
  std::memset(node0, 0, node_row);
  *batch.extent(0) = GraphCounts{16000, 0, 0};
  batch.ReleaseUnused(0, 7);
  for (int k = 0; k < 2 * Batch::kReleaseAfterWrites; ++k) {
    *batch.extent(0) = GraphCounts{9000, 0, 0};
    batch.ReleaseUnused(0, 7);
  }
  EXPECT_GE(ResidentPages(node0 + node_row * 3 / 4, node0 + node_row), before / 2 - 1);

  // Nor does a row whose graphs from other envs are large and small in turn:
  // a large one between the small ones starts the count again.
  for (int k = 0; k < 4 * Batch::kReleaseAfterWrites; ++k) {
    *batch.extent(0) = GraphCounts{k % Batch::kReleaseAfterWrites == 0 ? 16000 : 10, 0, 0};
    batch.ReleaseUnused(0, k % 2);
  }
  EXPECT_GE(ResidentPages(node0 + node_row * 3 / 4, node0 + node_row), before / 2 - 1);

  // The env that wrote the row before, now with a small graph (a sync
  // pool's row: its env's graph shrank), has the pages handed back at once.
  *batch.extent(0) = GraphCounts{16384, 0, 0};
  batch.ReleaseUnused(0, 7);
  *batch.extent(0) = GraphCounts{10, 0, 0};
  batch.ReleaseUnused(0, 7);
  EXPECT_EQ(ResidentPages(node0 + node_row / 2, node0 + node_row), 0);
}

}  // namespace
}  // namespace hlogym

// Batch rows are rewritten again and again: a write clears only what the
// row's last write used, and must leave exactly what a write into fresh,
// all-padding buffers leaves.
#include "envs/batch.h"

#include <cstring>
#include <string>

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

}  // namespace
}  // namespace hlogym

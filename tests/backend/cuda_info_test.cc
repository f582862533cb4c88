// CudaDeviceCount works on every machine: a count where a driver and GPU are
// present, an Unavailable error (never a crash) where they are not.
#include "backend/cuda_info.h"

#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(CudaInfoTest, CountOrUnavailable) {
  absl::StatusOr<int> count = CudaDeviceCount();
  if (count.ok()) {
    EXPECT_GE(*count, 0);
  } else {
    EXPECT_EQ(count.status().code(), absl::StatusCode::kUnavailable) << count.status();
    EXPECT_FALSE(count.status().message().empty());
  }
}

TEST(CudaInfoTest, RepeatedCallsAgree) {
  absl::StatusOr<int> first = CudaDeviceCount();
  absl::StatusOr<int> second = CudaDeviceCount();
  EXPECT_EQ(first.ok(), second.ok());
  if (first.ok() && second.ok()) {
    EXPECT_EQ(*first, *second);
  }
}

TEST(CudaInfoTest, WithoutCudaSaysSo) {
  if (BuiltWithCuda()) GTEST_SKIP() << "built with CUDA";
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().message(), "not supported: built without CUDA");
}

}  // namespace
}  // namespace hlogym

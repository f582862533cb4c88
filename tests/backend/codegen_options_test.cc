// The per-target codegen settings: the CPU target builds pipelines without
// loop strength reduction, NVPTX with it, and an NVPTX scope waits for the
// CPU scopes in flight (their pipelines read the same process-wide option).
#include "backend/codegen_options.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(CodegenOptionsTest, EachTargetBuildsItsPipelineWithItsOwnSetting) {
  {
    CpuCodegenScope cpu;
    EXPECT_FALSE(CodegenRunsLoopStrengthReduction());
  }
  {
    NvptxCodegenScope nvptx;
    EXPECT_TRUE(CodegenRunsLoopStrengthReduction());
  }
  CpuCodegenScope cpu;
  EXPECT_FALSE(CodegenRunsLoopStrengthReduction());
}

TEST(CodegenOptionsTest, AnNvptxScopeWaitsForTheCpuScopesInFlight) {
  std::atomic<bool> nvptx_entered{false};
  std::thread nvptx;
  {
    CpuCodegenScope first;
    CpuCodegenScope second;  // CPU scopes share
    nvptx = std::thread([&] {
      NvptxCodegenScope scope;
      nvptx_entered = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(nvptx_entered.load());
    EXPECT_FALSE(CodegenRunsLoopStrengthReduction());
  }
  nvptx.join();
  EXPECT_TRUE(nvptx_entered.load());
  CpuCodegenScope after;
  EXPECT_FALSE(CodegenRunsLoopStrengthReduction());
}

}  // namespace
}  // namespace hlogym

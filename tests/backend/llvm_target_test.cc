// LLVM facts: the build links LLVM 16 and its NVPTX target (GPU code
// generation needs it even on machines without a GPU).
#include "backend/llvm_target.h"

#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(LlvmTargetTest, LinksLlvm16) {
  EXPECT_EQ(LlvmVersion().rfind("16.", 0), 0u) << LlvmVersion();
}

TEST(LlvmTargetTest, NvptxTargetIsRegistered) {
  EXPECT_TRUE(NvptxTargetAvailable());
  EXPECT_TRUE(NvptxTargetAvailable());  // a second call is answered from the registry
}

}  // namespace
}  // namespace hlogym

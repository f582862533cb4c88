// LowerForGpu: which lowerings run, and HLOGYM_GPU_LOWERINGS picking them.
// (That lowered modules compute what they did is checked on the CPU target's
// kernels in cpu_executable_corpus_test.cc, and per pass in tests/core.)
#include "backend/gpu_lowering.h"

#include <cstdlib>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

constexpr char kModule[] = R"(HloModule m
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  c = f32[2,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  r = f32[2,144] reshape(c)
  ROOT t = (f32[2,4], s32[2,4]) topk(r), k=4, largest=true
})";

int64_t Count(const Module& module, Opcode opcode) {
  int64_t n = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) n += inst->opcode() == opcode;
  }
  return n;
}

// Sets HLOGYM_GPU_LOWERINGS for one test and restores it after.
class LoweringsVariable {
 public:
  explicit LoweringsVariable(const char* value) {
    if (const char* old = std::getenv(kName)) saved_ = old, had_ = true;
    if (value != nullptr) {
      setenv(kName, value, 1);
    } else {
      unsetenv(kName);
    }
  }
  ~LoweringsVariable() {
    if (had_) {
      setenv(kName, saved_.c_str(), 1);
    } else {
      unsetenv(kName);
    }
  }

 private:
  static constexpr const char* kName = "HLOGYM_GPU_LOWERINGS";
  std::string saved_;
  bool had_ = false;
};

TEST(GpuLoweringTest, EveryLoweringRunsByDefault) {
  LoweringsVariable unset(nullptr);
  auto module = ParseModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<Module>> lowered = LowerForGpu(**module);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_NE(*lowered, nullptr);
  EXPECT_EQ(Count(**lowered, Opcode::kConvolution), 0);
  EXPECT_EQ(Count(**lowered, Opcode::kTopK), 0);
  EXPECT_EQ(Count(**lowered, Opcode::kDot), 1);
  EXPECT_EQ(Count(**module, Opcode::kConvolution), 1) << "the module given is not changed";
}

TEST(GpuLoweringTest, TheVariablePicksLoweringsByPassName) {
  auto module = ParseModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  {
    LoweringsVariable only_topk("topk-to-reductions");
    absl::StatusOr<std::unique_ptr<Module>> lowered = LowerForGpu(**module);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    ASSERT_NE(*lowered, nullptr);
    EXPECT_EQ(Count(**lowered, Opcode::kConvolution), 1);
    EXPECT_EQ(Count(**lowered, Opcode::kTopK), 0);
  }
  {
    LoweringsVariable none("none");
    absl::StatusOr<std::unique_ptr<Module>> lowered = LowerForGpu(**module);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(*lowered, nullptr) << "nothing lowered: the module runs as it is";
  }
  {
    LoweringsVariable bad("conv-to-gemm,im2col");
    absl::StatusOr<std::unique_ptr<Module>> lowered = LowerForGpu(**module);
    ASSERT_FALSE(lowered.ok());
    EXPECT_EQ(lowered.status().message(),
              "HLOGYM_GPU_LOWERINGS names `im2col`, which is no GPU lowering: use none or some of "
              "conv-to-gemm,scan-blocking,select-and-scatter-to-scatter,topk-to-reductions");
  }
}

}  // namespace
}  // namespace hlogym

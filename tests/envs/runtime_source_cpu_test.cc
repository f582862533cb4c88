// The "cpu" runtime source: measured runtimes from the CPU backend, with the
// cost-model sources unchanged beside it.
#include <memory>
#include <string>

#include "core/text/parser.h"
#include "envs/runtime_source.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

TEST(RuntimeSourceCpuTest, MeasuresOnThisCpu) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source = MakeRuntimeSource("cpu");
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->name(), "cpu");
  EXPECT_FALSE((*source)->deterministic());
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[256,256] parameter(0)
  y = f32[256,256] parameter(1)
  d = f32[256,256] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[256,256] tanh(d)
}
)");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<double> first = (*source)->Runtime(**module);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(*first, 0);
  EXPECT_LT(*first, 1.0);
  // Cached by fingerprint: the same module gets the same number.
  EXPECT_EQ(*(*source)->Runtime(**module), *first);
}

TEST(RuntimeSourceCpuTest, CostSourcesStayAndUnknownOnesListTheChoices) {
  EXPECT_EQ((*MakeRuntimeSource("cost"))->name(), "cost:h100");
  EXPECT_TRUE((*MakeRuntimeSource("cost:cpu"))->deterministic());
  EXPECT_EQ(MakeRuntimeSource("tpu").status().message(),
            "unknown reward source `tpu`; known: cost, cost:h100, cost:cpu, cpu, gpu");
}

TEST(RuntimeSourceCpuTest, GpuSourceWhereThereIsNoGpuSaysWhyAndSuggestsCpu) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> gpu = MakeRuntimeSource("gpu");
  if (gpu.ok()) GTEST_SKIP() << "a GPU is present";
  EXPECT_NE(gpu.status().message().find("cpu"), std::string::npos) << gpu.status();
}

}  // namespace
}  // namespace hlogym

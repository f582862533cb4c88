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

TEST(RuntimeSourceCpuTest, PrepareCompilesAheadAndItsErrorsRecurInRuntime) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source = MakeRuntimeSource("cpu");
  ASSERT_TRUE(source.ok()) << source.status();
  absl::StatusOr<std::unique_ptr<Module>> good = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  ROOT t = f32[64] tanh(x)
}
)");
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE((*source)->Prepare(**good).ok());
  EXPECT_TRUE((*source)->Runtime(**good).ok());
  absl::StatusOr<std::unique_ptr<Module>> bad = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  ROOT c = f32[64] custom-call(x), custom_call_target="no_such_target"
}
)");
  ASSERT_TRUE(bad.ok());
  const absl::Status prepared = (*source)->Prepare(**bad);
  EXPECT_FALSE(prepared.ok());
  const absl::StatusOr<double> timed = (*source)->Runtime(**bad);
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(prepared.message(), timed.status().message());
  // Cost models have nothing to do ahead.
  EXPECT_TRUE((*MakeRuntimeSource("cost"))->Prepare(**bad).ok());
}

TEST(RuntimeSourceCpuTest, CostSourcesStayAndUnknownOnesListTheChoices) {
  EXPECT_EQ((*MakeRuntimeSource("cost"))->name(), "cost:h100");
  EXPECT_TRUE((*MakeRuntimeSource("cost:cpu"))->deterministic());
  EXPECT_EQ(MakeRuntimeSource("tpu").status().message(),
            "unknown reward source `tpu`; known: cost, cost:h100, cost:cpu, cpu, gpu (the last "
            "two take measurement options, e.g. cpu(min_runs=3, max_seconds=0.1))");
}

TEST(RuntimeSourceCpuTest, MeasurementOptionsByName) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> source =
      MakeRuntimeSource("cpu(warmup_runs=0, min_runs=2, max_runs=3, target_spread=0.5, "
                        "max_seconds=0.25)");
  ASSERT_TRUE(source.ok()) << source.status();
  const MeasurementOptions& options =
      static_cast<CpuMeasuredSource&>(**source).runtime().options();
  EXPECT_EQ(options.warmup_runs, 0);
  EXPECT_EQ(options.min_runs, 2);
  EXPECT_EQ(options.max_runs, 3);
  EXPECT_EQ(options.target_spread, 0.5);
  EXPECT_EQ(options.max_seconds, 0.25);
  // Unset options keep their defaults.
  const MeasurementOptions defaults;
  absl::StatusOr<std::shared_ptr<RuntimeSource>> one = MakeRuntimeSource("cpu(min_runs=1)");
  ASSERT_TRUE(one.ok()) << one.status();
  const MeasurementOptions& some = static_cast<CpuMeasuredSource&>(**one).runtime().options();
  EXPECT_EQ(some.min_runs, 1);
  EXPECT_EQ(some.max_runs, defaults.max_runs);
  EXPECT_EQ(some.max_seconds, defaults.max_seconds);
}

TEST(RuntimeSourceCpuTest, BadMeasurementOptionsSayWhatIsWrong) {
  auto message = [](const char* spec) {
    absl::StatusOr<std::shared_ptr<RuntimeSource>> s = MakeRuntimeSource(spec);
    EXPECT_FALSE(s.ok()) << spec;
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
    return std::string(s.status().message());
  };
  EXPECT_EQ(message("cpu(runs=3)"), "reward source `cpu` has no option `runs`");
  EXPECT_EQ(message("cpu(min_runs=many)"),
            "reward source option `min_runs` must be an integer, got `many`");
  EXPECT_EQ(message("cpu(max_seconds=0)"),
            "reward source `cpu`: need target_spread >= 0 and max_seconds > 0, got 0.05 and 0");
  EXPECT_EQ(message("cpu(min_runs=5, max_runs=2)"),
            "reward source `cpu`: need warmup_runs >= 0 and 1 <= min_runs <= max_runs <= 100000, "
            "got 2, 5, 2");
  EXPECT_NE(message("cpu(min_runs)").find("is not of the form key=value"), std::string::npos);
}

TEST(RuntimeSourceCpuTest, GpuSourceWhereThereIsNoGpuSaysWhyAndSuggestsCpu) {
  absl::StatusOr<std::shared_ptr<RuntimeSource>> gpu = MakeRuntimeSource("gpu");
  if (gpu.ok()) GTEST_SKIP() << "a GPU is present";
  EXPECT_NE(gpu.status().message().find("cpu"), std::string::npos) << gpu.status();
}

}  // namespace
}  // namespace hlogym

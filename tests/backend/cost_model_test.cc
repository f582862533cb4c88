// Tests of the analytical cost model: kernels, bytes, flops, loops, calibration.
#include "backend/cost_model.h"

#include "absl/strings/str_cat.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

const Shape kVec = Shape::Array(PrimitiveType::kF32, {1 << 20});  // 4 MiB

// exp(negate(p)) unfused, or as one loop fusion when `fused`.
std::unique_ptr<Module> MakeChain(bool fused) {
  auto module = std::make_unique<Module>("chain");
  auto main = std::make_unique<Computation>("main");
  Instruction* p = main->AddInstruction(Instruction::CreateParameter(0, kVec, "p"));
  if (!fused) {
    Instruction* neg = main->AddInstruction(Instruction::Create(Opcode::kNegate, kVec, {p}));
    main->set_root(main->AddInstruction(Instruction::Create(Opcode::kExp, kVec, {neg})));
    module->set_entry(module->AddComputation(std::move(main)));
    return module;
  }
  auto body = std::make_unique<Computation>("fused_computation");
  Instruction* q = body->AddInstruction(Instruction::CreateParameter(0, kVec, "q"));
  Instruction* neg = body->AddInstruction(Instruction::Create(Opcode::kNegate, kVec, {q}));
  body->set_root(body->AddInstruction(Instruction::Create(Opcode::kExp, kVec, {neg})));
  Computation* fused_comp = module->AddComputation(std::move(body));
  Instruction* fusion =
      main->AddInstruction(Instruction::Create(Opcode::kFusion, kVec, {p}));
  fusion->mutable_attrs<FusionAttrs>().kind = FusionKind::kLoop;
  fusion->set_called_computations({fused_comp});
  fused_comp->set_fusion_instruction(fusion);
  main->set_root(fusion);
  module->set_entry(module->AddComputation(std::move(main)));
  return module;
}

TEST(CostModelTest, FusionSavesTheIntermediateAndALaunch) {
  const DeviceSpec h100 = H100Device();
  CostEstimate unfused = EstimateCost(*MakeChain(false), h100);
  CostEstimate fused = EstimateCost(*MakeChain(true), h100);
  EXPECT_EQ(unfused.kernels, 2);
  EXPECT_EQ(fused.kernels, 1);
  const double mib4 = 4.0 * (1 << 20);
  EXPECT_DOUBLE_EQ(unfused.bytes, 4 * mib4);  // two kernels, each read+write
  EXPECT_DOUBLE_EQ(fused.bytes, 2 * mib4);
  EXPECT_DOUBLE_EQ(unfused.flops, (1 + 16) * double(1 << 20));
  EXPECT_DOUBLE_EQ(fused.flops, unfused.flops);
  EXPECT_NEAR(fused.seconds, 2 * mib4 / 3.35e12 + 5e-6, 1e-12);
  EXPECT_LT(fused.seconds, unfused.seconds);
}

TEST(CostModelTest, TranscendentalsCostWhatTheDeviceSays) {
  // One exp per element: a few flops on a GPU, a vectorized polynomial on
  // a CPU, where the fused exp chain is then compute-bound.
  const double n = double(1 << 20);
  const CostEstimate gpu = EstimateCost(*MakeChain(true), H100Device());
  const CostEstimate cpu = EstimateCost(*MakeChain(true), CpuDevice());
  EXPECT_DOUBLE_EQ(gpu.flops, (1 + 16) * n);
  EXPECT_DOUBLE_EQ(cpu.flops, (1 + 45) * n);
  const DeviceSpec c = CpuDevice();
  EXPECT_NEAR(cpu.seconds, cpu.flops / c.peak_flops_per_s + c.launch_seconds, 1e-12);
  EXPECT_GT(cpu.flops / c.peak_flops_per_s, cpu.bytes / c.bandwidth_bytes_per_s);
}

// A fusion of x - broadcast(reduce(x)) over f32[512,512], reducing
// `reduced` and broadcasting along the other dimension.
std::unique_ptr<Module> ReduceBroadcastFusion(int reduced) {
  const int kept = 1 - reduced;
  const std::string text = absl::StrCat(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
fc {
  p = f32[512,512] parameter(0)
  z = f32[] constant(0)
  r = f32[512] reduce(p, z), dimensions={)", reduced, R"(}, to_apply=add
  b = f32[512,512] broadcast(r), dimensions={)", kept, R"(}
  ROOT s = f32[512,512] subtract(p, b)
}
ENTRY main {
  x = f32[512,512] parameter(0)
  ROOT f = f32[512,512] fusion(x), kind=kLoop, calls=fc
})");
  return ParseModule(text).value();
}

TEST(CostModelTest, FusedProducersCountAsOftenAsTheKernelComputesThem) {
  const double n = 512.0 * 512.0;
  const double reduce = n + 1;  // a reduce's flops: its inputs' elements, the init's one
  // Row sums broadcast along the rows: each row's sum is computed once per
  // row (the loop over a row does not change it), so once in all.
  EXPECT_DOUBLE_EQ(EstimateCost(*ReduceBroadcastFusion(1), CpuDevice()).flops, reduce + n);
  // Column sums broadcast along the columns: the innermost loop changes the
  // column, so every row recomputes all the column sums.
  EXPECT_DOUBLE_EQ(EstimateCost(*ReduceBroadcastFusion(0), CpuDevice()).flops,
                   512 * reduce + n);
  // A slice of a fused exp computes only the slice's elements.
  std::unique_ptr<Module> sliced = ParseModule(R"(
HloModule m
fc {
  p = f32[1048576] parameter(0)
  e = f32[1048576] exponential(p)
  ROOT s = f32[1024] slice(e), slice={[0:1024]}
}
ENTRY main {
  x = f32[1048576] parameter(0)
  ROOT f = f32[1024] fusion(x), kind=kLoop, calls=fc
})").value();
  const CostEstimate estimate = EstimateCost(*sliced, H100Device());
  EXPECT_DOUBLE_EQ(estimate.flops, 1024 * 16.0);
  EXPECT_DOUBLE_EQ(estimate.transcendentals, 1024);
  EXPECT_DOUBLE_EQ(estimate.bytes, 2 * 4096.0);  // the slice's window in, the slice out
}

TEST(CostModelTest, DevicesByName) {
  EXPECT_EQ(DeviceByName("cpu")->name, "cpu");
  absl::Status bad = DeviceByName("tpu").status();
  EXPECT_NE(bad.message().find("known devices: cpu, h100"), std::string::npos) << bad;
}

TEST(CostModelTest, CalibrationRecoversAKnownDevice) {
  const DeviceSpec truth{"x", 1e11, 1e12, 3e-6};
  std::vector<KernelSample> samples;
  for (double bytes : {1e5, 1e6, 1e7, 1e8}) {
    samples.push_back({bytes, bytes / 100, truth.launch_seconds + bytes / truth.bandwidth_bytes_per_s});
  }
  for (double flops : {1e9, 1e10}) {
    samples.push_back({1e3, flops, truth.launch_seconds + flops / truth.peak_flops_per_s});
  }
  DeviceSpec no_cache = CpuDevice();
  no_cache.cache_bytes = 0;
  DeviceSpec fitted = Calibrate(no_cache, samples).value();
  EXPECT_NEAR(fitted.bandwidth_bytes_per_s / truth.bandwidth_bytes_per_s, 1, 1e-6);
  EXPECT_NEAR(fitted.launch_seconds / truth.launch_seconds, 1, 1e-6);
  EXPECT_NEAR(fitted.peak_flops_per_s / truth.peak_flops_per_s, 1, 1e-3);
  EXPECT_FALSE(Calibrate(CpuDevice(), {samples[0]}).ok());
}

TEST(CostModelTest, KernelsThatFitTheCacheStreamAtItsBandwidth) {
  const DeviceSpec cpu = CpuDevice();
  const double small = cpu.cache_bytes / 2, large = cpu.cache_bytes * 2;
  EXPECT_DOUBLE_EQ(KernelSeconds(small, 0, cpu),
                   small / cpu.cache_bandwidth_bytes_per_s + cpu.launch_seconds);
  EXPECT_DOUBLE_EQ(KernelSeconds(large, 0, cpu),
                   large / cpu.bandwidth_bytes_per_s + cpu.launch_seconds);
  // Calibration recovers both bandwidths of a device with a cache.
  DeviceSpec truth = cpu;
  truth.bandwidth_bytes_per_s = 15e9;
  truth.cache_bandwidth_bytes_per_s = 60e9;
  truth.launch_seconds = 2e-6;
  std::vector<KernelSample> samples;
  for (double bytes : {1e5, 1e6, 1e7, 4e7, 1e8, 1e9}) {
    samples.push_back({bytes, 0, KernelSeconds(bytes, 0, truth)});
  }
  for (double flops : {1e9, 1e10}) samples.push_back({1e3, flops, KernelSeconds(1e3, flops, truth)});
  const DeviceSpec fitted = Calibrate(cpu, samples).value();
  EXPECT_NEAR(fitted.bandwidth_bytes_per_s / truth.bandwidth_bytes_per_s, 1, 1e-6);
  EXPECT_NEAR(fitted.cache_bandwidth_bytes_per_s / truth.cache_bandwidth_bytes_per_s, 1, 1e-3);
  EXPECT_NEAR(fitted.launch_seconds / truth.launch_seconds, 1, 1e-6);
  // Kernels that all fit the cache (small modules) still give the launch cost.
  samples.erase(samples.begin() + 3, samples.begin() + 6);
  const DeviceSpec cached_only = Calibrate(cpu, samples).value();
  EXPECT_NEAR(cached_only.cache_bandwidth_bytes_per_s / truth.cache_bandwidth_bytes_per_s, 1,
              1e-3);
  EXPECT_NEAR(cached_only.launch_seconds / truth.launch_seconds, 1, 1e-3);
  EXPECT_EQ(cached_only.bandwidth_bytes_per_s, cpu.bandwidth_bytes_per_s);  // nothing to fit
}

}  // namespace
}  // namespace hlogym

// Tests of the analytical cost model: kernels, bytes, flops, loops, calibration.
#include "backend/cost_model.h"

#include "core/ir/module.h"
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
  DeviceSpec fitted = Calibrate(CpuDevice(), samples).value();
  EXPECT_NEAR(fitted.bandwidth_bytes_per_s / truth.bandwidth_bytes_per_s, 1, 1e-6);
  EXPECT_NEAR(fitted.launch_seconds / truth.launch_seconds, 1, 1e-6);
  EXPECT_NEAR(fitted.peak_flops_per_s / truth.peak_flops_per_s, 1, 1e-3);
  EXPECT_FALSE(Calibrate(CpuDevice(), {samples[0]}).ok());
}

}  // namespace
}  // namespace hlogym

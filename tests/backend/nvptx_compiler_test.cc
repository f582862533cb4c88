// PTX generation without a GPU: every kernel of every corpus module (after the
// default pipeline, and unfused) lowers to PTX that ptxas assembles for
// sm_90, and the kernel shapes (loop, row reduction) are chosen as intended.
#include "backend/nvptx_compiler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/gpu_fault_kernel.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

std::string Ptxas() {
  for (const std::string& dir : {std::string("/usr/local/cuda/bin"), std::string("/usr/bin")}) {
    if (std::filesystem::exists(dir + "/ptxas")) return dir + "/ptxas";
  }
  return "";
}

// ptxas's verdict on `ptx`: "" when it assembles, else its output.
std::string Assemble(const std::string& ptx, const std::string& tag) {
  const std::string base = (std::filesystem::temp_directory_path() /
                            ("hlogym_ptx_" + std::to_string(::getpid()) + "_" + tag)).string();
  std::ofstream(base + ".ptx") << ptx;
  const std::string command = Ptxas() + " -arch=sm_90 " + base + ".ptx -o " + base + ".cubin > " +
                              base + ".log 2>&1";
  const int rc = std::system(command.c_str());
  std::stringstream log;
  log << std::ifstream(base + ".log").rdbuf();
  std::filesystem::remove(base + ".ptx");
  std::filesystem::remove(base + ".cubin");
  std::filesystem::remove(base + ".log");
  return rc == 0 ? "" : "ptxas failed: " + log.str();
}

const Instruction* Named(const Computation& c, const std::string& name) {
  for (const auto& i : c.instructions()) {
    if (i->name() == name) return i.get();
  }
  return nullptr;
}

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

TEST(NvptxCompilerTest, LoopKernelIsAnEntryPointWithGridStride) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
fused {
  a = f32[1000,3] parameter(0)
  b = f32[1000,3] parameter(1)
  ROOT t = f32[1000,3] tanh(add(a, b))
}
ENTRY e {
  x = f32[1000,3] parameter(0)
  y = f32[1000,3] parameter(1)
  ROOT f = f32[1000,3] fusion(x, y), kind=kLoop, calls=fused
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<GpuKernelIr> ir = EmitGpuKernelIr(*m->entry()->root(), "k");
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->kind, "loop");
  EXPECT_EQ(ir->buffer_count, 3);
  EXPECT_EQ(ir->launch.threads, 256);
  EXPECT_EQ(ir->launch.blocks, (3000 + 255) / 256);
  absl::StatusOr<std::string> ptx = CompileToPtx(*std::move(ir));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find(".visible .entry k("), std::string::npos);
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  EXPECT_EQ(ptx->find("__nv_tanhf"), std::string::npos) << "libdevice was not inlined";
  if (!Ptxas().empty()) {
    EXPECT_EQ(Assemble(*ptx, "loop"), "");
  }
}

TEST(NvptxCompilerTest, MinorDimensionReductionsGetABlockPerRow) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,1000] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(x, z), dimensions={1}, to_apply=add
  c = f32[1000] reduce(x, z), dimensions={0}, to_apply=add
  y = f32[5000,4] parameter(1)
  few = f32[4] reduce(y, z), dimensions={0}, to_apply=add
  ROOT t = (f32[64], f32[1000], f32[4]) tuple(r, c, few)
})");
  ASSERT_NE(m, nullptr);
  const Computation& entry = *m->entry();
  absl::StatusOr<GpuKernelIr> row = EmitGpuKernelIr(*Named(entry, "r"), "row");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->kind, "row-reduce");
  EXPECT_EQ(row->launch.blocks, 64);
  EXPECT_EQ(row->launch.threads, 256);
  // A column reduction with enough outputs reads coalesced with a thread per
  // output; with few, long columns it gets a block per output.
  absl::StatusOr<GpuKernelIr> column = EmitGpuKernelIr(*Named(entry, "c"), "column");
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(column->kind, "loop");
  absl::StatusOr<GpuKernelIr> few = EmitGpuKernelIr(*Named(entry, "few"), "few");
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_EQ(few->kind, "row-reduce");
  EXPECT_EQ(few->launch.blocks, 4);
  absl::StatusOr<std::string> ptx = CompileToPtx(*std::move(row));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_NE(ptx->find("shfl.sync.down"), std::string::npos);
  EXPECT_NE(ptx->find("bar.sync"), std::string::npos);
  if (!Ptxas().empty()) {
    EXPECT_EQ(Assemble(*ptx, "row"), "");
  }
}

TEST(NvptxCompilerTest, ElementwiseScansGetAThreadPerSlicePosition) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
body {
  x = f32[300] parameter(0)
  c = f32[300] parameter(1)
  s = f32[300] add(x, c)
  ROOT t = (f32[300], f32[300]) tuple(s, s)
}
ENTRY e {
  x = f32[300,50] parameter(0)
  z = f32[] constant(0)
  init = f32[300] broadcast(z), dimensions={}
  ROOT scan = (f32[300,50], f32[300]) scan(x, init), dimensions={1}, num_carries=1, is_associative=true, to_apply=body
})");
  ASSERT_NE(m, nullptr);
  const Instruction& scan = *m->entry()->root();
  EXPECT_TRUE(IsGpuScan(scan));
  absl::StatusOr<GpuKernelIr> ir = EmitGpuKernelIr(scan, "scan");
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->kind, "scan");
  EXPECT_EQ(ir->buffer_count, 4);
  EXPECT_EQ(ir->launch.blocks, 2);
  absl::StatusOr<std::string> ptx = CompileToPtx(*std::move(ir));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  if (!Ptxas().empty()) {
    EXPECT_EQ(Assemble(*ptx, "scan"), "");
  }
}

TEST(NvptxCompilerTest, ScattersUseAtomicsOrCompareAndSwap) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] multiply(a, b)
}
ENTRY e {
  t = f32[50,8] parameter(0)
  i = s32[400,1] parameter(1)
  u = f32[400,8] parameter(2)
  a = f32[50,8] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT p = f32[50,8] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
})");
  ASSERT_NE(m, nullptr);
  const Computation& entry = *m->entry();
  for (const char* name : {"a", "p"}) {
    const Instruction& scatter = *Named(entry, name);
    ASSERT_TRUE(IsGpuScatter(scatter)) << name;
    absl::StatusOr<GpuKernelIr> ir = EmitGpuKernelIr(scatter, "scatter");
    ASSERT_TRUE(ir.ok()) << ir.status();
    EXPECT_EQ(ir->kind, "scatter");
    EXPECT_EQ(ir->launch.blocks, (400 * 8 + 255) / 256);
    absl::StatusOr<std::string> ptx = CompileToPtx(*std::move(ir));
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    EXPECT_NE(ptx->find(std::string(name) == "a" ? "atom.global.add.f32" : "atom.global.cas.b32"),
              std::string::npos) << *ptx;
    if (!Ptxas().empty()) {
      EXPECT_EQ(Assemble(*ptx, name), "");
    }
  }
}

TEST(NvptxCompilerTest, ReductionsBesideOtherOutputsShareAKernelByBlockRange) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  x = f32[4096,256] parameter(0)
  sq = f32[4096,256] multiply(x, x)
  z = f32[] constant(0)
  all = f32[] reduce(sq, z), dimensions={0,1}, to_apply=add
  ROOT t = (f32[4096,256], f32[]) tuple(sq, all)
}
ENTRY e {
  x = f32[4096,256] parameter(0)
  ROOT f = (f32[4096,256], f32[]) fusion(x), kind=kInput, calls=fused
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<GpuKernelIr> ir = EmitGpuKernelIr(*m->entry()->root(), "mixed");
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->kind, "row-reduce+loop");
  EXPECT_EQ(ir->launch.threads, 256);
  EXPECT_EQ(ir->launch.blocks, 1 + 4096);  // one reducing block, then the loop's
  absl::StatusOr<std::string> ptx = CompileToPtx(*std::move(ir));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  if (!Ptxas().empty()) {
    EXPECT_EQ(Assemble(*ptx, "mixed"), "");
  }
}

TEST(NvptxCompilerTest, NonKernelsAreRefusedByName) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  x = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<GpuKernelIr> ir = EmitGpuKernelIr(*m->entry()->root(), "k");
  ASSERT_FALSE(ir.ok());
  EXPECT_EQ(ir.status().message(), "not supported: dot (d) is not a GPU kernel");
}

// Every corpus module after the default pipeline (and unfused, as a long
// test): all kernels lower, and the PTX assembles for sm_90 where ptxas is
// installed.
TEST(NvptxCompilerTest, EveryCorpusKernelAssemblesForSm90) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(HLOGYM_SOURCE_DIR) / "data/corpus/hlo")) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 25u);
  for (const auto& path : files) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    // Unfused too under HLOGYM_LONG_TESTS=1 (it doubles the time).
    const char* long_tests = std::getenv("HLOGYM_LONG_TESTS");
    const bool both = long_tests != nullptr && std::string(long_tests) == "1";
    for (bool fused : {true, false}) {
      if (!fused && !both) continue;
      std::unique_ptr<Module> m = Parse(text.str());
      ASSERT_NE(m, nullptr) << path;
      if (fused) {
        ASSERT_TRUE(DefaultPipeline().Run(*m).ok()) << path;
      }
      absl::StatusOr<std::string> ptx = EmitModulePtx(*m);
      ASSERT_TRUE(ptx.ok()) << path << (fused ? " fused: " : ": ") << ptx.status();
      // One entry point per kernel the header lists.
      auto count = [&](const std::string& what) {
        int64_t n = 0;
        for (size_t at = ptx->find(what); at != std::string::npos; at = ptx->find(what, at + 1)) ++n;
        return n;
      };
      EXPECT_EQ(count(".visible .entry"), count("// hlogym_kernel_")) << path;
      if (!Ptxas().empty()) {
        EXPECT_EQ(Assemble(*ptx, path.stem().string()), "") << path << (fused ? " fused" : "");
      }
    }
  }
}

// The deliberately broken kernel of fault-isolation tests must assemble, or
// the tests that run it on a GPU would check a load error instead.
TEST(NvptxCompilerTest, TheFaultInjectionKernelAssemblesForSm90) {
  if (Ptxas().empty()) GTEST_SKIP() << "no ptxas";
  EXPECT_EQ(Assemble(kIllegalAddressKernelPtx, "fault"), "");
  EXPECT_NE(std::string(kIllegalAddressKernelPtx).find(std::string(".entry ") +
                                                       kIllegalAddressKernelName),
            std::string::npos);
}

}  // namespace
}  // namespace hlogym

// Split reductions (backend/cpu_split_reduce.h): reduces to few elements over
// many computed as partial results over chunks of the leading reduced
// dimensions and folded after the kernel. Each form is checked to split and
// compared exactly with the reference interpreter: sums on inputs whose
// double sums are exact in any order (so reassociation cannot hide behind a
// tolerance), maximum and minimum on NaNs and signed zeros (exact in any
// order), run both as kernels over three ranges and through the executable.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/cpu_executable.h"
#include "core/eval/interpreter.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::Compiler;
using kernel_test::Mismatch;
using kernel_test::Parse;
using kernel_test::RunKernel;

// Multiples of 1/16 in [-3.1, 3.2]; with an infinity and signed zeros when
// `specials`, and a NaN when `nan` (for maximum/minimum).
Literal Values(PrimitiveType type, const std::vector<int64_t>& dims, bool specials, bool nan) {
  Literal l(Shape::Array(type, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) {
    double v = static_cast<double>((i * 37) % 101 - 50) / 16;
    if (specials && i % 9973 == 5) v = (i / 9973) % 2 ? -0.0 : 0.0;
    if (specials && i == 300001) v = std::numeric_limits<double>::infinity();
    if (nan && i == 400003) v = std::numeric_limits<double>::quiet_NaN();
    l.SetFromDouble(i, v);
  }
  return l;
}

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&s, i ? "," : "", dims[i]);
  return s + "]";
}

struct Case {
  std::vector<int64_t> in;
  std::string reduced;           // dimensions={...}
  std::vector<int64_t> out;
  std::string op;                // add, maximum, minimum
};

// A fusion of an elementwise output (x * 2) and the reduce of x * x, as
// resnet's batch-norm gradient has them.
std::string FusionText(const Case& c, PrimitiveType type) {
  const std::string t(PrimitiveTypeName(type));
  const std::string in = t + Dims(c.in), out = t + Dims(c.out);
  const std::string init = c.op == "add" ? "0.5" : c.op == "maximum" ? "-inf" : "inf";
  return absl::StrCat("HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                      "[] parameter(1)\n  ROOT s = ", t, "[] ", c.op, "(a, b)\n}\n",
                      "fused {\n  x = ", in, " parameter(0)\n  two = ", t, "[] constant(2)\n",
                      "  twos = ", in, " broadcast(two), dimensions={}\n",
                      "  d = ", in, " multiply(x, twos)\n  sq = ", in, " multiply(x, x)\n",
                      "  z = ", t, "[] constant(", init, ")\n",
                      "  s = ", out, " reduce(sq, z), dimensions={", c.reduced, "}, to_apply=r\n",
                      "  ROOT t = (", in, ", ", out, ") tuple(d, s)\n}\n",
                      "ENTRY e {\n  x = ", in, " parameter(0)\n",
                      "  ROOT f = (", in, ", ", out, ") fusion(x), kind=kInput, calls=fused\n}\n");
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // A full sum to a scalar (resnet's squared-weights term).
      {{64, 32, 256}, "0,1,2", {}, "add"},
      // Channel sums (a bias gradient): the innermost dimension kept.
      {{256, 32, 64}, "0,1", {64}, "add"},
      // Chunks of unequal rows (33000 rows in 64 partials).
      {{1000, 33, 16}, "0,1", {16}, "add"},
      // A kept dimension between reduced ones: the innermost is reduced.
      {{64, 8, 1024}, "0,2", {8}, "add"},
      {{256, 32, 64}, "0,1", {64}, "maximum"},
      {{64, 32, 256}, "0,1,2", {}, "minimum"},
  };
  return cases;
}

TEST(CpuSplitReduceTest, KernelsSplitAndMatchTheInterpreter) {
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    for (const Case& c : Cases()) {
      const std::string text = FusionText(c, type);
      SCOPED_TRACE(text);
      std::unique_ptr<Module> module = Parse(text);
      ASSERT_NE(module, nullptr);
      const Instruction& root = *module->entry()->root();
      absl::StatusOr<CpuKernel> kernel = Compiler().Compile(root);
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      ASSERT_EQ(kernel->split_reductions.size(), 1u);
      EXPECT_GE(kernel->split_reductions[0].partials, 4);
      std::vector<Literal> inputs;
      inputs.push_back(Values(type, c.in, c.op != "add", c.op == "maximum"));
      absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(*module, inputs);
      ASSERT_TRUE(expected.ok()) << expected.status();
      // As a kernel over three ranges, and through the executable (its
      // scratch and the fold after the parallel loop).
      absl::StatusOr<std::vector<Literal>> ranges = RunKernel(root, {&inputs[0]});
      ASSERT_TRUE(ranges.ok()) << ranges.status();
      absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
      ASSERT_TRUE(e.ok()) << e.status();
      absl::StatusOr<std::vector<Literal>> run = (*e)->Run(inputs);
      ASSERT_TRUE(run.ok()) << run.status();
      for (size_t k = 0; k < expected->size(); ++k) {
        EXPECT_EQ(Mismatch((*expected)[k], (*ranges)[k], 0), "") << "ranges, output " << k;
        EXPECT_EQ(Mismatch((*expected)[k], (*run)[k], 0), "") << "executable, output " << k;
      }
    }
  }
}

TEST(CpuSplitReduceTest, SmallOrManyOutputReductionsAreNotSplit) {
  // Few elements per output (a row sum of 1024 rows), too few elements in
  // all, and a reducer that is not add/maximum/minimum.
  const std::vector<std::string> texts = {
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[1024,1024] parameter(0)\n"
      "  z = f32[] constant(0)\n  ROOT s = f32[1024] reduce(x, z), dimensions={1}, to_apply=r\n}\n",
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[64,32] parameter(0)\n"
      "  z = f32[] constant(0)\n  ROOT s = f32[] reduce(x, z), dimensions={0,1}, to_apply=r\n}\n",
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] multiply(a, b)\n}\nENTRY e {\n  x = f32[512,1024] parameter(0)\n"
      "  z = f32[] constant(1)\n  ROOT s = f32[] reduce(x, z), dimensions={0,1}, to_apply=r\n}\n",
  };
  for (const std::string& text : texts) {
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<CpuKernel> kernel = Compiler().Compile(*module->entry()->root());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_TRUE(kernel->split_reductions.empty()) << text;
  }
}

}  // namespace
}  // namespace hlogym

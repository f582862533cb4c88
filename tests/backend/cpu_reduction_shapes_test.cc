// The CPU kernels' reduction code shapes (backend/elemental_reduce.cc with
// the CPU hooks): vectorizable float max/min that restore NaN and the sign of
// zero, integer and pred folds with partial accumulators plus a tail, and
// reductions hoisted out of the loops they do not depend on (a reduce inside
// a reduce, a row statistic feeding every element), column reductions folded
// in tiles of columns. Each is compared exactly with the reference
// interpreter.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/eval/formula_inputs.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::ExpectExact;


// Rows of 20: all -0 and +0 mixed; only -0; only +0; a NaN among numbers;
// -inf only. Row r's values are c[r, j].
std::string SignedZeroRows() {
  auto row = [](const std::string& first, const std::string& rest) {
    std::string s = "{" + first;
    for (int j = 1; j < 20; ++j) s += ", " + (j == 13 ? first : rest);
    return s + "}";
  };
  return absl::StrCat("{", row("-0", "-0"), ", ", row("0", "-0"), ", ", row("-0", "0"), ", ",
                      row("0", "0"), ", ", row("nan", "3"), ", ", row("-inf", "-inf"), "}");
}

TEST(CpuReductionShapesTest, FloatMaxAndMinKeepNaNAndTheSignOfZero) {
  for (const char* op : {"maximum", "minimum"}) {
    for (const char* init : {"-inf", "inf", "-0", "0"}) {
      ExpectExact(absl::StrCat(R"(HloModule m
r {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] )", op, R"((x, y)
}
fused {
  p0 = f32[6,20] parameter(0)
  c = f32[6,20] constant()", SignedZeroRows(), R"()
  a = f32[6,20] add(c, p0)
  m = f32[6,20] multiply(a, c)
  z = f32[] constant()", init, R"()
  r0 = f32[6] reduce(c, z), dimensions={1}, to_apply=r
  r1 = f32[6] reduce(m, z), dimensions={1}, to_apply=r
  ROOT t = (f32[6], f32[6]) tuple(r0, r1)
}
ENTRY e {
  a = f32[6,20] parameter(0)
  ROOT f = (f32[6], f32[6]) fusion(a), kind=kInput, calls=fused
})"));
    }
  }
}

TEST(CpuReductionShapesTest, IntegerAndPredFoldsWithPartialsAndATail) {
  struct Case {
    const char* type;
    const char* op;
    const char* init;
  };
  for (const Case& c : {Case{"s32", "add", "7"}, Case{"s32", "multiply", "1"},
                        Case{"s32", "maximum", "-5"}, Case{"s32", "minimum", "5"},
                        Case{"u8", "maximum", "0"}, Case{"u8", "minimum", "255"},
                        Case{"s64", "xor", "3"}, Case{"u32", "and", "4294967295"},
                        Case{"s16", "or", "0"}}) {
    ExpectExact(absl::StrCat("HloModule m\nr {\n  x = ", c.type, "[] parameter(0)\n  y = ", c.type,
                             "[] parameter(1)\n  ROOT s = ", c.type, "[] ", c.op, R"((x, y)
}
fused {
  p0 = )", c.type, R"([5,3,37] parameter(0)
  z = )", c.type, "[] constant(", c.init, R"()
  ROOT r = )", c.type, R"([3] reduce(p0, z), dimensions={0,2}, to_apply=r
}
ENTRY e {
  a = )", c.type, R"([5,3,37] parameter(0)
  ROOT f = )", c.type, R"([3] fusion(a), kind=kInput, calls=fused
})"));
  }
  for (const char* op : {"and", "or"}) {
    ExpectExact(absl::StrCat(R"(HloModule m
r {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT s = pred[] )", op, R"((x, y)
}
fused {
  p0 = f32[4,41] parameter(0)
  zero = f32[] constant(0)
  zb = f32[4,41] broadcast(zero), dimensions={}
  g = pred[4,41] compare(p0, zb), direction=GT
  i = )", std::string(op) == "and" ? "pred[] constant(true)" : "pred[] constant(false)", R"(
  ROOT r = pred[4] reduce(g, i), dimensions={1}, to_apply=r
}
ENTRY e {
  a = f32[4,41] parameter(0)
  ROOT f = pred[4] fusion(a), kind=kInput, calls=fused
})"));
  }
}

TEST(CpuReductionShapesTest, HoistedReductionsFeedEveryElement) {
  // A layer norm's variance (a reduce inside a reduce, the inner one hoisted
  // out of the outer loop) normalizing every element (both hoisted out of
  // the column loop).
  ExpectExact(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p0 = f32[7,45] parameter(0)
  z = f32[] constant(0)
  n = f32[] constant(0.0222222)
  nb = f32[7] broadcast(n), dimensions={}
  s = f32[7] reduce(p0, z), dimensions={1}, to_apply=add
  mean = f32[7] multiply(s, nb)
  mb = f32[7,45] broadcast(mean), dimensions={0}
  d = f32[7,45] subtract(p0, mb)
  d2 = f32[7,45] multiply(d, d)
  v = f32[7] reduce(d2, z), dimensions={1}, to_apply=add
  var = f32[7] multiply(v, nb)
  vb = f32[7,45] broadcast(var), dimensions={0}
  ROOT o = f32[7,45] divide(d, vb)
}
ENTRY e {
  a = f32[7,45] parameter(0)
  ROOT f = f32[7,45] fusion(a), kind=kLoop, calls=fused
})");
}

TEST(CpuReductionShapesTest, ColumnReductionsFoldTilesOfColumnsInOrder) {
  // Kept dimensions minor: one kept dimension wider than a tile, two kept
  // dimensions (delinearized), a max with NaNs, an integer sum, and a
  // multi-output fusion with an elementwise output beside them.
  ExpectExact(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
addi {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
fused {
  p0 = f32[6,5,300] parameter(0)
  z = f32[] constant(0.5)
  t = f32[6,5,300] tanh(p0)
  s = f32[300] reduce(t, z), dimensions={0,1}, to_apply=add
  ninf = f32[] constant(-inf)
  l = f32[6,5,300] log(p0)
  m = f32[5,300] reduce(l, ninf), dimensions={0}, to_apply=max
  c = s32[6,5,300] convert(p0)
  zi = s32[] constant(3)
  i = s32[300] reduce(c, zi), dimensions={0,1}, to_apply=addi
  ROOT out = (f32[300], f32[5,300], s32[300], f32[6,5,300]) tuple(s, m, i, t)
}
ENTRY e {
  a = f32[6,5,300] parameter(0)
  ROOT f = (f32[300], f32[5,300], s32[300], f32[6,5,300]) fusion(a), kind=kInput, calls=fused
})");
}

}  // namespace
}  // namespace hlogym

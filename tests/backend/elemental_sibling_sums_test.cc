// Float sums of one fusion over the same rows share one loop
// (ElementalEmitter::EmitSiblingSums), compared exactly with the reference
// interpreter: f32 and bf16 sums with a shared producer, beside a max, a
// sum over other dimensions and an elementwise output.
#include <string>

#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::ExpectExact;

TEST(ElementalSiblingSumsTest, SumsSharingAProducerBesideOtherOutputs) {
  ExpectExact(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
fused {
  p0 = f32[9,70] parameter(0)
  p1 = f32[9] parameter(1)
  b1 = f32[9,70] broadcast(p1), dimensions={0}
  d = f32[9,70] subtract(p0, b1)
  e = f32[9,70] multiply(d, d)
  z = f32[] constant(0)
  s1 = f32[9] reduce(e, z), dimensions={1}, to_apply=add
  m = f32[9,70] multiply(e, p0)
  s2 = f32[9] reduce(m, z), dimensions={1}, to_apply=add
  one = f32[] constant(1)
  s3 = f32[9] reduce(d, one), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  mx = f32[9] reduce(e, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[9], f32[9], f32[9], f32[9], f32[9,70]) tuple(s1, s2, s3, mx, m)
}
ENTRY e {
  x = f32[9,70] parameter(0)
  y = f32[9] parameter(1)
  ROOT f = (f32[9], f32[9], f32[9], f32[9], f32[9,70]) fusion(x, y), kind=kInput, calls=fused
})");
}

TEST(ElementalSiblingSumsTest, Bf16SumsOfARollAndSumsOverOtherDimensions) {
  ExpectExact(R"(HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
fused {
  p0 = bf16[6,5,40] parameter(0)
  s1 = bf16[6,5,1] slice(p0), slice={[0:6], [0:5], [39:40]}
  s2 = bf16[6,5,39] slice(p0), slice={[0:6], [0:5], [0:39]}
  r = bf16[6,5,40] concatenate(s1, s2), dimensions={2}
  e = bf16[6,5,40] multiply(r, p0)
  z = bf16[] constant(0)
  a = bf16[6,5] reduce(e, z), dimensions={2}, to_apply=add
  b = bf16[6,5] reduce(r, z), dimensions={2}, to_apply=add
  c = bf16[6,40] reduce(e, z), dimensions={1}, to_apply=add
  d = bf16[6,40] reduce(r, z), dimensions={1}, to_apply=add
  ROOT t = (bf16[6,5], bf16[6,5], bf16[6,40], bf16[6,40]) tuple(a, b, c, d)
}
ENTRY e {
  x = bf16[6,5,40] parameter(0)
  ROOT f = (bf16[6,5], bf16[6,5], bf16[6,40], bf16[6,40]) fusion(x), kind=kInput, calls=fused
})");
}

}  // namespace
}  // namespace hlogym

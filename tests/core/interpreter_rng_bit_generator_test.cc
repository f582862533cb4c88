// rng-bit-generator against golden values recorded from XLA:CPU (jax/jaxlib
// 0.10.2, HLO text run through tests/python/xla_oracle.py with x64 enabled):
// both algorithms, rng_default (Philox on XLA's CPU and GPU backends), u32,
// u64 and narrow outputs, odd shapes, and counters that wrap. The same
// comparisons run live against XLA in tests/python/test_rng_bit_generator.py.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

struct Result {
  std::vector<uint64_t> state;
  std::vector<uint64_t> bits;  // the output's elements, row-major, as unsigned
};

absl::StatusOr<Result> RunRng(const std::string& algorithm, const std::string& state_shape,
                           const std::string& out_shape, const std::vector<uint64_t>& state) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(absl::StrCat(
      "HloModule m\n\nENTRY e {\n  s = ", state_shape, " parameter(0)\n  ROOT r = (",
      state_shape, ", ", out_shape, ") rng-bit-generator(s), algorithm=", algorithm, "\n}\n"));
  if (!module.ok()) return module.status();
  Literal arg(Shape::Array(PrimitiveType::kU64, {static_cast<int64_t>(state.size())}));
  for (size_t i = 0; i < state.size(); ++i) arg.data<uint64_t>()[i] = state[i];
  absl::StatusOr<std::vector<Literal>> out = EvaluateFlat(**module, {arg});
  if (!out.ok()) return out.status();
  Result r;
  for (uint64_t w : (*out)[0].data<uint64_t>()) r.state.push_back(w);
  const Literal& bits = (*out)[1];
  const int width = ByteWidth(bits.shape().element_type());
  for (int64_t i = 0; i < bits.element_count(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, bits.raw_data() + i * width, width);
    r.bits.push_back(v);
  }
  return r;
}

void ExpectXla(const std::string& algorithm, const std::string& state_shape,
               const std::string& out_shape, const std::vector<uint64_t>& state,
               const std::vector<uint64_t>& new_state, const std::vector<uint64_t>& bits) {
  SCOPED_TRACE(absl::StrCat(algorithm, " ", state_shape, " -> ", out_shape));
  absl::StatusOr<Result> r = RunRng(algorithm, state_shape, out_shape, state);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state, new_state);
  EXPECT_EQ(r->bits, bits);
}

TEST(InterpRngBitGenerator, ThreeFryMatchesXla) {
  ExpectXla("rng_three_fry", "u64[2]", "u32[3]", {5, 7}, {5, 9},
            {4000641395u, 1063621336u, 10964293u});
  ExpectXla("rng_three_fry", "u64[2]", "u64[3]", {5, 7}, {5, 10},
            {4568218857448468851u, 8837050182540938565u, 6891647807627726705u});
  ExpectXla("rng_three_fry", "u64[2]", "u32[]", {5, 7}, {5, 8}, {4000641395u});
  // An odd shape (split along its larger dimension) whose counter wraps.
  ExpectXla("rng_three_fry", "u64[2]", "u32[3,5]", {1, kMax - 2}, {1, 6},
            {3276612752u, 1432270967u, 2522165384u, 3844624407u, 277883032u, 3023415290u,
             2531993477u, 247883890u, 763684785u, 43444564u, 3979645651u, 3745730563u,
             1672743891u, 4240503393u, 2109414752u});
  ExpectXla("rng_three_fry", "u64[2]", "u64[2,3]", {0xDEADBEEF, kMax - 3}, {0xDEADBEEF, 2},
            {8866326688816464682u, 12102652288140944914u, 10292091661614864201u,
             10226977574430742731u, 7289946101558397179u, 12033281180103410282u});
}

TEST(InterpRngBitGenerator, PhiloxMatchesXla) {
  ExpectXla("rng_philox", "u64[2]", "u32[3]", {5, 7}, {5, 8},
            {1957188081u, 3299040168u, 2189429415u});
  ExpectXla("rng_philox", "u64[2]", "u64[3]", {5, 7}, {5, 9},
            {14169269631707533809u, 12636950168311171751u, 14822611576293642300u});
  ExpectXla("rng_philox", "u64[3]", "u32[3]", {5, 7, 9}, {5, 8, 9},
            {832693445u, 132006561u, 1697787879u});
  ExpectXla("rng_philox", "u64[3]", "u64[3]", {5, 7, 9}, {5, 9, 9},
            {566963863185122501u, 8119322786418274279u, 16879833511832005226u});
  // The 128-bit counter carries into the high word (u64[3]); with u64[2]
  // the high half is the key and the carry is dropped from the state.
  ExpectXla("rng_philox", "u64[3]", "u32[7]", {42, kMax - 1, 11}, {42, 0, 12},
            {1721514866u, 540130907u, 691237818u, 273442138u, 19479598u, 1378281129u,
             367841078u});
  ExpectXla("rng_philox", "u64[2]", "u32[7]", {42, kMax - 1}, {42, 0},
            {1138359514u, 2588678068u, 738951096u, 823406777u, 1704475164u, 4028413619u,
             1340332995u});
}

TEST(InterpRngBitGenerator, DefaultIsPhiloxAsInXla) {
  ExpectXla("rng_default", "u64[2]", "u64[5]", {7, 123}, {7, 126},
            {2329578020579019236u, 14167344062450482850u, 18137616853942656108u,
             10512187860343712621u, 14619721089547101132u});
  ExpectXla("rng_default", "u64[2]", "u32[3]", {5, 7}, {5, 8},
            {1957188081u, 3299040168u, 2189429415u});
}

TEST(InterpRngBitGenerator, NarrowAndFloatOutputsAreTheLowBits) {
  // XLA generates 32-bit words and keeps the low bits of each.
  ExpectXla("rng_three_fry", "u64[2]", "u16[3]", {5, 7}, {5, 9}, {61811, 37592, 19781});
  ExpectXla("rng_three_fry", "u64[2]", "u8[3]", {5, 7}, {5, 9}, {115, 216, 69});
  ExpectXla("rng_three_fry", "u64[2]", "u4[3]", {5, 7}, {5, 9}, {3, 8, 5});
  ExpectXla("rng_three_fry", "u64[2]", "u2[3]", {5, 7}, {5, 9}, {3, 0, 1});
  ExpectXla("rng_philox", "u64[2]", "u8[3]", {5, 7}, {5, 8}, {241, 168, 167});
  ExpectXla("rng_philox", "u64[3]", "u4[3]", {5, 7, 9}, {5, 8, 9}, {5, 1, 7});
  // Float outputs hold the bits (XLA:CPU hands them back as u16/u32/u64).
  ExpectXla("rng_three_fry", "u64[2]", "f16[3]", {5, 7}, {5, 9}, {61811, 37592, 19781});
  ExpectXla("rng_philox", "u64[2]", "f32[3]", {5, 7}, {5, 8},
            {1957188081u, 3299040168u, 2189429415u});
  ExpectXla("rng_philox", "u64[3]", "f64[3]", {5, 7, 9}, {5, 9, 9},
            {566963863185122501u, 8119322786418274279u, 16879833511832005226u});
  ExpectXla("rng_philox", "u64[2]", "f8e4m3fn[3]", {5, 7}, {5, 8}, {241, 168, 167});
}

TEST(InterpRngBitGenerator, SignedOutputsWrap) {
  absl::StatusOr<Result> r = RunRng("rng_three_fry", "u64[2]", "s8[3]", {5, 7});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bits, (std::vector<uint64_t>{115, 216, 69}));  // -40 is stored as 0xd8
}

TEST(InterpRngBitGenerator, UnsupportedStatesAndTypesAreClearErrors) {
  absl::StatusOr<Result> r = RunRng("rng_three_fry", "u64[3]", "u32[4]", {1, 2, 3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "not supported: rng-bit-generator rng_three_fry with state u64[3] (XLA takes "
            "u64[2]) in instruction `r`");
  r = RunRng("rng_default", "u64[4]", "u32[4]", {1, 2, 3, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "not supported: rng-bit-generator rng_default with state u64[4] (XLA's Philox "
            "takes u64[2] or u64[3]) in instruction `r`");
  r = RunRng("rng_philox", "u64[2]", "u1[4]", {1, 2});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "not supported: rng-bit-generator with u1 output (XLA generates 2- to 64-bit "
            "integer or float bits) in instruction `r`");
}

TEST(InterpRngBitGenerator, EmptyOutputLeavesTheCounter) {
  ExpectXla("rng_philox", "u64[2]", "u32[0,3]", {5, 7}, {5, 7}, {});
  ExpectXla("rng_three_fry", "u64[2]", "u32[0,3]", {5, 7}, {5, 7}, {});
}

}  // namespace
}  // namespace hlogym

// The elemental emitter's index arithmetic (broadcast, reshape, transpose,
// slice, pad, concatenate, reverse, iota, dynamic-slice,
// dynamic-update-slice) and constants, unfused and inside fusions, compared
// exactly with the reference interpreter.
#include <string>
#include <vector>

#include "core/eval/formula_inputs.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"

namespace hlogym {
namespace {

using kernel_test::CompareRoot;
using kernel_test::ExpectExact;

// Compares the entry root on the formula inputs (exact).

TEST(ElementalDataMovementTest, Broadcast) {
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f32[3,5] parameter(0)
  ROOT r = f32[5,4,3] broadcast(p), dimensions={2,0}
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = s32[] parameter(0)
  ROOT r = s32[7,9] broadcast(p), dimensions={}
})");
}

TEST(ElementalDataMovementTest, ReshapeAndBitcast) {
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f32[6,10] parameter(0)
  ROOT r = f32[4,3,5] reshape(p)
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f32[6,1,10] parameter(0)
  ROOT r = f32[1,6,10,1] reshape(p)
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = bf16[12,5] parameter(0)
  ROOT r = bf16[60] bitcast(p)
})");
}

TEST(ElementalDataMovementTest, TransposeReverseSlice) {
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f32[2,3,4,5] parameter(0)
  ROOT r = f32[5,2,4,3] transpose(p), dimensions={3,0,2,1}
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = s8[6,7] parameter(0)
  ROOT r = s8[6,7] reverse(p), dimensions={0,1}
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f16[10,12] parameter(0)
  ROOT r = f16[3,4] slice(p), slice={[1:10:3], [2:12:3]}
})");
}

TEST(ElementalDataMovementTest, PadWithNegativeAndInteriorPadding) {
  ExpectExact(R"(HloModule m
ENTRY e {
  p = f32[4,5] parameter(0)
  v = f32[] parameter(1)
  ROOT r = f32[13,6] pad(p, v), padding=2_1_2x-1_0_1
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  p = s32[6] parameter(0)
  v = s32[] parameter(1)
  ROOT r = s32[1] pad(p, v), padding=-2_-3
})");
}

TEST(ElementalDataMovementTest, Concatenate) {
  ExpectExact(R"(HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  b = f32[3,5] parameter(1)
  c = f32[3,1] parameter(2)
  ROOT r = f32[3,8] concatenate(a, b, c), dimensions={1}
})");
}

TEST(ElementalDataMovementTest, Iota) {
  ExpectExact(R"(HloModule m
ENTRY e {
  ROOT r = s32[4,6] iota(), iota_dimension=1
})");
  ExpectExact(R"(HloModule m
ENTRY e {
  ROOT r = bf16[300,2] iota(), iota_dimension=0
})");
}

TEST(ElementalDataMovementTest, DynamicSliceClampsStartIndices) {
  const std::string text = R"(HloModule m
ENTRY e {
  p = f32[8,9] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT r = f32[3,4] dynamic-slice(p, i, j), dynamic_slice_sizes={3,4}
})";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  ASSERT_TRUE(module.ok());
  for (int64_t i : {-5, 0, 2, 6, 100}) {
    for (int64_t j : {-1, 3, 5, 7}) {
      std::vector<Literal> args = FormulaInputs(**module);
      args[1].SetFromInt64(0, i);
      args[2].SetFromInt64(0, j);
      absl::StatusOr<std::string> m = CompareRoot(text, args, 0);
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(*m, "") << i << "," << j;
    }
  }
}

TEST(ElementalDataMovementTest, DynamicUpdateSliceInFusion) {
  const std::string text = R"(HloModule m
fused {
  p0 = f32[8,9] parameter(0)
  p1 = f32[3,4] parameter(1)
  p2 = s32[] parameter(2)
  p3 = u8[] parameter(3)
  ROOT r = f32[8,9] dynamic-update-slice(p0, p1, p2, p3)
}
ENTRY e {
  a = f32[8,9] parameter(0)
  b = f32[3,4] parameter(1)
  i = s32[] parameter(2)
  j = u8[] parameter(3)
  ROOT f = f32[8,9] fusion(a, b, i, j), kind=kLoop, calls=fused
})";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  for (int64_t i : {-2, 1, 7}) {
    for (int64_t j : {0, 4, 200}) {
      std::vector<Literal> args = FormulaInputs(**module);
      args[2].SetFromInt64(0, i);
      args[3].SetFromInt64(0, j);
      absl::StatusOr<std::string> m = CompareRoot(text, args, 0);
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_EQ(*m, "") << i << "," << j;
    }
  }
}

TEST(ElementalDataMovementTest, ConstantsInFusion) {
  ExpectExact(R"(HloModule m
fused {
  p0 = f32[2,3] parameter(0)
  c = f32[2,3] constant({{1.5, -2, 3}, {4, 5e10, -0}})
  s = f32[] constant(0.25)
  b = f32[2,3] broadcast(s), dimensions={}
  m = f32[2,3] multiply(p0, c)
  ROOT r = f32[2,3] add(m, b)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT f = f32[2,3] fusion(a), kind=kLoop, calls=fused
})");
  ExpectExact(R"(HloModule m
fused {
  p0 = s32[4] parameter(0)
  c = s32[4] constant({7, -8, 9, 2147483647})
  ROOT r = s32[4] add(p0, c)
}
ENTRY e {
  a = s32[4] parameter(0)
  ROOT f = s32[4] fusion(a), kind=kLoop, calls=fused
})");
}

TEST(ElementalDataMovementTest, GatherEmbeddingRowsAndBatchedPoints) {
  const std::string rows = R"(HloModule m
ENTRY e {
  table = f32[10,8] parameter(0)
  ids = s32[3,4,1] parameter(1)
  ROOT g = f32[3,4,8] gather(table, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,8}
})";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(rows);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args = FormulaInputs(**module);
  const int64_t ids[] = {0, 9, 3, -4, 12, 5, 7, 1, 2, 100, 8, 6};  // clamped out of range
  for (int64_t i = 0; i < 12; ++i) args[1].SetFromInt64(i, ids[i]);
  absl::StatusOr<std::string> m = CompareRoot(rows, args, 0);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, "");

  ExpectExact(R"(HloModule m
ENTRY e {
  x = f32[4,15,6] parameter(0)
  i = u8[4,15,1] parameter(1)
  ROOT g = f32[4,15,1] gather(x, i), offset_dims={}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1}, index_vector_dim=3, slice_sizes={1,1,1}
})");
}

}  // namespace
}  // namespace hlogym

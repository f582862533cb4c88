// bitcast honours layouts: it reinterprets the physical buffer, so between
// non-row-major layouts it moves elements. Checked against a naive model of
// memory written here (logical index -> physical offset under a layout),
// and on the transposes one can verify by hand.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using Dims = std::vector<int64_t>;

absl::StatusOr<Literal> RunBitcast(const std::string& from, const std::string& to,
                                   const Literal& arg) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(absl::StrCat(
      "HloModule m\n\nENTRY e {\n  p = ", from, " parameter(0)\n  ROOT b = ", to,
      " bitcast(p)\n}\n"));
  if (!module.ok()) return module.status();
  return Evaluate(**module, {arg});
}

Literal Iota(const Dims& dims) {
  Literal l(Shape::Array(PrimitiveType::kS32, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromInt64(i, i);
  return l;
}

// Physical offset of a logical index under minor_to_major.
int64_t Physical(const Dims& index, const Dims& dims, const Dims& m2m) {
  int64_t offset = 0, stride = 1;
  for (int64_t d : m2m) {
    offset += index[d] * stride;
    stride *= dims[d];
  }
  return offset;
}

// Logical index (row-major linear) whose physical offset is `p`.
int64_t LogicalAt(int64_t p, const Dims& dims, const Dims& m2m) {
  Dims index(dims.size());
  for (int64_t d : m2m) {
    index[d] = p % dims[d];
    p /= dims[d];
  }
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

std::string Text(const Dims& dims, const Dims& m2m) {
  return absl::StrCat("s32[", absl::StrJoin(dims, ","), "]{", absl::StrJoin(m2m, ","), "}");
}

void ExpectModel(const Dims& from, const Dims& from_m2m, const Dims& to, const Dims& to_m2m) {
  SCOPED_TRACE(absl::StrCat(Text(from, from_m2m), " -> ", Text(to, to_m2m)));
  const Literal in = Iota(from);
  absl::StatusOr<Literal> out = RunBitcast(Text(from, from_m2m), Text(to, to_m2m), in);
  ASSERT_TRUE(out.ok()) << out.status();
  Dims index(to.size(), 0);
  for (int64_t i = 0; i < out->element_count(); ++i) {
    const int64_t want = LogicalAt(Physical(index, to, to_m2m), from, from_m2m);
    ASSERT_EQ(out->GetAsInt64(i), want) << "element " << i;
    for (int64_t d = static_cast<int64_t>(to.size()) - 1; d >= 0; --d) {
      if (++index[d] < to[d]) break;
      index[d] = 0;
    }
  }
}

TEST(InterpBitcastLayout, ColumnMajorResultIsATranspose) {
  // The row-major buffer 0..5 of s32[2,3] read as s32[3,2]{0,1}: element
  // (i, j) sits at offset i + 3j, which holds input (j, i).
  absl::StatusOr<Literal> out = RunBitcast("s32[2,3]{1,0}", "s32[3,2]{0,1}", Iota({2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "{ {0, 3}, {1, 4}, {2, 5} }");
}

TEST(InterpBitcastLayout, ColumnMajorOperandIsATranspose) {
  absl::StatusOr<Literal> out = RunBitcast("s32[3,2]{0,1}", "s32[2,3]{1,0}", Iota({3, 2}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "{ {0, 2, 4}, {1, 3, 5} }");
}

TEST(InterpBitcastLayout, SameLayoutsAreAReshape) {
  // Both column-major: the physical order is the same on both sides.
  absl::StatusOr<Literal> out = RunBitcast("s32[2,3]{0,1}", "s32[3,2]{0,1}", Iota({2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  // Physical buffer of the operand: 0,3,1,4,2,5; read column-major as [3,2].
  EXPECT_EQ(out->ToString(), "{ {0, 4}, {3, 2}, {1, 5} }");
  out = RunBitcast("s32[2,3]{1,0}", "s32[6]{0}", Iota({2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "{0, 1, 2, 3, 4, 5}");
}

TEST(InterpBitcastLayout, MatchesAMemoryModel) {
  // Layouts of the kinds XLA's GPU pipeline writes (data/corpus/xla_gpu).
  ExpectModel({16, 8, 4}, {1, 2, 0}, {16, 32}, {1, 0});
  ExpectModel({4, 6, 8}, {0, 2, 1}, {4, 48}, {0, 1});
  ExpectModel({8, 12}, {0, 1}, {12, 8}, {1, 0});
  ExpectModel({2, 3, 5}, {2, 1, 0}, {5, 3, 2}, {0, 1, 2});
  ExpectModel({2, 3, 5, 7}, {1, 3, 0, 2}, {6, 35}, {0, 1});
  ExpectModel({3, 1, 5}, {1, 0, 2}, {15}, {0});
}

TEST(InterpBitcastLayout, ReshapeAndCopyIgnoreLayouts) {
  // reshape and copy are logical: layouts do not change their values.
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(
      "HloModule m\n\nENTRY e {\n  p = s32[2,3]{1,0} parameter(0)\n"
      "  c = s32[2,3]{0,1} copy(p)\n  ROOT r = s32[3,2]{0,1} reshape(c)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Literal> out = Evaluate(**module, {Iota({2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "{ {0, 1}, {2, 3}, {4, 5} }");
}

TEST(InterpBitcastLayout, TiledLayoutsAreNotSupported) {
  absl::StatusOr<Literal> out =
      RunBitcast("s32[8,128]{1,0:T(8,128)}", "s32[1024]{0}", Iota({8, 128}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "not supported: bitcast with a tiled layout (s32[8,128]{1,0:T(8,128)} to "
            "s32[1024]{0}) in instruction `b`");
}

}  // namespace
}  // namespace hlogym

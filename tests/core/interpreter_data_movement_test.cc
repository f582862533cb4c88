// Data-movement kernels (broadcast, transpose, reverse, slice, dynamic
// slices, concatenate, pad) and reduce against naive index arithmetic
// written here, on several element widths.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using Index = std::vector<int64_t>;

absl::StatusOr<Literal> RunHlo(const std::string& body, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseModule(absl::StrCat("HloModule m\n\n", body));
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

std::string ShapeText(PrimitiveType t, const Index& dims) {
  return absl::StrCat(std::string(PrimitiveTypeName(t)), "[", absl::StrJoin(dims, ","), "]");
}

int64_t Linear(const Index& index, const Index& dims) {
  int64_t l = 0;
  for (size_t k = 0; k < dims.size(); ++k) l = l * dims[k] + index[k];
  return l;
}

bool NextIndex(const Index& dims, Index& index) {
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    if (++index[k] < dims[k]) return true;
    index[k] = 0;
  }
  return false;
}

// Distinct values that survive every tested type (small integers).
Literal Iota(PrimitiveType t, const Index& dims, int64_t offset = 1) {
  Literal l(Shape::Array(t, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromInt64(i, (i + offset) % 97);
  return l;
}

// Checks every element of `out` (shape `dims`) against expected(index),
// which gives the input's linear index or -1 for the fill value `fill`.
void Expect(const Literal& out, const Literal& in, const Index& dims,
            const std::function<int64_t(const Index&)>& source, int64_t fill = -1000) {
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return;
  Index index(dims.size(), 0);
  do {
    const int64_t s = source(index);
    const int64_t want = s < 0 ? fill : in.GetAsInt64(s);
    ASSERT_EQ(out.GetAsInt64(Linear(index, dims)), want)
        << "at output " << absl::StrJoin(index, ",");
  } while (NextIndex(dims, index));
}

const PrimitiveType kWidths[] = {PrimitiveType::kPred, PrimitiveType::kS8,  PrimitiveType::kBF16,
                                 PrimitiveType::kS32,  PrimitiveType::kF64, PrimitiveType::kS64};

TEST(InterpreterDataMovement, BroadcastTransposeReverseSlice) {
  for (PrimitiveType t : kWidths) {
    const Index in_dims = {3, 1, 5, 4};
    const Literal in = Iota(t, in_dims);
    const std::string s = ShapeText(t, in_dims);
    auto run = [&](const std::string& out_shape, const std::string& expr) {
      return RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  ROOT r = ", out_shape,
                                 " ", expr, "\n}\n"), {in});
    };
    // Broadcast into dims {1, 3} of a bigger shape... (input dims 0..3 -> 0,2,3,4)
    const Index b_dims = {3, 2, 1, 5, 4};
    auto b = run(ShapeText(t, b_dims), "broadcast(x), dimensions={0,2,3,4}");
    ASSERT_TRUE(b.ok()) << b.status();
    Expect(*b, in, b_dims, [&](const Index& i) { return Linear({i[0], i[2], i[3], i[4]}, in_dims); });
    const Index t_dims = {4, 3, 5, 1};
    auto tr = run(ShapeText(t, t_dims), "transpose(x), dimensions={3,0,2,1}");
    ASSERT_TRUE(tr.ok()) << tr.status();
    Expect(*tr, in, t_dims, [&](const Index& i) { return Linear({i[1], i[3], i[2], i[0]}, in_dims); });
    auto rv = run(s, "reverse(x), dimensions={0,3}");
    ASSERT_TRUE(rv.ok()) << rv.status();
    Expect(*rv, in, in_dims,
           [&](const Index& i) { return Linear({2 - i[0], i[1], i[2], 3 - i[3]}, in_dims); });
    const Index sl_dims = {2, 1, 2, 2};
    auto sl = run(ShapeText(t, sl_dims), "slice(x), slice={[1:3], [0:1], [0:5:3], [1:4:2]}");
    ASSERT_TRUE(sl.ok()) << sl.status();
    Expect(*sl, in, sl_dims, [&](const Index& i) {
      return Linear({1 + i[0], i[1], 3 * i[2], 1 + 2 * i[3]}, in_dims);
    });
    // Scalar broadcast to a big shape: the parallel path.
    const Index big = {300, 129};
    auto sb = RunHlo(absl::StrCat("ENTRY e {\n  x = ", ShapeText(t, {}), " parameter(0)\n  ROOT r = ",
                                  ShapeText(t, big), " broadcast(x), dimensions={}\n}\n"),
                     {Iota(t, {}, 5)});
    ASSERT_TRUE(sb.ok()) << sb.status();
    const Literal five = Iota(t, {}, 5);
    Expect(*sb, five, big, [](const Index&) { return 0; });
    // Transpose of a large matrix: the parallel strided path.
    const Literal m = Iota(t, {257, 300});
    auto mt = RunHlo(absl::StrCat("ENTRY e {\n  x = ", ShapeText(t, {257, 300}),
                                  " parameter(0)\n  ROOT r = ", ShapeText(t, {300, 257}),
                                  " transpose(x), dimensions={1,0}\n}\n"), {m});
    ASSERT_TRUE(mt.ok()) << mt.status();
    Expect(*mt, m, {300, 257}, [](const Index& i) { return Linear({i[1], i[0]}, {257, 300}); });
  }
}

TEST(InterpreterDataMovement, DynamicSlicesClampTheirStarts) {
  for (PrimitiveType t : kWidths) {
    const Index dims = {4, 6};
    const Literal in = Iota(t, dims);
    const std::string s = ShapeText(t, dims);
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {-3, 9}, {3, 5}}) {
      Literal row(Shape::Scalar(PrimitiveType::kS32)), col(Shape::Scalar(PrimitiveType::kS32));
      row.SetFromInt64(0, r);
      col.SetFromInt64(0, c);
      auto ds = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  r = s32[] parameter(1)\n"
                                    "  c = s32[] parameter(2)\n  ROOT d = ", ShapeText(t, {2, 3}),
                                    " dynamic-slice(x, r, c), dynamic_slice_sizes={2,3}\n}\n"),
                       {in, row, col});
      ASSERT_TRUE(ds.ok()) << ds.status();
      const int64_t r0 = std::clamp<int64_t>(r, 0, 2), c0 = std::clamp<int64_t>(c, 0, 3);
      Expect(*ds, in, {2, 3}, [&](const Index& i) { return Linear({r0 + i[0], c0 + i[1]}, dims); });
      const Literal update = Iota(t, {2, 3}, 50);
      auto dus = RunHlo(absl::StrCat("ENTRY e {\n  x = ", s, " parameter(0)\n  u = ",
                                     ShapeText(t, {2, 3}), " parameter(1)\n  r = s32[] parameter(2)\n"
                                     "  c = s32[] parameter(3)\n  ROOT d = ", s,
                                     " dynamic-update-slice(x, u, r, c)\n}\n"),
                        {in, update, row, col});
      ASSERT_TRUE(dus.ok()) << dus.status();
      Index index(2, 0);
      do {
        const bool inside = index[0] >= r0 && index[0] < r0 + 2 && index[1] >= c0 && index[1] < c0 + 3;
        const int64_t want = inside ? update.GetAsInt64(Linear({index[0] - r0, index[1] - c0}, {2, 3}))
                                    : in.GetAsInt64(Linear(index, dims));
        ASSERT_EQ(dus->GetAsInt64(Linear(index, dims)), want) << index[0] << "," << index[1];
      } while (NextIndex(dims, index));
    }
  }
}

TEST(InterpreterDataMovement, ConcatenateAndPadWithNegativeAndInteriorPadding) {
  for (PrimitiveType t : kWidths) {
    const Literal a = Iota(t, {2, 3}, 1), b = Iota(t, {2, 4}, 40);
    auto cat = RunHlo(absl::StrCat("ENTRY e {\n  a = ", ShapeText(t, {2, 3}), " parameter(0)\n  b = ",
                                   ShapeText(t, {2, 4}), " parameter(1)\n  ROOT c = ",
                                   ShapeText(t, {2, 7}), " concatenate(a, b), dimensions={1}\n}\n"),
                      {a, b});
    ASSERT_TRUE(cat.ok()) << cat.status();
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 0; c < 7; ++c) {
        const int64_t want = c < 3 ? a.GetAsInt64(r * 3 + c) : b.GetAsInt64(r * 4 + c - 3);
        ASSERT_EQ(cat->GetAsInt64(r * 7 + c), want);
      }
    }
    const Index dims = {5, 6};
    const Literal in = Iota(t, dims);
    Literal fill(Shape::Scalar(t));
    fill.SetFromInt64(0, 0);
    // low_high_interior per dimension, negative low and high included.
    struct Case { int64_t lo0, hi0, in0, lo1, hi1, in1; };
    for (const Case& p : {Case{1, 2, 0, 0, 0, 0}, Case{-2, 1, 1, 3, -4, 2}, Case{-7, 3, 0, -1, -1, 1},
                          Case{0, -9, 2, 2, 2, 0}}) {
      const int64_t o0 = std::max<int64_t>(0, p.lo0 + p.hi0 + dims[0] + (dims[0] - 1) * p.in0);
      const int64_t o1 = std::max<int64_t>(0, p.lo1 + p.hi1 + dims[1] + (dims[1] - 1) * p.in1);
      auto pad = RunHlo(absl::StrCat("ENTRY e {\n  x = ", ShapeText(t, dims), " parameter(0)\n  v = ",
                                     ShapeText(t, {}), " parameter(1)\n  ROOT p = ",
                                     ShapeText(t, {o0, o1}), " pad(x, v), padding=", p.lo0, "_", p.hi0,
                                     "_", p.in0, "x", p.lo1, "_", p.hi1, "_", p.in1, "\n}\n"),
                        {in, fill});
      ASSERT_TRUE(pad.ok()) << pad.status();
      auto source = [&](const Index& i) -> int64_t {
        const int64_t a0 = i[0] - p.lo0, a1 = i[1] - p.lo1;
        if (a0 < 0 || a1 < 0 || a0 % (p.in0 + 1) || a1 % (p.in1 + 1)) return -1;
        const int64_t s0 = a0 / (p.in0 + 1), s1 = a1 / (p.in1 + 1);
        if (s0 >= dims[0] || s1 >= dims[1]) return -1;
        return Linear({s0, s1}, dims);
      };
      Expect(*pad, in, {o0, o1}, source, 0);
    }
  }
}

// reduce: the typed paths (a one-op reducer) against the same reduction
// written with a reducer they do not recognize (x op copy(y)), which runs
// the general per-element path; float add against a double sum in
// row-major order.
TEST(InterpreterReduce, TypedPathsMatchTheGeneralPath) {
  struct Case { Index dims; std::string reduced; Index out; };
  const std::vector<Case> cases = {
      {{5, 6, 7}, "0,2", {6}},   {{4, 300}, "1", {4}},   {{3000, 5}, "0", {5}},
      {{2, 3, 4}, "0,1,2", {}},  {{4, 1, 9}, "2", {4, 1}}, {{3, 0, 2}, "1", {3, 2}},
      {{7, 700}, "0", {700}}};
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16, PrimitiveType::kS32,
                          PrimitiveType::kU8, PrimitiveType::kPred}) {
    const bool is_float = IsFloat(t);
    const std::vector<std::string> ops =
        t == PrimitiveType::kPred ? std::vector<std::string>{"and", "or"}
        : is_float ? std::vector<std::string>{"maximum", "minimum", "multiply"}
                   : std::vector<std::string>{"add", "multiply", "maximum", "minimum", "and", "or", "xor"};
    for (const Case& c : cases) {
      Literal in(Shape::Array(t, c.dims));
      for (int64_t i = 0; i < in.element_count(); ++i) {
        if (is_float) {
          in.SetFromDouble(i, 1.0 + 0.001 * ((i * 37) % 101) * ((i % 3) ? 1 : -1));
        } else {
          in.SetFromInt64(i, (i * 37 + 11) % 23);
        }
      }
      Literal init(Shape::Scalar(t));
      init.SetFromInt64(0, 1);
      for (const std::string& op : ops) {
        const std::string s = ShapeText(t, {});
        auto text = [&](bool general) {
          return absl::StrCat("r {\n  a = ", s, " parameter(0)\n  b = ", s, " parameter(1)\n",
                              general ? absl::StrCat("  c = ", s, " copy(b)\n  ROOT o = ", s, " ", op, "(a, c)\n")
                                      : absl::StrCat("  ROOT o = ", s, " ", op, "(a, b)\n"),
                              "}\n\nENTRY e {\n  x = ", ShapeText(t, c.dims), " parameter(0)\n  i = ", s,
                              " parameter(1)\n  ROOT y = ", ShapeText(t, c.out), " reduce(x, i), dimensions={",
                              c.reduced, "}, to_apply=r\n}\n");
        };
        auto fast = RunHlo(text(false), {in, init});
        auto general = RunHlo(text(true), {in, init});
        ASSERT_TRUE(fast.ok()) << fast.status();
        ASSERT_TRUE(general.ok()) << general.status();
        EXPECT_TRUE(*fast == *general) << op << " on " << ShapeText(t, c.dims) << " over {"
                                       << c.reduced << "}: " << fast->ToString() << " vs "
                                       << general->ToString();
      }
    }
  }
  // Float add: a double sum in row-major order, rounded once.
  const Index dims = {64, 50, 3};
  Literal in(Shape::Array(PrimitiveType::kF32, dims));
  for (int64_t i = 0; i < in.element_count(); ++i) in.SetFromDouble(i, 0.1 * ((i * 13) % 17) - 0.7);
  Literal zero(Shape::Scalar(PrimitiveType::kF32));
  auto sum = RunHlo("r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT o = f32[] add(a, b)\n}\n\n"
                    "ENTRY e {\n  x = f32[64,50,3] parameter(0)\n  i = f32[] parameter(1)\n"
                    "  ROOT y = f32[50] reduce(x, i), dimensions={0,2}, to_apply=r\n}\n",
                    {in, zero});
  ASSERT_TRUE(sum.ok()) << sum.status();
  for (int64_t j = 0; j < 50; ++j) {
    double want = 0;
    for (int64_t a = 0; a < 64; ++a) {
      for (int64_t c = 0; c < 3; ++c) want += in.GetAsDouble(Linear({a, j, c}, dims));
    }
    ASSERT_EQ(sum->GetAsDouble(j), static_cast<double>(static_cast<float>(want))) << j;
  }
}

// reduce-window: the typed path (one float operand, one-op reducer) against
// the general path, with strides, padding and both dilations.
TEST(InterpreterReduce, TypedReduceWindowMatchesTheGeneralPath) {
  for (const std::string type : {"f32", "bf16"}) {
    for (const std::string op : {"add", "multiply", "maximum", "minimum"}) {
      Literal in(Shape::Array(type == "f32" ? PrimitiveType::kF32 : PrimitiveType::kBF16, {6, 40}));
      for (int64_t i = 0; i < in.element_count(); ++i) in.SetFromDouble(i, 1.0 + 0.01 * ((i * 29) % 31) - 0.15);
      Literal init(Shape::Scalar(in.shape().element_type()));
      init.SetFromDouble(0, op == "multiply" ? 1.0 : 0.5);
      auto text = [&](bool general) {
        const std::string s = type + "[]";
        return absl::StrCat("r {\n  a = ", s, " parameter(0)\n  b = ", s, " parameter(1)\n",
                            general ? absl::StrCat("  c = ", s, " copy(b)\n  ROOT o = ", s, " ", op, "(a, c)\n")
                                    : absl::StrCat("  ROOT o = ", s, " ", op, "(a, b)\n"),
                            "}\n\nENTRY e {\n  x = ", type, "[6,40] parameter(0)\n  i = ", s,
                            " parameter(1)\n  ROOT y = ", type, "[3,36] reduce-window(x, i), "
                            "window={size=3x5 stride=2x1 pad=1_1x4_0 lhs_dilate=1x1 rhs_dilate=1x2}, to_apply=r\n}\n");
      };
      auto fast = RunHlo(text(false), {in, init});
      auto general = RunHlo(text(true), {in, init});
      ASSERT_TRUE(fast.ok()) << fast.status();
      ASSERT_TRUE(general.ok()) << general.status();
      EXPECT_TRUE(*fast == *general) << op << " " << type;
    }
  }
}

// scatter: the typed path against the general one, with repeated and
// out-of-bounds indices and the window dimension in the middle of the update.
TEST(InterpreterScatter, TypedPathMatchesTheGeneralPath) {
  for (const std::string op : {"add", "multiply", "maximum", "minimum"}) {
    Literal operand(Shape::Array(PrimitiveType::kF32, {6, 5}));
    for (int64_t i = 0; i < 30; ++i) operand.SetFromDouble(i, 1.0 + 0.1 * static_cast<double>(i % 7));
    Literal indices(Shape::Array(PrimitiveType::kS32, {4, 1}));
    for (int64_t i = 0; i < 4; ++i) indices.SetFromInt64(i, std::vector<int64_t>{1, 4, 1, 9}[i]);
    Literal updates(Shape::Array(PrimitiveType::kF32, {2, 5, 2}));  // window dim 1
    for (int64_t i = 0; i < 20; ++i) updates.SetFromDouble(i, 0.5 + 0.01 * static_cast<double>(i));
    auto text = [&](bool general) {
      return absl::StrCat("r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n",
                          general ? absl::StrCat("  c = f32[] copy(b)\n  ROOT o = f32[] ", op, "(a, c)\n")
                                  : absl::StrCat("  ROOT o = f32[] ", op, "(a, b)\n"),
                          "}\n\nENTRY e {\n  x = f32[6,5] parameter(0)\n  i = s32[2,2] parameter(1)\n"
                          "  u = f32[2,5,2] parameter(2)\n  ROOT y = f32[6,5] scatter(x, i, u), "
                          "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                          "index_vector_dim=2, to_apply=r\n}\n");
    };
    Literal idx(Shape::Array(PrimitiveType::kS32, {2, 2}));
    for (int64_t i = 0; i < 4; ++i) idx.SetFromInt64(i, indices.GetAsInt64(i));
    auto fast = RunHlo(text(false), {operand, idx, updates});
    auto general = RunHlo(text(true), {operand, idx, updates});
    ASSERT_TRUE(fast.ok()) << fast.status();
    ASSERT_TRUE(general.ok()) << general.status();
    EXPECT_TRUE(*fast == *general) << op << ": " << fast->ToString() << " vs " << general->ToString();
    if (op == "add") {  // row 1 gets two windows, row 4 one, index 9 is dropped
      EXPECT_NEAR(fast->GetAsDouble(1 * 5 + 0), operand.GetAsDouble(5) + 0.5 + 0.6, 1e-6);
      EXPECT_EQ(fast->GetAsDouble(0), operand.GetAsDouble(0));
    }
  }
}

}  // namespace
}  // namespace hlogym

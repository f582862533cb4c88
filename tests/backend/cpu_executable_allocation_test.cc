// Host ops with kernels of their own (no interpreter, no allocation inside a
// timed run): their results against the interpreter's on edge values, and
// the corpus modules that used interpreter-backed host ops checked for heap
// allocations per run.
#include <malloc.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "backend/cpu_executable.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/passes/default_pipeline.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/backend/cpu_kernel_test_util.h"
#include "tests/backend/heap_allocation_counter.h"

namespace hlogym {
namespace {

using kernel_test::Compiler;
using kernel_test::Parse;

// Compiles `module`, checks it has no interpreter-backed host op, and
// compares every output leaf bit for bit with the interpreter's.
void ExpectExactWithoutInterpreter(const Module& module, const std::vector<Literal>& inputs) {
  absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(module, Compiler());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->stats().total_interpreter_op_count, 0);
  absl::StatusOr<std::vector<Literal>> expected = EvaluateFlat(module, inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::vector<Literal>> actual = (*e)->Run(inputs);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(expected->size(), actual->size());
  for (size_t k = 0; k < expected->size(); ++k) {
    EXPECT_EQ(kernel_test::Mismatch((*expected)[k], (*actual)[k], 0), "") << "leaf " << k;
  }
}

// Rows of `length` values with ties, NaNs of both signs, infinities and
// signed zeros, so that order and tie-breaking show.
Literal EdgeRows(PrimitiveType type, int64_t rows, int64_t length) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {3.0, -0.0, 0.0, nan, -inf, inf, 3.0, -nan, -2.5, 3.0};
  Literal l(Shape::Array(type, {rows, length}));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < length; ++j) {
      const int64_t i = r * length + j;
      double v = static_cast<double>((i * 7919 + r * 31) % 23) - 11.0;
      if (IsFloat(type) && (i % 5) == 0) v = special[(i / 5) % special.size()];
      l.SetFromDouble(i, v);
    }
  }
  return l;
}

TEST(CpuExecutableAllocationTest, TopKMatchesTheInterpreterOnTiesNaNsAndShortRows) {
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kS32}) {
    for (const char* largest : {"true", "false"}) {
      // k below, at and above the row length (the rest of a row is zero).
      for (int64_t length : {40, 7, 5}) {
        const std::string t(PrimitiveTypeName(type));
        const std::string text = absl::StrCat(
            "HloModule m\nENTRY e {\n  x = ", t, "[6,", length, "] parameter(0)\n",
            "  ROOT k = (", t, "[6,7], s32[6,7]) topk(x), k=7, largest=", largest, "\n}\n");
        SCOPED_TRACE(text);
        std::unique_ptr<Module> module = Parse(text);
        ASSERT_NE(module, nullptr);
        std::vector<Literal> inputs;
        inputs.push_back(EdgeRows(type, 6, length));
        ExpectExactWithoutInterpreter(*module, inputs);
      }
    }
  }
}

Literal Indices(PrimitiveType type, absl::Span<const int64_t> dims, int64_t bound) {
  Literal l(Shape::Array(type, std::vector<int64_t>(dims.begin(), dims.end())));
  for (int64_t i = 0; i < l.element_count(); ++i) {
    // Repeats, and some outside [0, bound) whose windows are skipped.
    l.SetFromInt64(i, (i * 7) % (bound + 3) - (i % 11 == 0 ? 2 : 0));
  }
  return l;
}

Literal Ramp(PrimitiveType type, absl::Span<const int64_t> dims) {
  Literal l(Shape::Array(type, std::vector<int64_t>(dims.begin(), dims.end())));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetFromDouble(i, 0.1 * ((i * 37) % 101) - 3.3);
  return l;
}

TEST(CpuExecutableAllocationTest, ScatterMatchesTheInterpreter) {
  struct Case {
    std::string text;
    std::vector<int64_t> operand, indices, updates;
    int64_t bound;  // the indexed operand dimension
  };
  const std::string add = "add {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n"
                          "  ROOT r = $T[] add(a, b)\n}\n";
  const std::string mul = "mul {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n"
                          "  ROOT r = $T[] multiply(b, a)\n}\n";
  const std::vector<Case> cases = {
      // An embedding gradient: rows of the table indexed by [n, 1] indices.
      {add + "ENTRY e {\n  o = $T[20,6] parameter(0)\n  i = $I[4,9,1] parameter(1)\n"
             "  u = $T[4,9,6] parameter(2)\n  ROOT s = $T[20,6] scatter(o, i, u), "
             "update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=2, to_apply=add\n}\n",
       {20, 6}, {4, 9, 1}, {4, 9, 6}, 20},
      // gpt2's form: batching dims, scalar windows.
      {add + "ENTRY e {\n  o = $T[2,5,30] parameter(0)\n  i = $I[2,5,1] parameter(1)\n"
             "  u = $T[2,5] parameter(2)\n  ROOT s = $T[2,5,30] scatter(o, i, u), "
             "update_window_dims={}, inserted_window_dims={2}, scatter_dims_to_operand_dims={2}, "
             "input_batching_dims={0,1}, scatter_indices_batching_dims={0,1}, index_vector_dim=2, "
             "to_apply=add\n}\n",
       {2, 5, 30}, {2, 5, 1}, {2, 5}, 30},
      // Windows of 2 rows (some do not fit), multiplied in.
      {mul + "ENTRY e {\n  o = $T[12,4] parameter(0)\n  i = $I[7] parameter(1)\n"
             "  u = $T[7,2,4] parameter(2)\n  ROOT s = $T[12,4] scatter(o, i, u), "
             "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
             "index_vector_dim=1, to_apply=mul\n}\n",
       {12, 4}, {7}, {7, 2, 4}, 12},
  };
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    for (PrimitiveType index : {PrimitiveType::kS32, PrimitiveType::kS64}) {
      for (const Case& c : cases) {
        std::string text = c.text;
        for (size_t at; (at = text.find("$T")) != std::string::npos;) {
          text.replace(at, 2, std::string(PrimitiveTypeName(type)));
        }
        for (size_t at; (at = text.find("$I")) != std::string::npos;) {
          text.replace(at, 2, std::string(PrimitiveTypeName(index)));
        }
        SCOPED_TRACE(text);
        std::unique_ptr<Module> module = Parse("HloModule m\n" + text);
        ASSERT_NE(module, nullptr);
        std::vector<Literal> inputs;
        inputs.push_back(Ramp(type, c.operand));
        inputs.push_back(Indices(index, c.indices, c.bound));
        inputs.push_back(Ramp(type, c.updates));
        ExpectExactWithoutInterpreter(*module, inputs);
      }
    }
  }
}

TEST(CpuExecutableAllocationTest, CumulativeScanMatchesTheInterpreter) {
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    for (const char* op : {"add", "multiply"}) {
      for (const char* reverse : {"false", "true"}) {
        // Along the minor dimension of [5,9], and the major one of [6,3,4].
        for (int which = 0; which < 2; ++which) {
          const std::string t(PrimitiveTypeName(type));
          const std::string x = which == 0 ? "[5,9]" : "[6,3,4]";
          const std::string slice = which == 0 ? "[5]" : "[3,4]";
          const std::string text = absl::StrCat(
              "HloModule m\nbody {\n  x = ", t, slice, " parameter(0)\n  c = ", t, slice,
              " parameter(1)\n  y = ", t, slice, " ", op, "(x, c)\n  ROOT r = (", t, slice, ", ",
              t, slice, ") tuple(y, y)\n}\nENTRY e {\n  x = ", t, x, " parameter(0)\n  c = ", t,
              slice, " parameter(1)\n  ROOT s = (", t, x, ", ", t, slice, ") scan(x, c), dimensions={",
              which == 0 ? 1 : 0, "}, num_carries=1, is_reverse=", reverse,
              ", is_associative=true, to_apply=body\n}\n");
          SCOPED_TRACE(text);
          std::unique_ptr<Module> module = Parse(text);
          ASSERT_NE(module, nullptr);
          std::vector<Literal> inputs;
          inputs.push_back(Ramp(type, which == 0 ? std::vector<int64_t>{5, 9}
                                                 : std::vector<int64_t>{6, 3, 4}));
          inputs.push_back(Ramp(type, which == 0 ? std::vector<int64_t>{5}
                                                 : std::vector<int64_t>{3, 4}));
          ExpectExactWithoutInterpreter(*module, inputs);
        }
      }
    }
  }
}

// A dense array of `dims` with the edge values of EdgeRows (ties, NaNs,
// infinities, signed zeros), so the select computation's tie rule shows.
Literal EdgeArray(PrimitiveType type, absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Literal rows = EdgeRows(type, 1, n);
  Literal l(Shape::Array(type, std::vector<int64_t>(dims.begin(), dims.end())));
  for (int64_t i = 0; i < n; ++i) l.SetFromDouble(i, rows.GetAsDouble(i));
  return l;
}

TEST(CpuExecutableAllocationTest, SelectAndScatterMatchesTheInterpreter) {
  struct Case {
    std::vector<int64_t> operand, source;
    std::string window;
    std::string select, scatter;  // the computations' roots, on parameters a and b
  };
  const std::vector<Case> cases = {
      // cnn_mnist's max-pool gradient: 2x2 windows, stride 2, no padding.
      {{2, 6, 6, 3}, {2, 3, 3, 3}, "size=1x2x2x1 stride=1x2x2x1", "compare(a, b), direction=GE",
       "add(a, b)"},
      // Overlapping 3x3 windows, stride 1, padded on both sides (each
      // operand element is picked by several windows; the order shows).
      {{7, 8}, {7, 8}, "size=3x3 pad=1_1x1_1", "compare(a, b), direction=GE", "add(a, b)"},
      // Stride 2 under size 3, uneven padding; a strict compare keeps the
      // last of equal values instead of the first.
      {{2, 9, 7}, {2, 5, 4}, "size=1x3x3 stride=1x2x2 pad=0_0x1_1x0_1",
       "compare(a, b), direction=GT", "add(b, a)"},
      // A min-pool with the compare's operands swapped, multiplied in;
      // windows wholly in the padding pick nothing.
      {{5, 6}, {5, 5}, "size=2x2 stride=1x2 pad=0_1x3_3", "compare(b, a), direction=LE",
       "multiply(a, b)"},
      // Total order (NaNs and signed zeros ordered), maximum as the scatter.
      {{4, 10}, {3, 5}, "size=2x3 stride=1x2 pad=0_0x1_0",
       "compare(a, b), direction=GE, type=TOTALORDER", "maximum(b, a)"},
  };
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kBF16}) {
    for (const Case& c : cases) {
      const std::string t(PrimitiveTypeName(type));
      auto dims = [](const std::vector<int64_t>& d) {
        std::string s = "[";
        for (size_t i = 0; i < d.size(); ++i) absl::StrAppend(&s, i ? "," : "", d[i]);
        return s + "]";
      };
      const std::string text = absl::StrCat(
          "HloModule m\nselect {\n  a = ", t, "[] parameter(0)\n  b = ", t,
          "[] parameter(1)\n  ROOT r = pred[] ", c.select, "\n}\nscatter {\n  a = ", t,
          "[] parameter(0)\n  b = ", t, "[] parameter(1)\n  ROOT r = ", t, "[] ", c.scatter,
          "\n}\nENTRY e {\n  o = ", t, dims(c.operand), " parameter(0)\n  s = ", t, dims(c.source),
          " parameter(1)\n  i = ", t, "[] parameter(2)\n  ROOT r = ", t, dims(c.operand),
          " select-and-scatter(o, s, i), window={", c.window,
          "}, select=select, scatter=scatter\n}\n");
      SCOPED_TRACE(text);
      std::unique_ptr<Module> module = Parse(text);
      ASSERT_NE(module, nullptr);
      std::vector<Literal> inputs;
      inputs.push_back(EdgeArray(type, c.operand));
      inputs.push_back(Ramp(type, c.source));
      Literal init(Shape::Array(type, {}));
      init.SetFromDouble(0, 0.5);
      inputs.push_back(std::move(init));
      ExpectExactWithoutInterpreter(*module, inputs);
    }
  }
}

TEST(CpuExecutableAllocationTest, SortMatchesTheInterpreter) {
  // jnp.sort's comparator: NaNs and zeros made canonical, then total order.
  const std::string jnp_less =
      "  z = $T[] constant(0)\n  n = $T[] constant(nan)\n"
      "  ne0 = pred[] compare(a, a), direction=NE\n  eq0 = pred[] compare(a, z), direction=EQ\n"
      "  s0 = $T[] select(eq0, z, a)\n  c0 = $T[] select(ne0, n, s0)\n"
      "  ne1 = pred[] compare(b, b), direction=NE\n  eq1 = pred[] compare(b, z), direction=EQ\n"
      "  s1 = $T[] select(eq1, z, b)\n  c1 = $T[] select(ne1, n, s1)\n"
      "  ROOT r = pred[] compare(c0, c1), direction=LT, type=TOTALORDER\n";
  struct Case {
    std::string less;  // the comparator's body on keys a, b
    bool with_index;   // an s32 iota sorted along (argsort)
    std::vector<int64_t> dims;
    int64_t dim;
  };
  const std::vector<Case> cases = {
      {jnp_less, false, {6, 40}, 1},
      {jnp_less, true, {37, 5}, 0},
      // Descending with ties: the indices show stability. (An IEEE compare
      // is a strict weak order only without NaNs, which the inputs then
      // leave out: with them, stable sorts may differ and both be right.)
      {"  ROOT r = pred[] compare(a, b), direction=GT\n", true, {3, 300}, 1},
      {"  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n", true, {4, 7, 33}, 1},
  };
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kBF16,
                             PrimitiveType::kS32}) {
    for (const Case& c : cases) {
      if (type == PrimitiveType::kS32 && c.less.find("TOTALORDER") != std::string::npos) continue;
      const std::string t(PrimitiveTypeName(type));
      std::string dims = "[";
      for (size_t i = 0; i < c.dims.size(); ++i) absl::StrAppend(&dims, i ? "," : "", c.dims[i]);
      dims += "]";
      std::string less = c.less;
      for (size_t at; (at = less.find("$T")) != std::string::npos;) less.replace(at, 2, t);
      const std::string keys = t + dims, index = "s32" + dims;
      std::string text = absl::StrCat("HloModule m\nless {\n  a = ", t, "[] parameter(0)\n  b = ", t,
                                      "[] parameter(1)\n");
      if (c.with_index) text += "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n";
      absl::StrAppend(&text, less, "}\nENTRY e {\n  x = ", keys, " parameter(0)\n");
      if (c.with_index) {
        absl::StrAppend(&text, "  i = ", index, " iota(), iota_dimension=", c.dim, "\n  ROOT s = (",
                        keys, ", ", index, ") sort(x, i), dimensions={", c.dim,
                        "}, is_stable=true, to_apply=less\n}\n");
      } else {
        absl::StrAppend(&text, "  ROOT s = ", keys, " sort(x), dimensions={", c.dim,
                        "}, is_stable=true, to_apply=less\n}\n");
      }
      SCOPED_TRACE(text);
      std::unique_ptr<Module> module = Parse(text);
      ASSERT_NE(module, nullptr);
      int64_t n = 1;
      for (int64_t d : c.dims) n *= d;
      Literal rows = EdgeRows(type, 1, n);
      Literal x(Shape::Array(type, c.dims));
      const bool total = c.less.find("TOTALORDER") != std::string::npos;
      for (int64_t i = 0; i < n; ++i) {
        const double v = rows.GetAsDouble(i);
        x.SetFromDouble(i, std::isnan(v) && !total ? 7.0 : v);
      }
      std::vector<Literal> inputs;
      inputs.push_back(std::move(x));
      ExpectExactWithoutInterpreter(*module, inputs);
    }
  }
}

// Windows of 20 runs after a warm-up; true when one window allocated
// nothing (a TBB worker joining late sets itself up once).
bool SomeWindowAllocatesNothing(CpuExecutable& e, const std::vector<const void*>& leaves) {
  for (int window = 0; window < 5; ++window) {
    const size_t in_use_before = mallinfo2().uordblks;
    const long allocations_before = HeapAllocationCount();
    for (int i = 0; i < 20; ++i) {
      if (!e.Execute(leaves).ok()) return false;
    }
    if (mallinfo2().uordblks == in_use_before && HeapAllocationCount() == allocations_before) {
      return true;
    }
  }
  return false;
}

std::vector<const void*> Leaves(const std::vector<Literal>& inputs) {
  std::vector<const void*> leaves;
  for (const Literal& l : inputs) {
    if (l.is_tuple()) {
      for (const Literal& e : l.tuple_elements()) leaves.push_back(e.raw_data());
    } else {
      leaves.push_back(l.raw_data());
    }
  }
  return leaves;
}

// The small twins of the corpus modules and the dataset modules that had
// interpreter-backed host ops, after the default pipeline, with the
// interpreter ops each still has (0: a run must allocate nothing).
TEST(CpuExecutableAllocationTest, CorpusModulesWithHostOps) {
  if (!CountsHeapAllocations()) GTEST_SKIP() << "this build does not count allocations";
  struct Case {
    const char* path;  // under data/
    int64_t interpreter_ops;
  };
  const Case cases[] = {
      {"corpus/small/hlo/topk_sort_1024x4096_small.hlo", 0},
      {"corpus/small/hlo/embedding_bag_grad_8192x64_small.hlo", 0},
      {"corpus/small/hlo/gpt2_tiny_train_4x128_small.hlo", 0},
      {"corpus/small/hlo/cumsum_argmax_4096x4096_small.hlo", 0},
      {"corpus/small/hlo/cnn_mnist_train_128_small.hlo", 0},
      // The dataset's sort forms: jnp's total-order comparator over keys and
      // indices (as jnp.sort, median, percentile), u32 keys (random
      // permutation).
      {"dataset/hlo/jnp_argsort.hlo", 0},
      {"dataset/hlo/random_permutation.hlo", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const std::filesystem::path path = std::filesystem::path(HLOGYM_SOURCE_DIR) / "data" / c.path;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::unique_ptr<Module> module = Parse(text.str());
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(DefaultPipeline().Run(*module).ok());
    absl::StatusOr<std::unique_ptr<CpuExecutable>> e = CpuExecutable::Compile(*module, Compiler());
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ((*e)->stats().total_interpreter_op_count, c.interpreter_ops);
    const std::vector<Literal> inputs = FormulaInputs(*module);
    const std::vector<const void*> leaves = Leaves(inputs);
    ASSERT_TRUE((*e)->Execute(leaves).ok());  // warms up TBB's pool
    if (c.interpreter_ops == 0) {
      EXPECT_TRUE(SomeWindowAllocatesNothing(**e, leaves)) << "every window of 20 runs allocated";
    }
  }
}

}  // namespace
}  // namespace hlogym

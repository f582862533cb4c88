// The printer writes canonical short-parsable text: exact expected text for
// hand-written modules covering every typed attribute form, and round trips
// (print, re-parse, print again) that are byte-stable and keep the
// fingerprint, over every bundled module set.
#include "core/text/printer.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/ir/fingerprint.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/parser_test_util.h"

namespace hlogym {
namespace {

using testing_util::FindInstruction;
using testing_util::ReadFile;

// Text that is already canonical must print back byte for byte.
void ExpectCanonical(const std::string& text) {
  HLOGYM_PARSE_OR_FAIL(m, text);
  EXPECT_EQ(PrintModule(*m), text);
}

// `text` prints as `expected`, which is canonical itself.
void ExpectPrints(const std::string& text, const std::string& expected) {
  HLOGYM_PARSE_OR_FAIL(m, text);
  EXPECT_EQ(PrintModule(*m), expected);
  ExpectCanonical(expected);
}

TEST(PrinterTest, HeaderLayoutRawAttributesAndComputationOrder) {
  ExpectCanonical(R"(HloModule jit_f, entry_computation_layout={(f32[4]{0}, s32[])->f32[4]{0}}, is_scheduled=true, frontend_attributes={a="b"}

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add.0 = f32[] add(a, b)
}

ENTRY main.5 {
  x = f32[4]{0} parameter(0)
  i = s32[] parameter(1)
  c = f32[] constant(0)
  r = f32[] reduce(x, c), dimensions={0}, to_apply=region_0.1
  b = f32[4]{0} broadcast(r), dimensions={}
  ROOT m = f32[4]{0} multiply(x, b)
}

)");
}

TEST(PrinterTest, ConvolutionWindowAndPrecision) {
  const std::string head = R"(HloModule conv

ENTRY e {
  img = f32[1,8,8,3]{3,2,1,0} parameter(0)
  k = f32[3,3,3,16]{3,2,1,0} parameter(1)
)";
  // Default window parts, group counts of 1 and default precisions vanish.
  ExpectPrints(
      head + "  ROOT c = f32[1,8,8,16]{3,2,1,0} convolution(img, k), window={size=3x3 stride=1x1 "
             "pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, "
             "feature_group_count=1, batch_group_count=1, operand_precision={default,default}\n}\n\n",
      head + "  ROOT c = f32[1,8,8,16]{3,2,1,0} convolution(img, k), window={size=3x3 pad=1_1x1_1}, "
             "dim_labels=b01f_01io->b01f\n}\n\n");
  ExpectCanonical(head +
                  "  ROOT c = f32[1,4,7,16]{3,2,1,0} convolution(img, k), window={size=3x3 stride=2x1 "
                  "pad=0_1x2_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}, "
                  "dim_labels=f01b_i01o->01bf, feature_group_count=3, batch_group_count=2, "
                  "operand_precision={highest,high}\n}\n\n");
  // Only the window size: no window parts beyond it.
  ExpectCanonical(head +
                  "  ROOT c = f32[1,6,6,16]{3,2,1,0} convolution(img, k), window={size=3x3}, "
                  "dim_labels=b01f_01io->b01f\n}\n\n");
}

TEST(PrinterTest, SlicePadReduceWindowSelectAndScatter) {
  ExpectPrints(R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

ENTRY e {
  x = f32[4,8]{1,0} parameter(0)
  z = f32[] constant(0)
  s = f32[2,3]{1,0} slice(x), slice={[0:4:2], [1:8:3]}
  s1 = f32[4,7]{1,0} slice(x), slice={[0:4:1], [1:8]}
  s2 = f32[2,7]{1,0} slice(x), slice={[0:4:2], [1:8]}
  p = f32[7,10]{1,0} pad(x, z), padding=1_2_0x0_2_0
  pi = f32[8,8]{1,0} pad(x, z), padding=0_1_1x-1_1_0
  rw = f32[2,4]{1,0} reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max
  ss = f32[4,8]{1,0} select-and-scatter(x, rw, z), window={size=2x2 stride=2x2}, select=ge, scatter=max
  ROOT t = (f32[2,3]{1,0}, f32[4,7]{1,0}, f32[7,10]{1,0}, f32[8,8]{1,0}, f32[4,8]{1,0}, /*index=5*/f32[2,7]{1,0}) tuple(s, s1, p, pi, ss, s2)
}
)",
               R"(HloModule m

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

ENTRY e {
  x = f32[4,8]{1,0} parameter(0)
  z = f32[] constant(0)
  s = f32[2,3]{1,0} slice(x), slice={[0:4:2], [1:8:3]}
  s1 = f32[4,7]{1,0} slice(x), slice={[0:4], [1:8]}
  s2 = f32[2,7]{1,0} slice(x), slice={[0:4:2], [1:8:1]}
  p = f32[7,10]{1,0} pad(x, z), padding=1_2x0_2
  pi = f32[8,8]{1,0} pad(x, z), padding=0_1_1x-1_1_0
  rw = f32[2,4]{1,0} reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max
  ss = f32[4,8]{1,0} select-and-scatter(x, rw, z), window={size=2x2 stride=2x2}, select=ge, scatter=max
  ROOT t = (f32[2,3]{1,0}, f32[4,7]{1,0}, f32[7,10]{1,0}, f32[8,8]{1,0}, f32[4,8]{1,0}, /*index=5*/f32[2,7]{1,0}) tuple(s, s1, p, pi, ss, s2)
}

)");
}

TEST(PrinterTest, DotGatherScatterCompare) {
  ExpectCanonical(R"(HloModule m

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  x = f32[2,4,8]{2,1,0} parameter(0)
  y = f32[2,8,3]{2,1,0} parameter(1)
  d = f32[2,4,3]{2,1,0} dot(x, y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}, algorithm=dot_f32_f32_f32
  d2 = f32[2,4,2,3]{3,2,1,0} dot(x, y), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  t = s32[4,5]{1,0} parameter(2)
  i = s32[4,2,1]{2,1,0} parameter(3)
  u = s32[4,2]{1,0} parameter(4)
  g = s32[4,2]{1,0} gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}, indices_are_sorted=true
  g2 = s32[4,2,5]{2,1,0} gather(t, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,5}
  s = s32[4,5]{1,0} scatter(t, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, indices_are_sorted=true, unique_indices=true, to_apply=add
  c = pred[4,5]{1,0} compare(t, s), direction=LT
  cu = pred[4,5]{1,0} compare(t, s), direction=GE, type=UNSIGNED
  ROOT r = (f32[2,4,3]{2,1,0}, f32[2,4,2,3]{3,2,1,0}, s32[4,2]{1,0}, s32[4,2,5]{2,1,0}, pred[4,5]{1,0}, /*index=5*/pred[4,5]{1,0}) tuple(d, d2, g, g2, c, cu)
}

)");
}

TEST(PrinterTest, RawOrderDoesNotDuplicateTotalOrderType) {
  const std::string head = "HloModule m\n\nENTRY e {\n  x = f32[4]{0} parameter(0)\n";
  ExpectCanonical(head + "  ROOT c = pred[4]{0} compare(x, x), direction=LT, order=TOTAL\n}\n\n");
  ExpectCanonical(head + "  ROOT c = pred[4]{0} compare(x, x), direction=LT, type=TOTALORDER\n}\n\n");
}

TEST(PrinterTest, SortTopKMapScanAndSmallFamilies) {
  ExpectCanonical(R"(HloModule m

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[4,8]{1,0} parameter(0)
  y = f32[4,8]{1,0} parameter(1)
  init = f32[4]{0} parameter(2)
  s = f32[4,8]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt
  s2 = f32[4,8]{1,0} sort(y), dimensions={0}, to_apply=lt
  t = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(x), k=2, largest=false
  t2 = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(x), k=2, largest=true
  mp = f32[4,8]{1,0} map(x, y), dimensions={0,1}, to_apply=add
  sc = (f32[4,8]{1,0}, f32[4]{0}) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, is_associative=true, to_apply=add
  io = s32[4,8]{1,0} iota(), iota_dimension=1
  g = f32[4]{0} get-tuple-element(sc), index=1
  i0 = s32[] constant(1)
  ds = f32[2,8]{1,0} dynamic-slice(x, i0, i0), dynamic_slice_sizes={2,8}
  tr = f32[8,4]{0,1} transpose(x), dimensions={1,0}
  rv = f32[4,8]{1,0} reverse(x), dimensions={}
  cc = f32[8,8]{1,0} concatenate(x, y), dimensions={0}
  scale = f32[8]{0} parameter(6)
  bn = (f32[4,8]{1,0}, f32[8]{0}, f32[8]{0}) batch-norm-training(x, scale, scale), epsilon=0.001, feature_index=1
  rp = f32[4,8]{1,0} reduce-precision(x), exponent_bits=5, mantissa_bits=10
  c = c64[8]{0} parameter(3)
  ft = c64[8]{0} fft(c), fft_type=IFFT, fft_length={8}
  lo = f32[] parameter(4)
  r = f32[3]{0} rng(lo, lo), distribution=rng_normal
  st = u32[4]{0} parameter(5)
  rb = (u32[4]{0}, u32[8]{0}) rng-bit-generator(st), algorithm=rng_three_fry
  ROOT tu = (f32[4,8]{1,0}, f32[4,8]{1,0}, (f32[4,2]{1,0}, s32[4,2]{1,0}), (f32[4,2]{1,0}, s32[4,2]{1,0}), f32[4,8]{1,0}, /*index=5*/f32[4]{0}, f32[2,8]{1,0}, f32[8,4]{0,1}, f32[4,8]{1,0}, f32[8,8]{1,0}, /*index=10*/(f32[4,8]{1,0}, f32[8]{0}, f32[8]{0}), f32[4,8]{1,0}, c64[8]{0}, f32[3]{0}, (u32[4]{0}, u32[8]{0}), /*index=15*/s32[4,8]{1,0}) tuple(s, s2, t, t2, mp, g, ds, tr, rv, cc, bn, rp, ft, r, rb, io)
}

)");
}

TEST(PrinterTest, ControlFlowFusionCustomCallsAndRawAttributes) {
  ExpectCanonical(R"(HloModule m

fused {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  ROOT m = f32[4]{0} multiply(p0, p1)
}

cond {
  s = (f32[4]{0}, s32[]) parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  ROOT s = (f32[4]{0}, s32[]) parameter(0)
}

on_true {
  ROOT a = f32[4]{0} parameter(0)
}

on_false {
  a = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(a)
}

ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1), sharding={replicated}
  f = f32[4]{0} fusion(a, b), kind=kLoop, calls=fused, metadata={op_name="jit(f)/mul" source_file="x.py" source_line=3}
  i = s32[] parameter(2)
  st = (f32[4]{0}, s32[]) tuple(f, i)
  w = (f32[4]{0}, s32[]) while(st), condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}
  p = pred[] parameter(3)
  c = f32[4]{0} conditional(p, a, b), true_computation=on_true, false_computation=on_false
  c2 = f32[4]{0} conditional(i, a, b, a), branch_computations={on_true, on_false, on_true}
  cc = f32[4]{0} custom-call(c, c2), custom_call_target="foo\tbar", called_computations={on_false, on_true}, api_version=API_VERSION_TYPED_FFI, control-predecessors={w}
  ROOT cc2 = f32[4]{0} custom-call(cc), custom_call_target="Sharding", sharding={devices=[2]<=[2]}, control-predecessors={c, c2}
}

)");
}

TEST(PrinterTest, ExecutionThreadAndConstants) {
  ExpectCanonical(R"(HloModule m

helper {
  ROOT p = f32[2]{0} parameter(0)
}, execution_thread="host"

ENTRY e {
  c0 = pred[] constant(true)
  c1 = f32[2,2]{1,0} constant({ {1, 2}, {3, 4} })
  c2 = s32[12]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
  c3 = (f32[], s32[]) constant((1, 2))
  ROOT t = (pred[], f32[2,2]{1,0}, s32[12]{0}, (f32[], s32[])) tuple(c0, c1, c2, c3)
}

)");
}

TEST(PrinterTest, LargeConstantsAndMetadataCanBeLeftOut) {
  HLOGYM_PARSE_OR_FAIL(m, R"(HloModule m

ENTRY e {
  small = s32[10]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), metadata={op_name="a"}
  big = s32[11]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), metadata={op_name="b"}
  ROOT t = (s32[10]{0}, s32[11]{0}) tuple(small, big), sharding={replicated}
}
)");
  PrintOptions options;
  options.print_large_constants = false;
  options.print_metadata = false;
  const std::string text = PrintModule(*m, options);
  EXPECT_EQ(text, R"(HloModule m

ENTRY e {
  small = s32[10]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
  big = s32[11]{0} constant({...})
  ROOT t = (s32[10]{0}, s32[11]{0}) tuple(small, big), sharding={replicated}
}

)");
  // An elided constant re-parses (without its values) and prints the same.
  HLOGYM_PARSE_OR_FAIL(again, text);
  EXPECT_TRUE(FindInstruction(*again, "big")->literal().is_elided());
  EXPECT_EQ(PrintModule(*again, options), text);
}

TEST(PrinterTest, LongStyleNamesSignaturesAndOperandShapes) {
  HLOGYM_PARSE_OR_FAIL(m, R"(HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} parameter(1)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  t = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) tuple(x, y, x, y, x, y)
  g = f32[4]{0} get-tuple-element(t), index=5
  ROOT m = f32[4]{0} multiply(g, y), control-predecessors={r}
}
)");
  PrintOptions long_style;
  long_style.long_style = true;
  const std::string text = PrintModule(*m, long_style);
  EXPECT_EQ(text, R"(HloModule m, entry_computation_layout={(f32[4]{0}, f32[4]{0})->f32[4]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %e (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %z = f32[] constant(0)
  %r = f32[] reduce(f32[4]{0} %x, f32[] %z), dimensions={0}, to_apply=%add
  %t = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) tuple(f32[4]{0} %x, f32[4]{0} %y, f32[4]{0} %x, f32[4]{0} %y, f32[4]{0} %x, /*index=5*/f32[4]{0} %y)
  %g = f32[4]{0} get-tuple-element((f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[4]{0}, /*index=5*/f32[4]{0}) %t), index=5
  ROOT %m = f32[4]{0} multiply(f32[4]{0} %g, f32[4]{0} %y), control-predecessors={%r}
}

)");
  HLOGYM_PARSE_OR_FAIL(again, text);
  EXPECT_EQ(PrintModule(*again), PrintModule(*m));
  EXPECT_EQ(Fingerprint(*again), Fingerprint(*m));
}

TEST(PrinterTest, InstructionLineAndComputationAlone) {
  HLOGYM_PARSE_OR_FAIL(m, R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  y = f32[8]{0} parameter(1)
  ROOT add.3 = f32[8]{0} add(x, y)
}
)");
  EXPECT_EQ(PrintInstruction(*m->entry()->root()), "add.3 = f32[8]{0} add(x, y)");
  EXPECT_EQ(PrintComputation(*m->entry()),
            "ENTRY e {\n  x = f32[8]{0} parameter(0)\n  y = f32[8]{0} parameter(1)\n"
            "  ROOT add.3 = f32[8]{0} add(x, y)\n}");
}

TEST(PrinterTest, InstructionsPrintDefinitionsBeforeUses) {
  // Storage order puts the users first (as a rewrite may); the printed order
  // must still define every instruction before its uses.
  Module module("m");
  auto entry = std::make_unique<Computation>("e");
  const Shape shape = *ParseShape("f32[8]");
  auto x = Instruction::CreateParameter(0, shape, "x");
  auto a = Instruction::Create(Opcode::kAbs, shape, {x.get()});
  auto n = Instruction::Create(Opcode::kNegate, shape, {a.get()});
  n->set_name("n");
  a->set_name("a");
  Instruction* root = entry->AddInstruction(std::move(n));
  entry->AddInstruction(std::move(a));
  entry->AddInstruction(std::move(x));
  entry->set_root(root);
  module.set_entry(module.AddComputation(std::move(entry)));
  EXPECT_EQ(PrintModule(module), R"(HloModule m

ENTRY e {
  x = f32[8]{0} parameter(0)
  a = f32[8]{0} abs(x)
  ROOT n = f32[8]{0} negate(a)
}

)");
}

TEST(PrinterTest, MalformedIrPrintsWithoutCrashing) {
  // The printer is how one inspects broken IR, so it must not crash on it.
  const Shape shape = *ParseShape("f32[4]");
  auto x = Instruction::CreateParameter(0, shape, "x");
  auto w = Instruction::Create(Opcode::kWhile, shape, {x.get()});
  w->set_name("w");
  auto callee = std::make_unique<Computation>("body");
  w->set_called_computations({callee.get()});  // a while needs two
  EXPECT_EQ(PrintInstruction(*w), "w = f32[4]{0} while(x), called_computations={body}");
  auto c = Instruction::Create(Opcode::kConvolution, shape, {x.get(), x.get()});
  c->set_name("c");
  ConvolutionAttrs& conv = c->mutable_attrs<ConvolutionAttrs>();
  conv.dims.input_batch = 7;  // out of range
  conv.dims.input_spatial = {1};
  conv.dims.kernel_spatial = {};
  EXPECT_EQ(PrintInstruction(*c), "c = f32[4]{0} convolution(x, x), dim_labels=f0?_o?\?->f?\?");
  auto cond = Instruction::Create(Opcode::kConditional, shape, {});
  cond->set_name("cond");
  cond->set_called_computations({callee.get(), nullptr});
  EXPECT_EQ(PrintInstruction(*cond), "cond = f32[4]{0} conditional(), branch_computations={body, <null>}");
}

// ---- Round trips over every bundled module set ------------------------------

std::vector<std::filesystem::path> HloFiles(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(HLOGYM_SOURCE_DIR) / dir;
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class PrinterRoundTripTest : public ::testing::TestWithParam<const char*> {};

// print(parse(text)) re-parses to the same module (same fingerprint, same
// text), in short and long style, with and without metadata.
TEST_P(PrinterRoundTripTest, PrintIsStableAndKeepsTheFingerprint) {
  const std::vector<std::filesystem::path> files = HloFiles(GetParam());
  ASSERT_FALSE(files.empty()) << "no .hlo files under " << GetParam();
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    HLOGYM_PARSE_OR_FAIL(original, ReadFile(path));
    const std::string text = PrintModule(*original);
    HLOGYM_PARSE_OR_FAIL(reparsed, text);
    EXPECT_EQ(PrintModule(*reparsed), text);
    EXPECT_EQ(Fingerprint(*reparsed), Fingerprint(*original));
    EXPECT_EQ(reparsed->instruction_count(), original->instruction_count());

    PrintOptions long_style;
    long_style.long_style = true;
    const std::string long_text = PrintModule(*original, long_style);
    HLOGYM_PARSE_OR_FAIL(from_long, long_text);
    EXPECT_EQ(PrintModule(*from_long), text);
    EXPECT_EQ(PrintModule(*from_long, long_style), long_text);
    EXPECT_EQ(Fingerprint(*from_long), Fingerprint(*original));

    // Metadata is not part of the fingerprint.
    PrintOptions no_metadata;
    no_metadata.print_metadata = false;
    HLOGYM_PARSE_OR_FAIL(stripped, PrintModule(*original, no_metadata));
    EXPECT_EQ(Fingerprint(*stripped), Fingerprint(*original));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModuleSets, PrinterRoundTripTest,
                         ::testing::Values("data/corpus/hlo", "data/corpus/small/hlo",
                                           "data/dataset/hlo", "data/corpus/xla_gpu",
                                           "tests/data/hlo"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

// JAX's modern text is already canonical: our print of it is the file itself,
// except where Literal::ToString writes a float with more digits than XLA's
// shortest round-trip form (constant lines only).
TEST(PrinterCorpusTest, JaxCorpusModulesPrintAsWritten) {
  int64_t identical = 0;
  const auto files = HloFiles("data/corpus/hlo");
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string text = ReadFile(path);
    HLOGYM_PARSE_OR_FAIL(m, text);
    const std::string printed = PrintModule(*m);
    identical += printed == text;
    const std::vector<std::string> want = absl::StrSplit(text, '\n');
    const std::vector<std::string> got = absl::StrSplit(printed, '\n');
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] == want[i]) continue;
      EXPECT_NE(want[i].find(" constant("), std::string::npos)
          << "line " << i + 1 << " differs:\n  file:    " << want[i] << "\n  printed: " << got[i];
    }
  }
  EXPECT_GE(identical, 16);
}

}  // namespace
}  // namespace hlogym

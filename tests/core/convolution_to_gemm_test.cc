// conv-to-gemm: every convolution it lowers computes what it computed
// (reference interpreter), for the corpus's and the dataset's convolutions
// (forward, backward-input and backward-filter ones) and for hand-written
// ones covering each window attribute; the ones it leaves say why.
#include "core/passes/convolution_to_gemm.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_join.h"
#include "core/eval/equivalence.h"
#include "core/ir/verifier.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/rewriter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/core/lowering_test_util.h"
#include "tests/core/simplification_test_util.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;
using lowering_test::LowerAndCompare;
using simplification_test::CountOpcode;
using simplification_test::EntryModule;
using simplification_test::Parse;

// Lowers every convolution of `original` it can; "" when the result verifies,
// computes what `original` computes, and each convolution left has a reason.
std::string LowerAndCheck(const Module& original, int64_t* lowered = nullptr) {
  ConvolutionToGemmPass pass;
  std::unique_ptr<Module> module;
  const std::string why = LowerAndCompare(pass, original, &module);
  if (!why.empty()) return why;
  if (lowered != nullptr) {
    *lowered =
        CountOpcode(original, Opcode::kConvolution) - CountOpcode(*module, Opcode::kConvolution);
  }
  for (const auto& computation : module->computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == Opcode::kConvolution && ConvolutionToGemmRefusal(*inst).empty()) {
        return "left " + inst->name() + " without a reason";
      }
    }
  }
  return "";
}

std::unique_ptr<Module> Load(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

TEST(ConvolutionToGemmTest, CorpusAndDatasetConvolutionsComputeWhatTheyDid) {
  const fs::path data = fs::path(HLOGYM_SOURCE_DIR) / "data";
  std::vector<fs::path> files;
  for (const fs::path& dir : {data / "corpus" / "small" / "hlo", data / "dataset" / "hlo"}) {
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int64_t modules = 0, lowered_total = 0;
  for (const fs::path& path : files) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().find("convolution(") == std::string::npos) continue;
    std::unique_ptr<Module> module = Load(path);
    ASSERT_NE(module, nullptr);
    int64_t lowered = 0;
    EXPECT_EQ(LowerAndCheck(*module, &lowered), "") << path;
    lowered_total += lowered;
    ++modules;
  }
  // 3 corpus twins and 9 dataset modules hold 28 convolutions, all lowered
  // (jnp_convolve1d's 64-wide window over 127 outputs just fits kMaxSlices).
  EXPECT_EQ(modules, 12);
  EXPECT_EQ(lowered_total, 28);
}

struct ConvCase {
  const char* name;
  const char* lhs;
  const char* rhs;
  const char* out;
  const char* attrs;
};

class ConvolutionToGemmCaseTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionToGemmCaseTest, ComputesWhatTheConvolutionDid) {
  const ConvCase& c = GetParam();
  std::unique_ptr<Module> module = Parse(EntryModule(
      absl::StrCat("  x = ", c.lhs, " parameter(0)\n  k = ", c.rhs,
                   " parameter(1)\n  ROOT c = ", c.out, " convolution(x, k), ", c.attrs)));
  ASSERT_NE(module, nullptr);
  const Instruction* conv = module->entry()->root();
  ASSERT_EQ(ConvolutionToGemmRefusal(*conv), "") << c.name;
  int64_t lowered = 0;
  EXPECT_EQ(LowerAndCheck(*module, &lowered), "") << c.name;
  EXPECT_EQ(lowered, 1) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvolutionToGemmCaseTest,
    ::testing::Values(
        ConvCase{"same_padding", "f32[2,6,6,3]", "f32[3,3,3,4]", "f32[2,6,6,4]",
                 "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
        ConvCase{"stride_and_uneven_padding", "f32[2,7,6,3]", "f32[3,2,3,5]", "f32[2,4,3,5]",
                 "window={size=3x2 stride=2x2 pad=1_1x0_1}, dim_labels=b01f_01io->b01f"},
        ConvCase{"nchw_oihw", "f32[2,3,5,5]", "f32[4,3,3,3]", "f32[2,4,3,3]",
                 "window={size=3x3}, dim_labels=bf01_oi01->bf01"},
        ConvCase{"base_dilation_and_reversal", "f32[1,4,4,2]", "f32[3,3,3,2]", "f32[1,8,8,3]",
                 "window={size=3x3 pad=2_1x2_1 lhs_dilate=2x2 rhs_reversal=1x1}, "
                 "dim_labels=b01f_01oi->b01f"},
        ConvCase{"window_dilation", "f32[2,9,9,2]", "f32[3,3,2,2]", "f32[2,5,5,2]",
                 "window={size=3x3 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f"},
        ConvCase{"negative_padding", "f32[1,8,8,2]", "f32[3,3,2,3]", "f32[1,4,6,3]",
                 "window={size=3x3 pad=-1_-1x0_0}, dim_labels=b01f_01io->b01f"},
        ConvCase{"feature_groups", "f32[2,5,5,6]", "f32[3,3,2,9]", "f32[2,5,5,9]",
                 "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                 "feature_group_count=3"},
        ConvCase{"depthwise", "f32[1,6,6,4]", "f32[3,3,1,4]", "f32[1,4,4,4]",
                 "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4"},
        ConvCase{"backward_filter_window_larger_than_output", "f32[3,8,8,2]", "f32[3,8,8,4]",
                 "f32[3,3,2,4]", "window={size=8x8 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf"},
        ConvCase{"one_dimensional", "f32[2,10,3]", "f32[5,3,4]", "f32[2,10,4]",
                 "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f"},
        ConvCase{"three_dimensional", "f32[1,4,4,4,2]", "f32[2,2,2,2,3]", "f32[1,3,3,3,3]",
                 "window={size=2x2x2}, dim_labels=b012f_012io->b012f"},
        ConvCase{"no_spatial_dims", "f32[4,3]", "f32[3,5]", "f32[4,5]", "dim_labels=bf_io->bf"},
        ConvCase{"bf16_to_f32", "bf16[2,5,5,3]", "bf16[3,3,3,4]", "f32[2,5,5,4]",
                 "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
        ConvCase{"f64_output_first", "f64[2,4,4,3]", "f64[2,2,3,2]", "f64[2,3,3,2]",
                 "window={size=2x2}, dim_labels=b01f_01io->f01b"}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

TEST(ConvolutionToGemmTest, ConvolutionsSharingOperandsInOneModule) {
  std::unique_ptr<Module> module = Parse(lowering_test::kThreeConvolutions);
  ASSERT_NE(module, nullptr);
  int64_t lowered = 0;
  EXPECT_EQ(LowerAndCheck(*module, &lowered), "");
  EXPECT_EQ(lowered, 3);
}

// A convolution with random window attributes, dimension orders and
// feature groups, as HLO text: every combination the pass takes must
// compute what the convolution computes.
std::string RandomConvolution(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int spatial = pick(1, 2);
  const int batch = pick(1, 3), groups = pick(1, 3), group_in = pick(1, 3), group_out = pick(1, 2);
  std::vector<int> in(spatial), window(spatial), out(spatial);
  std::vector<std::string> size, stride, pad, lhs, rhs, reversal;
  for (int s = 0; s < spatial; ++s) {
    while (true) {
      in[s] = pick(1, 7);
      window[s] = pick(1, 4);
      const int st = pick(1, 3), ld = pick(1, 2), rd = pick(1, 2), lo = pick(-1, 2),
                hi = pick(-1, 2);
      const int padded = lo + hi + (in[s] - 1) * ld + 1;
      const int reach = (window[s] - 1) * rd + 1;
      if (padded < reach) continue;
      out[s] = (padded - reach) / st + 1;
      size.push_back(std::to_string(window[s]));
      stride.push_back(std::to_string(st));
      pad.push_back(absl::StrCat(lo, "_", hi));
      lhs.push_back(std::to_string(ld));
      rhs.push_back(std::to_string(rd));
      reversal.push_back(std::to_string(pick(0, 1)));
      break;
    }
  }
  // Each operand's dimensions in a random order of its roles.
  auto labels = [&](char first, char second, const std::vector<int>& spatial_sizes, int a, int b,
                    std::string& text) {
    std::vector<std::pair<char, int>> roles = {{first, a}, {second, b}};
    for (int s = 0; s < spatial; ++s)
      roles.push_back({static_cast<char>('0' + s), spatial_sizes[s]});
    std::shuffle(roles.begin(), roles.end(), rng);
    std::vector<std::string> dims;
    for (const auto& [role, n] : roles) {
      text.push_back(role);
      dims.push_back(std::to_string(n));
    }
    return absl::StrCat("f32[", absl::StrJoin(dims, ","), "]");
  };
  std::string in_labels, kernel_labels, out_labels;
  const std::string x = labels('b', 'f', in, batch, groups * group_in, in_labels);
  const std::string k = labels('i', 'o', window, group_in, groups * group_out, kernel_labels);
  const std::string y = labels('b', 'f', out, batch, groups * group_out, out_labels);
  return absl::StrCat(
      "HloModule m\n\nENTRY main {\n  x = ", x, " parameter(0)\n  k = ", k,
      " parameter(1)\n  ROOT c = ", y,
      " convolution(x, k), window={size=", absl::StrJoin(size, "x"),
      " stride=", absl::StrJoin(stride, "x"), " pad=", absl::StrJoin(pad, "x"),
      " lhs_dilate=", absl::StrJoin(lhs, "x"), " rhs_dilate=", absl::StrJoin(rhs, "x"),
      " rhs_reversal=", absl::StrJoin(reversal, "x"), "}, dim_labels=", in_labels, "_",
      kernel_labels, "->", out_labels, ", feature_group_count=", groups, "\n}\n");
}

TEST(ConvolutionToGemmTest, RandomConvolutionsComputeWhatTheyDid) {
  std::mt19937 rng(7);
  for (int i = 0; i < 150; ++i) {
    const std::string text = RandomConvolution(rng);
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr) << text;
    ASSERT_EQ(ConvolutionToGemmRefusal(*module->entry()->root()), "") << text;
    int64_t lowered = 0;
    EXPECT_EQ(LowerAndCheck(*module, &lowered), "") << text;
    EXPECT_EQ(lowered, 1) << text;
  }
}

TEST(ConvolutionToGemmTest, LeavesWhatItCannotLowerAndSaysWhy) {
  std::unique_ptr<Module> module =
      Parse(EntryModule("  x = f32[4,6,6,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
                        "  ROOT c = f32[2,4,4,4] convolution(x, k), window={size=3x3}, "
                        "dim_labels=b01f_01io->b01f, batch_group_count=2"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ConvolutionToGemmRefusal(*module->entry()->root()), "batch_group_count > 1");
  ConvolutionToGemmPass pass;
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(CountOpcode(*module, Opcode::kConvolution), 1);
}

TEST(ConvolutionToGemmTest, ALayoutOtherThanRowMajorIsLeft) {
  std::unique_ptr<Module> module = Parse(EntryModule(
      "  x = f32[1,4,4,1]{0,1,2,3} parameter(0)\n  k = f32[3,3,1,1] parameter(1)\n"
      "  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ConvolutionToGemmRefusal(*module->entry()->root()), "a layout other than row-major");
  ConvolutionToGemmPass pass;
  absl::StatusOr<bool> changed = RunPass(pass, *module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(ConvolutionToGemmTest, ManyWindowAndOutputPositionsAreLeft) {
  std::unique_ptr<Module> module = Parse(EntryModule(
      "  x = f32[1,200,1] parameter(0)\n  k = f32[100,1,1] parameter(1)\n"
      "  ROOT c = f32[1,101,1] convolution(x, k), window={size=100}, dim_labels=b0f_0io->b0f"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(ConvolutionToGemmRefusal(*module->entry()->root()),
            "more than 64 window and output positions (100 and 101)");
}

TEST(ConvolutionToGemmTest, DryModeIsAnError) {
  std::unique_ptr<Module> module = Parse(EntryModule(
      "  x = f32[1,4,4,1] parameter(0)\n  k = f32[3,3,1,1] parameter(1)\n"
      "  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f"));
  ASSERT_NE(module, nullptr);
  ConvolutionToGemmPass pass;
  absl::StatusOr<int64_t> offered = RunDryPass(pass, *module);
  ASSERT_FALSE(offered.ok());
  EXPECT_NE(offered.status().message().find("not supported: conv-to-gemm in dry mode"),
            std::string::npos);
  EXPECT_EQ(CountOpcode(*module, Opcode::kConvolution), 1);
}

}  // namespace
}  // namespace hlogym

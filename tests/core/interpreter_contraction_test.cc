// dot and convolution (BLAS-backed in the interpreter) against naive loops
// accumulating in double, written here from the HLO definitions.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/eval/interpreter.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using Index = std::vector<int64_t>;

absl::StatusOr<std::unique_ptr<Module>> Parse(const std::string& body) {
  return ParseModule(absl::StrCat("HloModule m\n\n", body));
}

Literal Values(const Shape& shape, int64_t seed) {
  Literal l(shape);
  for (int64_t i = 0; i < l.element_count(); ++i) {
    l.SetFromDouble(i, std::sin(0.37 * static_cast<double>(i) + 1.3 * static_cast<double>(seed)));
  }
  return l;
}

Index StridesOf(const Shape& s) {
  Index st(s.rank(), 1);
  for (int64_t d = s.rank() - 2; d >= 0; --d) st[d] = st[d + 1] * s.dim(d + 1);
  return st;
}

bool Advance(absl::Span<const int64_t> dims, Index& index) {
  for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
    if (++index[k] < dims[k]) return true;
    index[k] = 0;
  }
  return false;
}

// The convolution of the HLO definition, one output element at a time.
double NaiveConvolutionElement(const Instruction& inst, const Literal& lhs, const Literal& rhs,
                               const Index& oi) {
  const auto& a = inst.attrs<ConvolutionAttrs>();
  const ConvolutionDimensions& cd = a.dims;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape& os = inst.shape();
  const Index lst = StridesOf(ls), rst = StridesOf(rs);
  const int64_t spatial = static_cast<int64_t>(cd.input_spatial.size());
  const int64_t out_features = os.dim(cd.output_feature);
  const int64_t kernel_in = rs.dim(cd.kernel_input_feature);
  const int64_t o = oi[cd.output_feature];
  const int64_t group = o / (out_features / a.feature_group_count);
  const int64_t batch_group = o / (out_features / a.batch_group_count);
  const int64_t in_b = batch_group * os.dim(cd.output_batch) + oi[cd.output_batch];
  Index window(spatial);
  for (int64_t s = 0; s < spatial; ++s) window[s] = rs.dim(cd.kernel_spatial[s]);
  Index wi(spatial, 0);
  double sum = 0;
  do {
    int64_t l_off = in_b * lst[cd.input_batch];
    int64_t r_off = o * rst[cd.kernel_output_feature];
    bool inside = true;
    for (int64_t s = 0; s < spatial; ++s) {
      const WindowDimension& wd = a.window[s];
      const int64_t pos = oi[cd.output_spatial[s]] * wd.stride + wi[s] * wd.rhs_dilation - wd.padding_low;
      if (pos < 0 || pos % wd.lhs_dilation != 0 || pos / wd.lhs_dilation >= ls.dim(cd.input_spatial[s])) {
        inside = false;
        break;
      }
      l_off += (pos / wd.lhs_dilation) * lst[cd.input_spatial[s]];
      r_off += (wd.reversal ? wd.size - 1 - wi[s] : wi[s]) * rst[cd.kernel_spatial[s]];
    }
    if (!inside) continue;
    for (int64_t c = 0; c < kernel_in; ++c) {
      sum += lhs.GetAsDouble(l_off + (group * kernel_in + c) * lst[cd.input_feature]) *
             rhs.GetAsDouble(r_off + c * rst[cd.kernel_input_feature]);
    }
  } while (spatial > 0 && Advance(window, wi));
  return sum;
}

void CheckConvolution(const std::string& text) {
  SCOPED_TRACE(text);
  auto module = Parse(text);
  ASSERT_TRUE(module.ok()) << module.status();
  const Computation& entry = *(*module)->entry();
  const Instruction& conv = *entry.root();
  const Literal lhs = Values(entry.parameter(0)->shape(), 1);
  const Literal rhs = Values(entry.parameter(1)->shape(), 2);
  auto out = Evaluate(**module, {lhs, rhs});
  ASSERT_TRUE(out.ok()) << out.status();
  const double tol = conv.shape().element_type() == PrimitiveType::kBF16 ? 2e-2 : 1e-5;
  Index oi(conv.shape().rank(), 0);
  int64_t i = 0;
  do {
    const double want = NaiveConvolutionElement(conv, lhs, rhs, oi);
    ASSERT_NEAR(out->GetAsDouble(i), want, tol * (1 + std::fabs(want))) << "element " << i;
    ++i;
  } while (Advance(conv.shape().dims(), oi));
}

TEST(InterpreterConvolution, MatchesTheDefinition) {
  // NHWC with stride, padding and window dilation.
  CheckConvolution(
      "ENTRY e {\n  x = f32[2,7,6,3] parameter(0)\n  k = f32[3,2,3,4] parameter(1)\n"
      "  ROOT c = f32[2,4,4,4] convolution(x, k), window={size=3x2 stride=2x1 pad=1_1x0_0 rhs_dilate=1x2},"
      " dim_labels=b01f_01io->b01f\n}\n");
  // NCHW, base (lhs) dilation and negative padding, window reversal.
  CheckConvolution(
      "ENTRY e {\n  x = f32[1,2,5,5] parameter(0)\n  k = f32[3,2,2,2] parameter(1)\n"
      "  ROOT c = f32[1,3,7,7] convolution(x, k), window={size=2x2 pad=0_-1x-1_0 lhs_dilate=2x2 rhs_reversal=1x0},"
      " dim_labels=bf01_oi01->bf01\n}\n");
  // Feature groups (depthwise with a multiplier of 2), bf16.
  CheckConvolution(
      "ENTRY e {\n  x = bf16[2,6,6,4] parameter(0)\n  k = bf16[3,3,1,8] parameter(1)\n"
      "  ROOT c = bf16[2,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},"
      " dim_labels=b01f_01io->b01f, feature_group_count=4\n}\n");
  // Batch groups.
  CheckConvolution(
      "ENTRY e {\n  x = f32[4,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
      "  ROOT c = f32[1,3,3,4] convolution(x, k), window={size=3x3},"
      " dim_labels=b01f_01io->b01f, batch_group_count=4\n}\n");
  // The labels of a weight-gradient convolution.
  CheckConvolution(
      "ENTRY e {\n  x = f32[4,5,5,3] parameter(0)\n  k = f32[4,3,3,2] parameter(1)\n"
      "  ROOT c = f32[3,3,3,2] convolution(x, k), window={size=3x3},"
      " dim_labels=f01b_i01o->01bf\n}\n");
  // 1-D, f64.
  CheckConvolution(
      "ENTRY e {\n  x = f64[3,2,9] parameter(0)\n  k = f64[4,2,3] parameter(1)\n"
      "  ROOT c = f64[3,4,4] convolution(x, k), window={size=3 stride=2}, dim_labels=bf0_oi0->bf0\n}\n");
}

TEST(InterpreterDot, MatchesTheDefinition) {
  // Batch dims not leading, contracting dims out of order, bf16 and f64.
  for (const char* type : {"f32", "bf16", "f64"}) {
    const std::string text = absl::StrCat(
        "ENTRY e {\n  a = ", type, "[3,4,2,5] parameter(0)\n  b = ", type, "[5,2,6,3] parameter(1)\n"
        "  ROOT d = ", type, "[2,4,6] dot(a, b), lhs_batch_dims={2}, lhs_contracting_dims={3,0},"
        " rhs_batch_dims={1}, rhs_contracting_dims={0,3}\n}\n");
    SCOPED_TRACE(text);
    auto module = Parse(text);
    ASSERT_TRUE(module.ok()) << module.status();
    const Literal a = Values((*module)->entry()->parameter(0)->shape(), 1);
    const Literal b = Values((*module)->entry()->parameter(1)->shape(), 2);
    auto out = Evaluate(**module, {a, b});
    ASSERT_TRUE(out.ok()) << out.status();
    const double tol = std::string(type) == "bf16" ? 2e-2 : 1e-5;
    for (int64_t x = 0; x < 2; ++x) {
      for (int64_t m = 0; m < 4; ++m) {
        for (int64_t n = 0; n < 6; ++n) {
          double want = 0;
          for (int64_t k0 = 0; k0 < 5; ++k0) {
            for (int64_t k1 = 0; k1 < 3; ++k1) {
              // lhs [k1, m, x, k0], rhs [k0, x, n, k1]
              want += a.GetAsDouble(((k1 * 4 + m) * 2 + x) * 5 + k0) *
                      b.GetAsDouble(((k0 * 2 + x) * 6 + n) * 3 + k1);
            }
          }
          ASSERT_NEAR(out->GetAsDouble((x * 4 + m) * 6 + n), want, tol * (1 + std::fabs(want)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace hlogym

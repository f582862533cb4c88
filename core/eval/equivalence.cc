#include "core/eval/equivalence.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/eval/formula_inputs.h"
#include "core/eval/interpreter.h"
#include "core/eval/scalar.h"

namespace hlogym {
namespace {

std::string ElementText(const Literal& literal, int64_t i) {
  const PrimitiveType t = literal.shape().element_type();
  if (IsFloat(t)) return absl::StrCat(literal.GetAsDouble(i));
  if (IsComplex(t)) {
    auto c = literal.GetAsComplex(i);
    return absl::StrCat("(", c.real(), ", ", c.imag(), ")");
  }
  return absl::StrCat(literal.GetAsInt64(i));
}

bool Close(double x, double y, double rtol, double atol) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return std::fabs(x - y) <= atol + rtol * std::fabs(y);
}

}  // namespace

EquivalenceReport CompareLiterals(const std::vector<Literal>& expected,
                                  const std::vector<Literal>& actual,
                                  const EquivalenceOptions& options) {
  EquivalenceReport report;
  auto mismatch = [&](int64_t output, int64_t element, std::string message) {
    report.equivalent = false;
    report.output_index = output;
    report.element_index = element;
    report.message = std::move(message);
    return report;
  };
  if (expected.size() != actual.size()) {
    return mismatch(-1, -1, absl::StrCat("expected ", expected.size(), " outputs, got ",
                                         actual.size()));
  }
  for (size_t o = 0; o < expected.size(); ++o) {
    const Literal& x = expected[o];
    const Literal& y = actual[o];
    if (!x.shape().Compatible(y.shape())) {
      return mismatch(o, -1, absl::StrCat("output ", o, ": expected shape ",
                                          x.shape().ToString(false), ", got ",
                                          y.shape().ToString(false)));
    }
    const PrimitiveType t = x.shape().element_type();
    const bool narrow = IsFloat(t) && BitWidth(t) <= 16;
    const double rtol = narrow ? options.narrow_tolerance : options.rtol;
    const double atol = narrow ? options.narrow_tolerance : options.atol;
    for (int64_t i = 0; i < x.element_count(); ++i) {
      bool same;
      if (IsFloat(t)) {
        same = Close(y.GetAsDouble(i), x.GetAsDouble(i), rtol, atol);
      } else if (IsComplex(t)) {
        const auto a = x.GetAsComplex(i), b = y.GetAsComplex(i);
        same = Close(b.real(), a.real(), rtol, atol) && Close(b.imag(), a.imag(), rtol, atol);
      } else {
        same = x.GetAsInt64(i) == y.GetAsInt64(i);
      }
      if (!same) {
        report.expected = ElementText(x, i);
        report.actual = ElementText(y, i);
        return mismatch(o, i, absl::StrCat("output ", o, ", element ", i, ": expected ",
                                           report.expected, ", got ", report.actual));
      }
    }
  }
  return report;
}

absl::StatusOr<EquivalenceReport> Equivalent(const Module& a, const Module& b,
                                             const EquivalenceOptions& options) {
  const std::vector<Literal> inputs = FormulaInputs(a);
  absl::StatusOr<std::vector<Literal>> x = EvaluateFlat(a, inputs);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Literal>> y = EvaluateFlat(b, inputs);
  if (!y.ok()) return y.status();
  return CompareLiterals(*x, *y, options);
}

}  // namespace hlogym

#include "tests/core/oracle_check.h"

#include <cmath>
#include <sstream>

namespace hlogym::testing {
namespace {

bool IsNarrow(const std::string& dtype) { return dtype == "bfloat16" || dtype == "float16"; }
bool IsExact(const std::string& dtype) {
  return dtype == "bool" || dtype.find("int") != std::string::npos;
}

bool Near(double ours, double theirs, double rel) {
  return std::fabs(ours - theirs) <= rel * (1 + std::fabs(theirs));
}

}  // namespace

std::string CheckAgainstOracle(const std::vector<Literal>& outputs, const Json& oracle,
                               bool elementwise) {
  const auto& records = oracle["outputs"].array;
  std::ostringstream why;
  if (records.size() != outputs.size()) {
    why << "expected " << records.size() << " outputs, got " << outputs.size();
    return why.str();
  }
  for (size_t o = 0; o < records.size(); ++o) {
    const Json& r = records[o];
    const Literal& out = outputs[o];
    const std::string dtype = r["dtype"].string;
    const double tol = IsExact(dtype) ? 0 : IsNarrow(dtype) ? 1e-2 : 1e-3;
    const int64_t count = static_cast<int64_t>(r["count"].number);
    if (out.element_count() != count) {
      why << "output " << o << ": " << out.element_count() << " elements, oracle " << count;
      return why.str();
    }
    auto value = [&](int64_t i) { return out.GetAsDouble(i); };
    if (elementwise && r.has("values")) {
      for (int64_t i = 0; i < count; ++i) {
        const Json& v = r["values"].array[i];
        const double ours = value(i);
        if (v.kind == Json::kNull) {
          if (std::isfinite(ours)) {
            why << "output " << o << "[" << i << "]: oracle non-finite, ours " << ours;
            return why.str();
          }
        } else if (!(tol == 0 ? ours == v.number : Near(ours, v.number, tol))) {
          why << "output " << o << "[" << i << "]: oracle " << v.number << ", ours " << ours;
          return why.str();
        }
      }
      continue;
    }
    int64_t nonfinite = 0;
    double sum = 0, abs_sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double v = value(i);
      if (!std::isfinite(v)) {
        ++nonfinite;
        continue;
      }
      sum += v;
      abs_sum += std::fabs(v);
    }
    if (nonfinite != static_cast<int64_t>(r["nonfinite"].number)) {
      why << "output " << o << ": " << nonfinite << " non-finite, oracle " << r["nonfinite"].number;
      return why.str();
    }
    const double scale = std::fmax(1.0, r["abs_sum"].number);
    if (std::fabs(abs_sum - r["abs_sum"].number) > std::fmax(tol, 1e-9) * scale ||
        std::fabs(sum - r["sum"].number) > std::fmax(tol, 1e-9) * scale) {
      why << "output " << o << ": sum " << sum << " abs_sum " << abs_sum << ", oracle "
          << r["sum"].number << " " << r["abs_sum"].number;
      return why.str();
    }
    for (size_t s = 0; s < r["sample_index"].array.size(); ++s) {
      const int64_t i = static_cast<int64_t>(r["sample_index"].array[s].number);
      const Json& v = r["sample"].array[s];
      const double ours = value(i);
      if (v.kind == Json::kNull ? std::isfinite(ours)
                                : !(tol == 0 ? ours == v.number : Near(ours, v.number, tol))) {
        why << "output " << o << " sample [" << i << "]: oracle "
            << (v.kind == Json::kNull ? std::string("non-finite") : std::to_string(v.number))
            << ", ours " << ours;
        return why.str();
      }
    }
  }
  return "";
}

}  // namespace hlogym::testing

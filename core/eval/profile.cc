#include "core/eval/profile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_format.h"

namespace hlogym {
namespace {

struct Row {
  int64_t count = 0;
  double seconds = 0;
  double slowest = 0;
  std::string slowest_name;
};

std::mutex& Mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, Row>& Rows() {
  static auto* rows = new std::map<std::string, Row>();
  return *rows;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Time measured by timers nested inside the running one, on this thread.
thread_local double children_seconds = 0;

}  // namespace

bool EvalProfile::Enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("HLOGYM_EVAL_PROFILE");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return enabled;
}

void EvalProfile::Record(const Instruction& inst, double seconds) {
  const std::string key = absl::StrFormat(
      "%s %s", std::string(OpcodeName(inst.opcode())),
      inst.shape().IsTuple() ? std::string("tuple")
                             : std::string(PrimitiveTypeName(inst.shape().element_type())));
  std::lock_guard<std::mutex> lock(Mutex());
  Row& row = Rows()[key];
  ++row.count;
  row.seconds += seconds;
  if (seconds > row.slowest) {
    row.slowest = seconds;
    row.slowest_name = absl::StrFormat("%s %s", inst.name(), inst.shape().ToString(false));
  }
}

std::string EvalProfile::TakeReport() {
  std::vector<std::pair<std::string, Row>> rows;
  {
    std::lock_guard<std::mutex> lock(Mutex());
    rows.assign(Rows().begin(), Rows().end());
    Rows().clear();
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double total = 0;
  for (const auto& [key, row] : rows) total += row.seconds;
  std::string out = absl::StrFormat("  %-28s %8s %9s  %s\n", "opcode type", "count", "self s",
                                    "slowest instance");
  for (const auto& [key, row] : rows) {
    if (row.seconds < 0.001 * total && out.size() > 2000) break;
    out += absl::StrFormat("  %-28s %8d %9.3f  %.3f s %s\n", key, row.count, row.seconds,
                           row.slowest, row.slowest_name);
  }
  out += absl::StrFormat("  %-28s %8s %9.3f\n", "total", "", total);
  return out;
}

EvalTimer::EvalTimer(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  saved_children_ = children_seconds;
  children_seconds = 0;
  start_ = Now();
}

void EvalTimer::Stop(const Instruction& inst) {
  if (!enabled_) return;
  const double elapsed = Now() - start_;
  EvalProfile::Record(inst, std::max(0.0, elapsed - children_seconds));
  children_seconds = saved_children_ + elapsed;
  enabled_ = false;
}

}  // namespace hlogym

// Status propagation helpers shared by all of hlogym. Errors are values at the
// edges (absl::Status); nothing in the library aborts on bad input.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOGYM_CONCAT_INNER(a, b) a##b
#define HLOGYM_CONCAT(a, b) HLOGYM_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status hlogym_status_ = (expr);          \
    if (!hlogym_status_.ok()) return hlogym_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(HLOGYM_CONCAT(hlogym_statusor_, __LINE__), lhs, expr)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

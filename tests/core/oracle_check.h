// Compares interpreter outputs with an XLA oracle record (data/*/oracle),
// with the tolerances of data/corpus/README.md.
#pragma once

#include <string>
#include <vector>

#include "core/ir/literal.h"
#include "tests/core/oracle_json.h"

namespace hlogym::testing {

// Returns "" when `outputs` agree with the oracle, else what differs.
// Elementwise when the record holds `values` (and `elementwise` is set),
// else by count, non-finite count, sums and samples.
std::string CheckAgainstOracle(const std::vector<Literal>& outputs, const Json& oracle,
                               bool elementwise);

}  // namespace hlogym::testing

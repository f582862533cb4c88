// The formula inputs: deterministic arguments any language can rebuild, the
// ones data/corpus/oracle was computed with. For entry parameter p, element
// i (row-major): floats sin(0.5*i + 1.7*p + 0.3) in float64, rounded to
// float32, then converted to the type; integers (7*i + 3*p) % 11; pred
// (i + p) % 3 == 0. A tuple parameter's leaves are numbered like the
// parameter (all leaves use p).
#pragma once

#include <vector>

#include "core/ir/module.h"

namespace hlogym {

Literal FormulaInput(const Shape& shape, int64_t parameter_number);
std::vector<Literal> FormulaInputs(const Module& module);

}  // namespace hlogym

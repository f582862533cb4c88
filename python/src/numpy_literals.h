// Copies between numpy arrays and Literals, for the bindings that take
// inputs and return outputs (evaluate, compiled executables).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/ir/literal.h"
#include "core/ir/module.h"

namespace hlogym {

// A numpy array holding a copy of an array Literal.
pybind11::array ToNumpy(const Literal& literal);
// Parameter `index` of shape `shape` from a numpy array (or anything
// np.asarray takes); raises naming the parameter on a shape or dtype mismatch.
Literal FromNumpy(const pybind11::handle& object, const Shape& shape, int64_t index);
// A list of arrays, one per leaf.
pybind11::list Outputs(const std::vector<Literal>& leaves);

// The arguments of `module`'s entry: one numpy array per parameter, or the
// formula inputs where `inputs` is None; raises on a wrong count, shape or
// dtype, naming the parameter.
std::vector<Literal> Arguments(const Module& module, const std::optional<pybind11::list>& inputs);

}  // namespace hlogym

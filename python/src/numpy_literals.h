// Copies between numpy arrays and Literals, for the bindings that take
// inputs and return outputs (evaluate, compiled executables).
#pragma once

#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/ir/literal.h"

namespace hlogym {

// A numpy array holding a copy of an array Literal.
pybind11::array ToNumpy(const Literal& literal);
// Parameter `index` of shape `shape` from a numpy array (or anything
// np.asarray takes); raises naming the parameter on a shape or dtype mismatch.
Literal FromNumpy(const pybind11::handle& object, const Shape& shape, int64_t index);
// A list of arrays, one per leaf.
pybind11::list Outputs(const std::vector<Literal>& leaves);

}  // namespace hlogym

// Which leaves of a while's state each trip has to move, for a target whose
// condition and body read their own copies of the state (the GPU's: an
// executable's parameters are buffers of its own). A leaf the body passes
// through unchanged (weights, the sequence a scan reads) is copied into the
// body once, before the first trip, and never back; a leaf the condition
// does not read is not copied into it at all. lstm_scan copied its whole
// state three times a trip on the H100 (17x XLA's time).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/instruction.h"

namespace hlogym {

struct WhileStateCopies {
  // Per leaf of the state (FlattenLeafShapes order).
  std::vector<bool> condition_reads;
  std::vector<bool> body_forwards;  // the body's result leaf i is its parameter's leaf i
};

// For a while instruction. A leaf counts as read, and as not forwarded,
// unless the computations show otherwise (a parameter used other than by
// get-tuple-element, a body root that is no tuple): the plan never skips a
// copy a trip needs.
WhileStateCopies PlanWhileStateCopies(const Instruction& while_instruction);

// How many trips a while makes when its computations fix it: a counter
// starting at a constant (the while's operand is a tuple holding it), moved
// by a constant each trip (the body's result holds counter +/- constant),
// compared with a constant by the condition; each may sit inside a one-level
// fusion. Nullopt when any part is not of that form, or the count is over
// `limit`. A target that knows the count runs the body that many times
// without evaluating the condition (on a GPU: without reading it back and
// waiting, every trip).
std::optional<int64_t> StaticTripCount(const Instruction& while_instruction,
                                       int64_t limit = int64_t{1} << 20);

}  // namespace hlogym

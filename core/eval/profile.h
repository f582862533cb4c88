// Per-opcode timing of the reference interpreter, switched on by the
// environment variable HLOGYM_EVAL_PROFILE=1, so slow modules can be
// diagnosed on machines without a profiler. Off, it costs one branch per
// instruction.
#pragma once

#include <string>

#include "core/ir/instruction.h"

namespace hlogym {

class EvalProfile {
 public:
  // Whether HLOGYM_EVAL_PROFILE is set (read once).
  static bool Enabled();
  // Adds one evaluation of `inst` that took `seconds` of its own (nested
  // computations excluded).
  static void Record(const Instruction& inst, double seconds);
  // The table of self time per opcode and element type since the last call,
  // slowest first, with the slowest instruction of each row; then resets.
  static std::string TakeReport();
};

// Measures one instruction's self time: the time between construction and
// Stop(), less what nested timers on this thread measured meanwhile.
class EvalTimer {
 public:
  explicit EvalTimer(bool enabled);
  void Stop(const Instruction& inst);

 private:
  bool enabled_;
  double start_ = 0;
  double saved_children_ = 0;
};

}  // namespace hlogym

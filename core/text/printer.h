// HLO text printer: canonical short-parsable text that XLA's parser and ours
// accept. Output is byte-stable: the same module prints the same bytes.
#pragma once

#include <string>

#include "core/ir/module.h"

namespace hlogym {

struct PrintOptions {
  // Long dump style: %names, computation signatures, operand shapes.
  bool long_style = false;
  // Print every constant value (false prints arrays over 10 elements as
  // {...}, which loses their values).
  bool print_large_constants = true;
  bool print_metadata = true;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, const PrintOptions& options = {});
// One instruction line without indentation or ROOT, e.g.
// "add.3 = f32[8]{0} add(x, y)".
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});

}  // namespace hlogym

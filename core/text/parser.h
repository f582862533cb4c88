// HLO text parser. Accepts every style JAX and XLA print: short-parsable
// (no %, no operand shapes), long dump style (%names, operand shapes,
// computation signatures, /*index=N*/ comments), with or without metadata,
// backend_config, sharding, frontend_attributes, control-predecessors, ...
#pragma once

#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/ir/verifier.h"

namespace hlogym {

struct ParseOptions {
  // Give arrays without a layout the default row-major one.
  bool fill_missing_layouts = true;
  // When set, receives the byte offset in the text of each instruction's
  // definition (its name), so later errors can point at the source.
  absl::flat_hash_map<const Instruction*, size_t>* definition_offsets = nullptr;
};

// Errors are absl::InvalidArgumentError with the message
// "line L, column C: <what is wrong>" (1-based), naming the token found.
// Never aborts, never reads out of bounds, always terminates.
absl::StatusOr<std::unique_ptr<Module>> ParseModule(std::string_view text,
                                                    const ParseOptions& options = {});

// Parses, then verifies. A verifier error at an instruction is prefixed with
// where the text defines it: "line L, column C: computation `c`, instruction
// `i`: <what is wrong>", as parse errors are. IsVerifyError tells the two
// kinds of error apart.
absl::StatusOr<std::unique_ptr<Module>> ParseAndVerifyModule(std::string_view text,
                                                             const ParseOptions& options = {},
                                                             const VerifyOptions& verify = {});

// Parses a shape alone, e.g. "f32[8,4]{1,0}" or "(s32[], f32[2])". Arrays
// written without a layout get the row-major one (as ParseOptions' default).
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hlogym

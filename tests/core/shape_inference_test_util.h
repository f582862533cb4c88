// Helpers for the shape inference and verifier tests: parse a small module
// and report what InferShape or Verify says about it, as text.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "core/ir/module.h"
#include "core/ir/shape_inference.h"
#include "core/ir/verifier.h"
#include "core/text/parser.h"

namespace hlogym::testing_util {

// "HloModule m" + `computations` + "ENTRY main { `entry` }".
inline std::string ModuleText(std::string_view entry, std::string_view computations = "") {
  return absl::StrCat("HloModule m\n\n", std::string(computations), "\nENTRY main {\n",
                      std::string(entry), "\n}\n");
}

// InferShape of the entry's root: its shape without layout, or
// "error: <message>" (or "parse error: ..." when the text is wrong).
inline std::string InferRoot(std::string_view entry, std::string_view computations = "") {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(ModuleText(entry, computations));
  if (!module.ok()) return absl::StrCat("parse error: ", module.status().message());
  absl::StatusOr<Shape> shape = InferShape(*(*module)->entry()->root());
  if (!shape.ok()) return absl::StrCat("error: ", shape.status().message());
  return shape->ToString(/*print_layout=*/false);
}

// Verify's message for a module text, "OK" when it verifies.
inline std::string VerifyText(std::string_view text, const VerifyOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(text);
  if (!module.ok()) return absl::StrCat("parse error: ", module.status().message());
  absl::Status status = Verify(**module, options);
  return status.ok() ? "OK" : std::string(status.message());
}

}  // namespace hlogym::testing_util

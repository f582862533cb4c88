// Shared fixtures of the env tests: small modules and a registered test pass
// that offers to remove double negations (a real, exact rewrite).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/passes/pass_registry.h"
#include "core/text/parser.h"
#include "envs/benchmark_set.h"
#include "envs/hlo_rewrite_env.h"

namespace hlogym::testing {

class RemoveDoubleNegation : public Pass {
 public:
  std::string_view name() const override { return "test-double-negation"; }
  absl::StatusOr<bool> Run(Module& module, Rewriter& rewriter) override {
    bool changed = false;
    for (const auto& comp : module.computations()) {
      for (Instruction* inst : comp->MakePostOrder()) {
        if (rewriter.IsRemoved(inst) || inst->opcode() != Opcode::kNegate ||
            inst->operand(0)->opcode() != Opcode::kNegate) {
          continue;
        }
        if (absl::Status s = rewriter.Replace(inst, inst->operand(0)->operand(0)); !s.ok()) {
          return s;
        }
        changed = true;
      }
    }
    return changed;
  }
};

inline void RegisterTestPass() {
  static const bool registered = [] {
    (void)RegisterPass({"test-double-negation", "test only",
                        [](PassOptions&) -> absl::StatusOr<std::unique_ptr<Pass>> {
                          return std::make_unique<RemoveDoubleNegation>();
                        }});
    return true;
  }();
  (void)registered;
}

// `chains` independent double negations of f32[n] parameters, summed.
inline std::string DoubleNegationHlo(int chains, int n) {
  std::string text = "HloModule negations\n\nENTRY main {\n";
  std::string sum;
  for (int c = 0; c < chains; ++c) {
    const std::string i = std::to_string(c);
    const std::string shape = "f32[" + std::to_string(n) + "]{0}";
    text += "  p" + i + " = " + shape + " parameter(" + i + ")\n";
    text += "  a" + i + " = " + shape + " negate(p" + i + ")\n";
    text += "  b" + i + " = " + shape + " negate(a" + i + ")\n";
    text += "  e" + i + " = " + shape + " exponential(b" + i + ")\n";
    if (c == 0) {
      sum = "e0";
    } else {
      text += "  s" + i + " = " + shape + " add(" + sum + ", e" + i + ")\n";
      sum = "s" + i;
    }
  }
  return text + "}\n";
}

inline std::shared_ptr<BenchmarkSet> TestBenchmarks() {
  RegisterTestPass();
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules;
  for (int chains : {1, 2, 3}) {
    auto module = ParseModule(DoubleNegationHlo(chains, 1024 * chains));
    modules.emplace_back("negations" + std::to_string(chains), std::move(*module));
  }
  return *BenchmarkSet::FromModules(std::move(modules), {"dce"},
                                    std::make_shared<CostModelSource>(H100Device()));
}

inline EnvSpec TestSpec(int64_t max_steps = 4) {
  EnvSpec spec;
  spec.id = "test-v0";
  spec.dry_passes = {"test-double-negation"};
  spec.post_passes = {"dce"};
  spec.max_steps = max_steps;
  spec.limits = {64, 128, 8, 4};
  return spec;
}

}  // namespace hlogym::testing

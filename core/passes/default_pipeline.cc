#include "core/passes/default_pipeline.h"

#include "core/passes/pass_registry.h"

namespace hlogym {
namespace {

// Built-in specs always exist, so a failure here is a programming error.
std::unique_ptr<Pass> Make(const std::string& spec) {
  absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(spec);
  if (!pass.ok()) std::abort();
  return *std::move(pass);
}

}  // namespace

std::vector<std::string> DefaultSimplificationSpecs() {
  return {"algsimp", "constant-folding", "cse", "dce"};
}

Pipeline DefaultPipeline() {
  Pipeline pipeline("default");
  pipeline.AddPass(Make("call-inliner"));
  pipeline.AddPass(Make("tuple-simplifier"));
  Pipeline simplify("simplification", -1);
  for (const std::string& spec : DefaultSimplificationSpecs()) simplify.AddPass(Make(spec));
  pipeline.AddPipeline(std::move(simplify));
  pipeline.AddPass(Make("fusion(mode=xla)"), -1);
  pipeline.AddPass(Make("cse"));
  pipeline.AddPass(Make("dce"));
  return pipeline;
}

}  // namespace hlogym

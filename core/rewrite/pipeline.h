// Pipeline: passes and nested pipelines run in order, each a set number of
// times or to a fixed point. A dry pass inside stops the run when it offers
// alternatives; the next Run resumes right after it, as HloEnv's AltPipeline.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/rewrite/pass.h"

namespace hlogym {

// loop_count -1 means "until an iteration changes nothing", capped here.
inline constexpr int kFixedPointLimit = 25;

class Pipeline {
 public:
  // One step of a pipeline: a pass (apply or dry) or a nested pipeline.
  class Step;

  explicit Pipeline(std::string name, int loop_count = 1);
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  const std::string& name() const { return name_; }

  // A pass in apply mode, run loop_count times (stopping early when it
  // changes nothing) or to a fixed point with -1.
  Pipeline& AddPass(std::unique_ptr<Pass> pass, int loop_count = 1);
  // A pass in dry mode: each run that offers alternatives hands control
  // back, up to loop_count times (-1: until it offers none).
  Pipeline& AddDryPass(std::unique_ptr<Pass> pass, int loop_count = 1);
  Pipeline& AddPipeline(Pipeline pipeline);

  // Runs (or resumes) the pipeline. Returns true when it stopped because a
  // dry pass built alternatives: apply decisions, then call Run again.
  // Returns false when the pipeline ran to its end.
  absl::StatusOr<bool> Run(Module& module);
  // Whether the last run that reached the end changed the module.
  bool changed() const { return changed_; }
  // Forgets a paused position so the next Run starts from the beginning.
  void Reset();

 private:
  std::string name_;
  std::unique_ptr<Step> root_;
  bool changed_ = false;
};

}  // namespace hlogym

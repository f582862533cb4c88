#include "core/rewrite/pipeline.h"

#include <cstdint>
#include <vector>

#include "core/base/status_macros.h"

namespace hlogym {

namespace {
int IterationLimit(int loop_count) {
  return loop_count < 0 ? kFixedPointLimit : loop_count;
}
}  // namespace

// What one Step::Run did: whether the module changed, and whether it paused
// for alternatives (then the step resumes where it left off next time).
struct StepResult {
  bool changed = false;
  bool paused = false;
};

class Pipeline::Step {
 public:
  virtual ~Step() = default;
  virtual absl::StatusOr<StepResult> Run(Module& module) = 0;
  virtual void Reset() = 0;
  // Whether running it again on the module its own run left changes nothing.
  virtual bool Idempotent() const { return false; }
};

namespace {

class ApplyStep : public Pipeline::Step {
 public:
  ApplyStep(std::unique_ptr<Pass> pass, int loop_count)
      : pass_(std::move(pass)), loop_count_(loop_count) {}

  absl::StatusOr<StepResult> Run(Module& module) override {
    StepResult result;
    for (int i = 0; i < IterationLimit(loop_count_); ++i) {
      ASSIGN_OR_RETURN(bool changed, RunPass(*pass_, module));
      if (!changed) break;
      result.changed = true;
    }
    return result;
  }
  void Reset() override {}
  bool Idempotent() const override { return pass_->idempotent(); }

 private:
  std::unique_ptr<Pass> pass_;
  int loop_count_;
};

class DryStep : public Pipeline::Step {
 public:
  DryStep(std::unique_ptr<Pass> pass, int loop_count)
      : pass_(std::move(pass)), loop_count_(loop_count) {}

  absl::StatusOr<StepResult> Run(Module& module) override {
    if (paused_) {
      // The caller has applied decisions for the alternatives we built.
      paused_ = false;
      ++iteration_;
      changed_ = true;
    }
    while (iteration_ < IterationLimit(loop_count_)) {
      ASSIGN_OR_RETURN(int64_t alternatives, RunDryPass(*pass_, module));
      if (alternatives == 0) break;
      paused_ = true;
      return StepResult{true, true};
    }
    StepResult result{changed_, false};
    Reset();
    return result;
  }
  void Reset() override {
    paused_ = false;
    iteration_ = 0;
    changed_ = false;
  }

 private:
  std::unique_ptr<Pass> pass_;
  int loop_count_;
  bool paused_ = false;
  int iteration_ = 0;
  bool changed_ = false;
};

class SequenceStep : public Pipeline::Step {
 public:
  explicit SequenceStep(int loop_count) : loop_count_(loop_count) {}

  void Add(std::unique_ptr<Pipeline::Step> step) { steps_.push_back(std::move(step)); }

  absl::StatusOr<StepResult> Run(Module& module) override {
    // The module may have changed since the last call (decisions applied
    // after a pause): no run before this call counts as the latest.
    ran_at_.assign(steps_.size(), -1);
    while (iteration_ < IterationLimit(loop_count_)) {
      while (next_ < steps_.size()) {
        // An idempotent step whose own run is the last change, or came
        // after it, would change nothing: a fixed point's second round
        // (post-pass CSE after an env step) is skipped where it can be.
        if (steps_[next_]->Idempotent() && ran_at_[next_] == changes_) {
          ++next_;
          continue;
        }
        absl::StatusOr<StepResult> r = steps_[next_]->Run(module);
        if (!r.ok()) {
          Reset();
          return r.status();
        }
        iteration_changed_ |= r->changed;
        if (r->paused) return StepResult{true, true};
        if (r->changed) ++changes_;
        ran_at_[next_] = changes_;
        ++next_;
      }
      next_ = 0;
      ++iteration_;
      changed_ |= iteration_changed_;
      const bool again = iteration_changed_;
      iteration_changed_ = false;
      if (!again) break;
    }
    StepResult result{changed_, false};
    Reset();
    return result;
  }

  void Reset() override {
    next_ = 0;
    iteration_ = 0;
    iteration_changed_ = false;
    changed_ = false;
    for (auto& step : steps_) step->Reset();
  }

 private:
  int loop_count_;
  std::vector<std::unique_ptr<Pipeline::Step>> steps_;
  // Changes counted within one Run, and the count right after each step's
  // latest run in it (-1: not run in it).
  int64_t changes_ = 0;
  std::vector<int64_t> ran_at_;
  size_t next_ = 0;
  int iteration_ = 0;
  bool iteration_changed_ = false;
  bool changed_ = false;
};

}  // namespace

Pipeline::Pipeline(std::string name, int loop_count)
    : name_(std::move(name)), root_(std::make_unique<SequenceStep>(loop_count)) {}
Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

Pipeline& Pipeline::AddPass(std::unique_ptr<Pass> pass, int loop_count) {
  static_cast<SequenceStep*>(root_.get())
      ->Add(std::make_unique<ApplyStep>(std::move(pass), loop_count));
  return *this;
}

Pipeline& Pipeline::AddDryPass(std::unique_ptr<Pass> pass, int loop_count) {
  static_cast<SequenceStep*>(root_.get())
      ->Add(std::make_unique<DryStep>(std::move(pass), loop_count));
  return *this;
}

// A nested pipeline is its root step moved into ours.
Pipeline& Pipeline::AddPipeline(Pipeline pipeline) {
  static_cast<SequenceStep*>(root_.get())->Add(std::move(pipeline.root_));
  return *this;
}

absl::StatusOr<bool> Pipeline::Run(Module& module) {
  ASSIGN_OR_RETURN(StepResult result, root_->Run(module));
  if (!result.paused) changed_ = result.changed;
  return result.paused;
}

void Pipeline::Reset() { root_->Reset(); }

}  // namespace hlogym

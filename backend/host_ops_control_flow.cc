// while, conditional and call on the CPU: the host drives an executable per
// called computation, compiled once with the step that calls it.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/cpu_executable.h"
#include "backend/while_state.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

int64_t LeafCount(const Shape& shape) {
  return static_cast<int64_t>(FlattenLeafShapes(shape).size());
}

std::vector<int64_t> LeafSizes(const Shape& shape) {
  std::vector<int64_t> sizes;
  for (const Shape& leaf : FlattenLeafShapes(shape)) sizes.push_back(LeafBytes(leaf));
  return sizes;
}

// Copies a called executable's results into the step's result buffers.
void CopyResults(const CpuExecutable& from, const std::vector<int64_t>& sizes, void* const* to) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > 0 && to[i] != from.output_leaf(i)) std::memcpy(to[i], from.output_leaf(i), sizes[i]);
  }
}

// The state lives in the while's result buffers. Each trip runs the
// condition and the body on them, then copies the body's results back. A
// result that is the same state leaf needs no copy; one that is another
// state leaf (the body permutes its state) is staged first, so no copy
// overwrites a leaf still to be read.
class WhileOp : public ControlFlowOp {
 public:
  WhileOp(const Instruction& inst, std::unique_ptr<CpuExecutable> condition,
          std::unique_ptr<CpuExecutable> body)
      : condition_(std::move(condition)),
        body_(std::move(body)),
        sizes_(LeafSizes(inst.shape())),
        trips_(StaticTripCount(inst)) {
    int64_t total = 0;
    for (int64_t size : sizes_) {
      staging_offsets_.push_back(total);
      total += (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    }
    staging_.resize(total + kBufferAlignment);
    staged_.resize(sizes_.size());
  }

  absl::Status Run(void* const* buffers) override {
    const int64_t n = static_cast<int64_t>(sizes_.size());
    void* const* init = buffers;
    void* const* state = buffers + n;
    for (int64_t i = 0; i < n; ++i) {
      if (sizes_[i] > 0) std::memcpy(state[i], init[i], sizes_[i]);
    }
    const absl::Span<const void* const> state_leaves(state, n);
    std::vector<char>& staged = staged_;
    // A count the computations fix (StaticTripCount) needs no condition.
    for (int64_t trip = 0; !trips_ || trip < *trips_; ++trip) {
      if (!trips_) {
        RETURN_IF_ERROR(condition_->Execute(state_leaves));
        if (*static_cast<const uint8_t*>(condition_->output_leaf(0)) == 0) break;
      }
      RETURN_IF_ERROR(body_->Execute(state_leaves));
      std::fill(staged.begin(), staged.end(), 0);
      for (int64_t i = 0; i < n; ++i) {
        const void* result = body_->output_leaf(i);
        if (result == state[i] || sizes_[i] == 0) continue;
        for (int64_t j = 0; j < n; ++j) {
          if (result == state[j]) {
            std::memcpy(staging_.data() + staging_offsets_[i], result, sizes_[i]);
            staged[i] = 1;
            break;
          }
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        const void* result = body_->output_leaf(i);
        if (result == state[i] || sizes_[i] == 0 || staged[i]) continue;
        std::memcpy(state[i], result, sizes_[i]);
      }
      for (int64_t i = 0; i < n; ++i) {
        if (staged[i]) std::memcpy(state[i], staging_.data() + staging_offsets_[i], sizes_[i]);
      }
    }
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return "while"; }
  std::vector<const CpuExecutable*> called() const override {
    return {condition_.get(), body_.get()};
  }

 private:
  std::unique_ptr<CpuExecutable> condition_, body_;
  std::vector<int64_t> sizes_;
  std::optional<int64_t> trips_;
  std::vector<int64_t> staging_offsets_;
  std::vector<uint8_t> staging_;
  std::vector<char> staged_;
};

// conditional (operand 0 selects a branch, operand k+1 is branch k's
// argument) and call (every operand is an argument of the one computation).
class CallOp : public ControlFlowOp {
 public:
  CallOp(const Instruction& inst, std::vector<std::unique_ptr<CpuExecutable>> branches)
      : conditional_(inst.opcode() == Opcode::kConditional),
        branches_(std::move(branches)),
        sizes_(LeafSizes(inst.shape())) {
    int64_t leaves = 0;
    for (const Instruction* operand : inst.operands()) {
      operand_first_leaf_.push_back(leaves);
      operand_leaf_count_.push_back(LeafCount(operand->shape()));
      leaves += operand_leaf_count_.back();
    }
    operand_leaves_ = leaves;
    if (conditional_) {
      selector_type_ = inst.operand(0)->shape().element_type();
    }
  }

  absl::Status Run(void* const* buffers) override {
    int64_t branch = 0;
    absl::Span<void* const> arguments(buffers, operand_leaves_);
    if (conditional_) {
      const void* selector = buffers[0];
      if (selector_type_ == PrimitiveType::kPred) {
        branch = *static_cast<const uint8_t*>(selector) != 0 ? 0 : 1;
      } else {
        int32_t index = 0;
        std::memcpy(&index, selector, sizeof(index));
        branch = index;
        const int64_t count = static_cast<int64_t>(branches_.size());
        if (branch < 0 || branch >= count) branch = count - 1;  // XLA: out of range -> last
      }
      arguments = absl::Span<void* const>(buffers + operand_first_leaf_[branch + 1],
                                          operand_leaf_count_[branch + 1]);
    }
    CpuExecutable& executable = *branches_[branch];
    RETURN_IF_ERROR(executable.Execute(
        absl::Span<const void* const>(arguments.data(), arguments.size())));
    CopyResults(executable, sizes_, buffers + operand_leaves_);
    return absl::OkStatus();
  }
  bool allocates() const override { return false; }
  std::string kind() const override { return conditional_ ? "conditional" : "call"; }
  std::vector<const CpuExecutable*> called() const override {
    std::vector<const CpuExecutable*> out;
    for (const auto& branch : branches_) out.push_back(branch.get());
    return out;
  }

 private:
  bool conditional_;
  std::vector<std::unique_ptr<CpuExecutable>> branches_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> operand_first_leaf_, operand_leaf_count_;
  int64_t operand_leaves_ = 0;
  PrimitiveType selector_type_ = PrimitiveType::kPred;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ControlFlowOp>> MakeControlFlowOp(const Instruction& inst,
                                                                 CpuKernelCompiler& compiler) {
  switch (inst.opcode()) {
    case Opcode::kWhile: {
      if (inst.called_computations().size() != 2 || inst.operand_count() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("while `", inst.name(), "` needs one operand, a condition and a body"));
      }
      ASSIGN_OR_RETURN(auto condition,
                       CpuExecutable::CompileComputation(*inst.while_condition(), compiler));
      ASSIGN_OR_RETURN(auto body, CpuExecutable::CompileComputation(*inst.while_body(), compiler));
      if (condition->output_leaf_count() != 1 ||
          condition->output_leaf_shapes()[0].element_type() != PrimitiveType::kPred ||
          body->output_leaf_count() != LeafCount(inst.shape())) {
        return absl::InvalidArgumentError(
            absl::StrCat("while `", inst.name(), "`: condition or body has the wrong result"));
      }
      return std::unique_ptr<ControlFlowOp>(
          new WhileOp(inst, std::move(condition), std::move(body)));
    }
    case Opcode::kConditional: case Opcode::kCall: {
      const bool conditional = inst.opcode() == Opcode::kConditional;
      const int64_t called = static_cast<int64_t>(inst.called_computations().size());
      if (called == 0 || (conditional && inst.operand_count() != called + 1) ||
          (!conditional && called != 1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            std::string(OpcodeName(inst.opcode())), " `", inst.name(), "` has mismatched computations"));
      }
      if (conditional) {
        const PrimitiveType selector = inst.operand(0)->shape().element_type();
        if (selector != PrimitiveType::kPred && selector != PrimitiveType::kS32) {
          return absl::UnimplementedError(absl::StrCat(
              "not supported: a conditional selector of type ",
              std::string(PrimitiveTypeName(selector)), " in instruction `", inst.name(), "`"));
        }
      }
      std::vector<std::unique_ptr<CpuExecutable>> branches;
      for (const Computation* computation : inst.called_computations()) {
        ASSIGN_OR_RETURN(auto executable, CpuExecutable::CompileComputation(*computation, compiler));
        if (executable->output_leaf_count() != LeafCount(inst.shape())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "`", computation->name(), "` called by `", inst.name(), "` has the wrong result"));
        }
        branches.push_back(std::move(executable));
      }
      return std::unique_ptr<ControlFlowOp>(new CallOp(inst, std::move(branches)));
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("`", inst.name(), "` is not a while, conditional or call"));
  }
}

}  // namespace hlogym

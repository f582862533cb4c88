#include "backend/gpu_control_flow.h"

#ifdef HLOGYM_HAVE_CUDA

#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "backend/buffer_assignment.h"
#include "backend/gpu_executable.h"
#include "backend/while_state.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// Device-to-device copies of leaves on the context's stream (zero-size ones
// skipped; with `only`, the leaves it accepts by index).
absl::Status CopyLeaves(const GpuContext& gpu, absl::Span<const CUdeviceptr> from,
                        absl::Span<const CUdeviceptr> to, absl::Span<const int64_t> bytes,
                        const std::function<bool(size_t)>& only = nullptr) {
  const CudaDriver& d = gpu.driver();
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == 0 || from[i] == to[i] || (only && !only(i))) continue;
    RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoDAsync(to[i], from[i], bytes[i], gpu.stream()),
                            "copying loop state"));
  }
  return absl::OkStatus();
}

}  // namespace

GpuControlFlow::~GpuControlFlow() = default;

absl::StatusOr<std::unique_ptr<GpuControlFlow>> GpuControlFlow::Make(const Instruction& inst,
                                                                     GpuKernelCache& kernels,
                                                                     CpuKernelCompiler& host) {
  std::unique_ptr<GpuControlFlow> flow(new GpuControlFlow());
  flow->opcode_ = inst.opcode();
  for (const Shape& leaf : FlattenLeafShapes(inst.shape())) flow->result_bytes_.push_back(LeafBytes(leaf));
  int64_t leaves = 0;
  for (const Instruction* operand : inst.operands()) {
    flow->operand_first_leaf_.push_back(leaves);
    flow->operand_leaf_count_.push_back(static_cast<int64_t>(FlattenLeafShapes(operand->shape()).size()));
    leaves += flow->operand_leaf_count_.back();
  }
  const int64_t result_leaves = static_cast<int64_t>(flow->result_bytes_.size());
  switch (inst.opcode()) {
    case Opcode::kWhile: {
      if (inst.called_computations().size() != 2 || inst.operand_count() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("while `", inst.name(), "` needs one operand, a condition and a body"));
      }
      ASSIGN_OR_RETURN(auto condition,
                       GpuExecutable::CompileComputation(*inst.while_condition(), kernels, host));
      ASSIGN_OR_RETURN(auto body, GpuExecutable::CompileComputation(*inst.while_body(), kernels, host));
      if (condition->output_leaf_count() != 1 ||
          condition->output_leaf_shape(0).element_type() != PrimitiveType::kPred ||
          body->output_leaf_count() != result_leaves) {
        return absl::InvalidArgumentError(
            absl::StrCat("while `", inst.name(), "`: condition or body has the wrong result"));
      }
      flow->executables_.push_back(std::move(condition));
      flow->executables_.push_back(std::move(body));
      flow->trips_ = StaticTripCount(inst);
      flow->copies_ = PlanWhileStateCopies(inst);
      return flow;
    }
    case Opcode::kConditional: case Opcode::kCall: {
      const bool conditional = inst.opcode() == Opcode::kConditional;
      const int64_t called = static_cast<int64_t>(inst.called_computations().size());
      if (called == 0 || (conditional && inst.operand_count() != called + 1) ||
          (!conditional && called != 1)) {
        return absl::InvalidArgumentError(absl::StrCat(std::string(OpcodeName(inst.opcode())),
                                                       " `", inst.name(),
                                                       "` has mismatched computations"));
      }
      if (conditional) {
        flow->selector_type_ = inst.operand(0)->shape().element_type();
        if (flow->selector_type_ != PrimitiveType::kPred && flow->selector_type_ != PrimitiveType::kS32) {
          return absl::UnimplementedError(absl::StrCat(
              "not supported: a conditional selector of type ",
              std::string(PrimitiveTypeName(flow->selector_type_)), " in instruction `", inst.name(), "`"));
        }
      }
      for (const Computation* computation : inst.called_computations()) {
        ASSIGN_OR_RETURN(auto executable, GpuExecutable::CompileComputation(*computation, kernels, host));
        if (executable->output_leaf_count() != result_leaves) {
          return absl::InvalidArgumentError(absl::StrCat(
              "`", computation->name(), "` called by `", inst.name(), "` has the wrong result"));
        }
        flow->executables_.push_back(std::move(executable));
      }
      return flow;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("`", inst.name(), "` is not a while, conditional or call"));
  }
}

std::vector<const GpuExecutable*> GpuControlFlow::called() const {
  std::vector<const GpuExecutable*> out;
  for (const auto& e : executables_) out.push_back(e.get());
  return out;
}

absl::Status GpuControlFlow::Run(absl::Span<const CUdeviceptr> operands,
                                 absl::Span<const CUdeviceptr> results) {
  if (opcode_ == Opcode::kWhile) return RunWhile(operands, results);
  if (opcode_ == Opcode::kCall) return RunBranch(0, operands, results);
  // conditional: operand 0 selects the branch.
  const GpuContext& gpu = executables_[0]->gpu();
  const CudaDriver& d = gpu.driver();
  int32_t selector = 0;
  const size_t size = selector_type_ == PrimitiveType::kPred ? 1 : 4;
  RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoHAsync(&selector, operands[0], size, gpu.stream()),
                          "reading a conditional's selector"));
  RETURN_IF_ERROR(d.Check(d.cuStreamSynchronize(gpu.stream()), "reading a conditional's selector"));
  const int64_t count = static_cast<int64_t>(executables_.size());
  int64_t branch = 0;
  if (selector_type_ == PrimitiveType::kPred) {
    branch = (selector & 0xff) != 0 ? 0 : 1;
  } else {
    branch = selector < 0 || selector >= count ? count - 1 : selector;  // XLA: out of range -> last
  }
  return RunBranch(branch, operands.subspan(operand_first_leaf_[branch + 1], operand_leaf_count_[branch + 1]),
                   results);
}

absl::Status GpuControlFlow::RunBranch(int64_t branch, absl::Span<const CUdeviceptr> arguments,
                                       absl::Span<const CUdeviceptr> results) {
  GpuExecutable& e = *executables_[branch];
  const GpuContext& gpu = e.gpu();
  RETURN_IF_ERROR(CopyLeaves(gpu, arguments, e.parameter_leaves(), e.parameter_leaf_bytes()));
  RETURN_IF_ERROR(e.Enqueue());
  return CopyLeaves(gpu, e.output_leaves(), results, result_bytes_);
}

absl::Status GpuControlFlow::RunWhile(absl::Span<const CUdeviceptr> operands,
                                      absl::Span<const CUdeviceptr> results) {
  GpuExecutable& condition = *executables_[0];
  GpuExecutable& body = *executables_[1];
  const GpuContext& gpu = body.gpu();
  const CudaDriver& d = gpu.driver();
  RETURN_IF_ERROR(CopyLeaves(gpu, operands, results, result_bytes_));
  // What the body passes through never changes: copied in once
  // (PlanWhileStateCopies), and never back.
  const std::vector<bool>& forwarded = copies_.body_forwards;
  const std::vector<bool>& read = copies_.condition_reads;
  auto fixed = [&](size_t i) { return bool(forwarded[i]); };
  auto changing = [&](size_t i) { return !forwarded[i]; };
  RETURN_IF_ERROR(CopyLeaves(gpu, results, condition.parameter_leaves(),
                             condition.parameter_leaf_bytes(),
                             [&](size_t i) { return read[i] && forwarded[i]; }));
  RETURN_IF_ERROR(
      CopyLeaves(gpu, results, body.parameter_leaves(), body.parameter_leaf_bytes(), fixed));
  // A count the computations fix (StaticTripCount) needs no condition: the
  // trips are enqueued without reading a predicate back and waiting.
  for (int64_t trip = 0; !trips_ || trip < *trips_; ++trip) {
    if (!trips_) {
      RETURN_IF_ERROR(CopyLeaves(gpu, results, condition.parameter_leaves(),
                                 condition.parameter_leaf_bytes(),
                                 [&](size_t i) { return read[i] && !forwarded[i]; }));
      RETURN_IF_ERROR(condition.Enqueue());
      uint8_t go = 0;
      RETURN_IF_ERROR(d.Check(
          d.cuMemcpyDtoHAsync(&go, condition.output_leaves()[0], 1, gpu.stream()),
          "reading a while condition"));
      RETURN_IF_ERROR(d.Check(d.cuStreamSynchronize(gpu.stream()), "running a while condition"));
      if (go == 0) return absl::OkStatus();
    }
    RETURN_IF_ERROR(CopyLeaves(gpu, results, body.parameter_leaves(), body.parameter_leaf_bytes(),
                               changing));
    RETURN_IF_ERROR(body.Enqueue());
    RETURN_IF_ERROR(CopyLeaves(gpu, body.output_leaves(), results, result_bytes_, changing));
  }
  return absl::OkStatus();
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

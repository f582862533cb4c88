#include "backend/gpu_executable.h"

#ifdef HLOGYM_HAVE_CUDA

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "backend/cpu_executable.h"
#include "backend/cublas_library.h"
#include "backend/gpu_control_flow.h"
#include "backend/gpu_fault_kernel.h"
#include "backend/gpu_lowering.h"
#include "backend/host_ops.h"
#include "backend/host_ops_util.h"
#include "backend/kernel_plan.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

void FlattenArgument(const Literal& literal, std::vector<const Literal*>& out) {
  if (literal.is_tuple()) {
    for (const Literal& element : literal.tuple_elements()) FlattenArgument(element, out);
    return;
  }
  out.push_back(&literal);
}

std::vector<int64_t> Concat(std::vector<int64_t> a, absl::Span<const int64_t> b,
                            absl::Span<const int64_t> c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

// A dot cuBLAS runs in place: its operands' dims are already (batch, rows,
// cols) or (batch, cols, rows), and its types are ones cuBLAS takes.
struct GemmPlan {
  cudaDataType a_type, b_type, c_type;
  bool f64 = false;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool a_transposed = false, b_transposed = false;
};

bool CudaType(PrimitiveType t, cudaDataType& out) {
  switch (t) {
    case PrimitiveType::kF32: out = CUDA_R_32F; return true;
    case PrimitiveType::kF64: out = CUDA_R_64F; return true;
    case PrimitiveType::kF16: out = CUDA_R_16F; return true;
    case PrimitiveType::kBF16: out = CUDA_R_16BF; return true;
    default: return false;
  }
}

std::optional<GemmPlan> PlanGemm(const Instruction& dot) {
  if (dot.operand_count() != 2 || !dot.shape().IsArray() || !dot.has_attrs<DotAttrs>()) return {};
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray()) return {};
  GemmPlan plan;
  if (!CudaType(lhs.element_type(), plan.a_type) || !CudaType(rhs.element_type(), plan.b_type) ||
      !CudaType(dot.shape().element_type(), plan.c_type) || plan.a_type != plan.b_type) {
    return {};
  }
  plan.f64 = plan.a_type == CUDA_R_64F;
  if (plan.f64 != (plan.c_type == CUDA_R_64F)) return {};
  // cuBLAS takes a narrow C only with A and B of the same type.
  if ((plan.c_type == CUDA_R_16F || plan.c_type == CUDA_R_16BF) && plan.c_type != plan.a_type) {
    return {};
  }
  const DotDimensions& dd = dot.attrs<DotAttrs>().dims;
  if (dd.lhs_batch.size() != dd.rhs_batch.size() ||
      dd.lhs_contracting.size() != dd.rhs_contracting.size()) {
    return {};
  }
  const std::vector<int64_t> lhs_free = FreeDims(lhs.rank(), dd.lhs_batch, dd.lhs_contracting);
  const std::vector<int64_t> rhs_free = FreeDims(rhs.rank(), dd.rhs_batch, dd.rhs_contracting);
  auto size = [](const Shape& s, absl::Span<const int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= s.dim(d);
    return n;
  };
  plan.batch = size(lhs, dd.lhs_batch);
  plan.m = size(lhs, lhs_free);
  plan.k = size(lhs, dd.lhs_contracting);
  plan.n = size(rhs, rhs_free);
  const std::vector<int64_t> lb(dd.lhs_batch.begin(), dd.lhs_batch.end());
  const std::vector<int64_t> rb(dd.rhs_batch.begin(), dd.rhs_batch.end());
  if (IsInOrder(Concat(lb, lhs_free, dd.lhs_contracting))) {
    plan.a_transposed = false;
  } else if (IsInOrder(Concat(lb, dd.lhs_contracting, lhs_free))) {
    plan.a_transposed = true;
  } else {
    return {};
  }
  if (IsInOrder(Concat(rb, dd.rhs_contracting, rhs_free))) {
    plan.b_transposed = false;
  } else if (IsInOrder(Concat(rb, rhs_free, dd.rhs_contracting))) {
    plan.b_transposed = true;
  } else {
    return {};
  }
  constexpr int64_t kIntMax = 2147483647;
  if (plan.m > kIntMax || plan.n > kIntMax || plan.k > kIntMax || plan.batch > kIntMax) return {};
  return plan;
}

struct HostBuffer {
  int64_t buffer = 0;  // buffer id
  int64_t bytes = 0;
  void* host = nullptr;
};

}  // namespace

struct GpuExecutable::Step {
  enum class Kind { kKernel, kGemm, kHost, kControlFlow } kind = Kind::kKernel;
  const Instruction* instruction = nullptr;
  std::vector<int64_t> buffers;  // operand leaves, then result leaves
  // kKernel
  std::shared_ptr<const LoadedGpuKernel> kernel;
  std::vector<CUdeviceptr> args;
  std::vector<void*> arg_pointers;
  CUdeviceptr copy_from = 0, copy_to = 0;  // copied before the launch
  int64_t copy_bytes = 0;
  // kGemm
  GemmPlan gemm;
  // kControlFlow
  std::unique_ptr<GpuControlFlow> control;
  std::vector<CUdeviceptr> operand_pointers, result_pointers;
  // kHost: staging copies of every buffer, 64-byte aligned.
  std::unique_ptr<HostOp> host;
  std::vector<HostBuffer> staged;
  std::vector<void*> host_pointers;
  int64_t operand_leaves = 0;
  ~Step() {
    for (HostBuffer& h : staged) std::free(h.host);
  }
};

GpuExecutable::GpuExecutable(const GpuContext& gpu) : gpu_(gpu) {}

GpuExecutable::~GpuExecutable() {
  if (gpu_.MakeCurrent().ok()) {
    gpu_.Synchronize().IgnoreError();
    if (start_ != nullptr) gpu_.driver().cuEventDestroy(start_);
    if (stop_ != nullptr) gpu_.driver().cuEventDestroy(stop_);
  }
}

absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Compile(const Module& module,
                                                                      GpuKernelCache& kernels,
                                                                      CpuKernelCompiler& host) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Module> lowered, LowerForGpu(module));
  const Module& program = lowered != nullptr ? *lowered : module;
  ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> executable,
                   CompileComputation(*program.entry(), kernels, host));
  executable->lowered_ = std::move(lowered);
  return executable;
}

absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::CompileComputation(
    const Computation& computation, GpuKernelCache& kernels, CpuKernelCompiler& host) {
  ASSIGN_OR_RETURN(GpuContext * gpu, GpuContext::Get());
  std::unique_ptr<GpuExecutable> executable(new GpuExecutable(*gpu));
  RETURN_IF_ERROR(executable->Build(computation, kernels, host));
  return executable;
}

absl::StatusOr<std::unique_ptr<GpuExecutable::Step>> GpuExecutable::MakeStep(
    const Instruction& inst, GpuKernelCache& kernels, CpuKernelCompiler& host) {
  auto step = std::make_unique<Step>();
  step->instruction = &inst;
  for (const Instruction* operand : inst.operands()) {
    for (int64_t id : assignment_.leaves(operand)) step->buffers.push_back(id);
  }
  step->operand_leaves = static_cast<int64_t>(step->buffers.size());
  for (int64_t id : assignment_.leaves(&inst)) step->buffers.push_back(id);
  const Opcode op = inst.opcode();
  if (op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall) {
    ++stats_.control_flow_count;
    step->kind = Step::Kind::kControlFlow;
    ASSIGN_OR_RETURN(step->control, GpuControlFlow::Make(inst, kernels, host));
    for (int64_t i = 0; i < static_cast<int64_t>(step->buffers.size()); ++i) {
      (i < step->operand_leaves ? step->operand_pointers : step->result_pointers)
          .push_back(slots_[step->buffers[i]]);
    }
    for (const GpuExecutable* called : step->control->called()) {
      stats_.total_gpu_kernel_count += called->stats().total_gpu_kernel_count;
      stats_.total_host_op_count += called->stats().total_host_op_count;
      if (stats_.first_host_op.empty()) stats_.first_host_op = called->stats().first_host_op;
    }
    return step;
  }
  ++stats_.kernel_count;
  if (FaultInjectionKind(inst) == "illegal_address") {
    ASSIGN_OR_RETURN(step->kernel, LoadPtxKernel(gpu_, kIllegalAddressKernelPtx,
                                                 kIllegalAddressKernelName, inst.name()));
    step->kind = Step::Kind::kKernel;  // no arguments: arg_pointers stays empty
    ++stats_.gpu_kernel_count;
    ++stats_.total_gpu_kernel_count;
    return step;
  }
  std::string why_host;
  if (IsGpuKernel(inst)) {
    absl::StatusOr<std::shared_ptr<const LoadedGpuKernel>> kernel = kernels.Get(inst);
    if (kernel.ok()) {
      step->kind = Step::Kind::kKernel;
      step->kernel = *kernel;
      for (int64_t id : step->buffers) step->args.push_back(slots_[id]);
      for (CUdeviceptr& a : step->args) step->arg_pointers.push_back(&a);
      if (IsGpuScatter(inst)) {
        // The kernel combines updates into the result, which starts as the
        // operand.
        step->copy_from = slots_[step->buffers[0]];
        step->copy_to = slots_[step->buffers[3]];
        step->copy_bytes = LeafBytes(inst.shape());
      }
      ++stats_.gpu_kernel_count;
      ++stats_.total_gpu_kernel_count;
      return step;
    }
    why_host = std::string(kernel.status().message());
  }
  if (op == Opcode::kDot) {
    if (std::optional<GemmPlan> plan = PlanGemm(inst)) {
      ASSIGN_OR_RETURN(CublasLibrary * cublas, CublasLibrary::Get(gpu_));
      (void)cublas;
      step->kind = Step::Kind::kGemm;
      step->gemm = *plan;
      ++stats_.cublas_count;
      return step;
    }
    why_host = "operand layout or types cuBLAS does not take in place";
  }
  // On the host, through the CPU backend's ops.
  step->kind = Step::Kind::kHost;
  if (op == Opcode::kConvolution) {
    step->host = MakeIm2colConvolution(inst);
  } else if (op == Opcode::kDot) {
    step->host = MakeBlasDot(inst);
  }
  // The CPU target's own kernels for sort, topk, scan, scatter and
  // select-and-scatter before the interpreter's, which copies through
  // Literals (cnn_mnist, its select-and-scatter on the interpreter, took
  // 346 ms on the H100 against XLA's 0.24 ms).
  if (step->host == nullptr) step->host = MakeNativeHostOp(inst);
  if (step->host == nullptr) {
    ASSIGN_OR_RETURN(step->host, MakeInterpreterOp(inst));
  }
  for (int64_t id : step->buffers) {
    HostBuffer h;
    h.buffer = id;
    h.bytes = assignment_.buffer(id).size;
    const size_t rounded = static_cast<size_t>((std::max<int64_t>(h.bytes, 1) + 63) / 64 * 64);
    h.host = std::aligned_alloc(64, rounded);
    if (h.host == nullptr) return absl::ResourceExhaustedError("host staging allocation failed");
    std::memset(h.host, 0, rounded);
    step->staged.push_back(h);
    step->host_pointers.push_back(h.host);
  }
  ++stats_.host_op_count;
  ++stats_.total_host_op_count;
  if (stats_.first_host_op.empty()) {
    stats_.first_host_op = absl::StrCat(std::string(OpcodeName(op)), " (", inst.name(), ")",
                                        why_host.empty() ? "" : ": ", why_host);
  }
  return step;
}

absl::Status GpuExecutable::Build(const Computation& computation, GpuKernelCache& kernels,
                                  CpuKernelCompiler& host) {
  RETURN_IF_ERROR(gpu_.MakeCurrent());
  const CudaDriver& d = gpu_.driver();
  RETURN_IF_ERROR(d.Check(d.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate"));
  RETURN_IF_ERROR(d.Check(d.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate"));
  const std::vector<Instruction*> schedule = computation.MakePostOrder();
  ASSIGN_OR_RETURN(assignment_, BufferAssignment::Assign(computation, schedule));
  stats_.arena_bytes = assignment_.arena_bytes();
  ASSIGN_OR_RETURN(arena_, DeviceBuffer::Allocate(gpu_, assignment_.arena_bytes()));
  slots_.assign(assignment_.buffer_count(), 0);
  parameter_buffers_.assign(assignment_.parameter_leaf_count(), -1);
  for (int64_t id = 0; id < assignment_.buffer_count(); ++id) {
    const LogicalBuffer& b = assignment_.buffer(id);
    if (b.kind == LogicalBuffer::Kind::kTemp) slots_[id] = arena_.get() + b.offset;
    if (b.kind == LogicalBuffer::Kind::kParameter) parameter_buffers_[b.parameter_leaf] = id;
  }
  for (int64_t p = 0; p < computation.parameter_count(); ++p) {
    for (const Shape& leaf : FlattenLeafShapes(computation.parameter(p)->shape())) {
      parameter_shapes_.push_back(leaf);
    }
  }
  for (size_t i = 0; i < parameter_shapes_.size(); ++i) {
    ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(gpu_, LeafBytes(parameter_shapes_[i])));
    stats_.parameter_bytes += buffer.size();
    if (parameter_buffers_[i] >= 0) slots_[parameter_buffers_[i]] = buffer.get();
    parameters_.push_back(std::move(buffer));
  }
  for (const Instruction* inst : schedule) {
    if (inst->opcode() == Opcode::kConstant) {
      if (inst->literal().is_elided()) {
        return absl::UnimplementedError(
            absl::StrCat("not supported: a constant whose values were elided as {...} in "
                         "instruction `", inst->name(), "`"));
      }
      std::vector<const Literal*> leaves;
      FlattenArgument(inst->literal(), leaves);
      const absl::Span<const int64_t> ids = assignment_.leaves(inst);
      for (size_t i = 0; i < leaves.size() && i < ids.size(); ++i) {
        ASSIGN_OR_RETURN(DeviceBuffer buffer,
                         DeviceBuffer::Allocate(gpu_, static_cast<int64_t>(leaves[i]->raw_size())));
        if (leaves[i]->raw_size() > 0) {
          RETURN_IF_ERROR(d.Check(d.cuMemcpyHtoD(buffer.get(), leaves[i]->raw_data(), leaves[i]->raw_size()),
                                  "uploading a constant"));
        }
        stats_.constant_bytes += buffer.size();
        slots_[ids[i]] = buffer.get();
        constants_.push_back(std::move(buffer));
      }
      continue;
    }
    if (IsBufferAlias(*inst) || inst->opcode() == Opcode::kAfterAll) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<Step> step, MakeStep(*inst, kernels, host));
    steps_.push_back(std::move(step));
  }
  const absl::Span<const int64_t> root = assignment_.leaves(computation.root());
  output_buffers_.assign(root.begin(), root.end());
  output_shapes_ = FlattenLeafShapes(computation.root()->shape());
  for (int64_t id : output_buffers_) output_pointers_.push_back(slots_[id]);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    parameter_pointers_.push_back(parameters_[i].get());
    parameter_bytes_.push_back(LeafBytes(parameter_shapes_[i]));
  }
  return absl::OkStatus();
}

absl::Status GpuExecutable::SetArguments(absl::Span<const Literal> arguments) {
  std::vector<const Literal*> leaves;
  for (const Literal& argument : arguments) FlattenArgument(argument, leaves);
  if (leaves.size() != parameter_shapes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the executable takes ",
                                                   parameter_shapes_.size(),
                                                   " parameter leaves, got ", leaves.size()));
  }
  RETURN_IF_ERROR(gpu_.MakeCurrent());
  const CudaDriver& d = gpu_.driver();
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i]->shape().Compatible(parameter_shapes_[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument leaf ", i, " has shape ", leaves[i]->shape().ToString(false),
          " but the parameter leaf is ", parameter_shapes_[i].ToString(false)));
    }
    if (leaves[i]->raw_size() == 0) continue;
    RETURN_IF_ERROR(d.Check(d.cuMemcpyHtoD(parameters_[i].get(), leaves[i]->raw_data(),
                                           leaves[i]->raw_size()),
                            "uploading an argument"));
  }
  return absl::OkStatus();
}

absl::Status GpuExecutable::RunStep(Step& step) {
  const CudaDriver& d = gpu_.driver();
  CUstream stream = gpu_.stream();
  switch (step.kind) {
    case Step::Kind::kKernel: {
      if (step.copy_bytes > 0) {
        RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoDAsync(step.copy_to, step.copy_from, step.copy_bytes, stream),
                                "copying a scatter's operand"));
      }
      const GpuLaunch& launch = step.kernel->launch;
      return d.Check(d.cuLaunchKernel(step.kernel->function, static_cast<unsigned>(launch.blocks), 1, 1,
                                      static_cast<unsigned>(launch.threads), 1, 1, 0, stream,
                                      step.arg_pointers.data(), nullptr),
                     absl::StrCat("launching the kernel of `", step.instruction->name(), "`"));
    }
    case Step::Kind::kGemm: {
      ASSIGN_OR_RETURN(CublasLibrary * cublas, CublasLibrary::Get(gpu_));
      const GemmPlan& g = step.gemm;
      return cublas->Gemm(g.a_type, g.b_type, g.c_type, g.f64, g.batch, g.m, g.n, g.k,
                          g.a_transposed, g.b_transposed, slots_[step.buffers[0]],
                          slots_[step.buffers[1]], slots_[step.buffers[2]]);
    }
    case Step::Kind::kHost: {
      for (int64_t i = 0; i < step.operand_leaves; ++i) {
        const HostBuffer& h = step.staged[i];
        if (h.bytes == 0) continue;
        RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoHAsync(h.host, slots_[h.buffer], h.bytes, stream),
                                "copying a host op's operand"));
      }
      RETURN_IF_ERROR(d.Check(d.cuStreamSynchronize(stream), "cuStreamSynchronize"));
      RETURN_IF_ERROR(step.host->Run(step.host_pointers.data()));
      for (size_t i = step.operand_leaves; i < step.staged.size(); ++i) {
        const HostBuffer& h = step.staged[i];
        if (h.bytes == 0) continue;
        RETURN_IF_ERROR(d.Check(d.cuMemcpyHtoDAsync(slots_[h.buffer], h.host, h.bytes, stream),
                                "copying a host op's result"));
      }
      // The staging buffers are reused by the next run.
      return d.Check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    case Step::Kind::kControlFlow:
      return step.control->Run(step.operand_pointers, step.result_pointers);
  }
  return absl::InternalError("unknown step kind");
}

absl::Status GpuExecutable::Enqueue() {
  RETURN_IF_ERROR(gpu_.MakeCurrent());
  for (const std::unique_ptr<Step>& step : steps_) RETURN_IF_ERROR(RunStep(*step));
  return absl::OkStatus();
}

absl::Status GpuExecutable::Execute() {
  RETURN_IF_ERROR(Enqueue());
  return gpu_.driver().Check(gpu_.driver().cuStreamSynchronize(gpu_.stream()),
                             "running the executable");
}

absl::StatusOr<double> GpuExecutable::ExecuteTimed() {
  RETURN_IF_ERROR(gpu_.MakeCurrent());
  const CudaDriver& d = gpu_.driver();
  RETURN_IF_ERROR(d.Check(d.cuEventRecord(start_, gpu_.stream()), "cuEventRecord"));
  RETURN_IF_ERROR(Enqueue());
  RETURN_IF_ERROR(d.Check(d.cuEventRecord(stop_, gpu_.stream()), "cuEventRecord"));
  RETURN_IF_ERROR(d.Check(d.cuEventSynchronize(stop_), "running the executable"));
  float ms = 0;
  RETURN_IF_ERROR(d.Check(d.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime"));
  return static_cast<double>(ms) * 1e-3;
}

absl::StatusOr<std::vector<Literal>> GpuExecutable::ReadOutputs() const {
  RETURN_IF_ERROR(gpu_.MakeCurrent());
  const CudaDriver& d = gpu_.driver();
  std::vector<Literal> outputs;
  outputs.reserve(output_shapes_.size());
  for (size_t i = 0; i < output_shapes_.size(); ++i) {
    outputs.emplace_back(output_shapes_[i]);
    Literal& out = outputs.back();
    if (out.raw_size() == 0) continue;
    RETURN_IF_ERROR(d.Check(d.cuMemcpyDtoH(out.raw_data(), slots_[output_buffers_[i]], out.raw_size()),
                            "reading an output"));
  }
  return outputs;
}

absl::StatusOr<std::vector<Literal>> GpuExecutable::Run(absl::Span<const Literal> arguments) {
  RETURN_IF_ERROR(SetArguments(arguments));
  RETURN_IF_ERROR(Execute());
  return ReadOutputs();
}

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

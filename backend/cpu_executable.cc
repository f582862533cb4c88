#include "backend/cpu_executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

#include "absl/strings/str_cat.h"
#include "backend/cpu_split_reduce.h"
#include "core/base/parallel.h"
#include "core/base/status_macros.h"

namespace hlogym {
namespace {

// Whether MakeStep asks the kernel compiler for `inst` (after control flow
// and the im2col convolution, which it tries first).
bool TakesAnLlvmKernel(const Instruction& inst) {
  bool array_operands = inst.shape().IsArray() || inst.shape().IsTuple();
  for (const Instruction* operand : inst.operands()) array_operands &= operand->shape().IsArray();
  return array_operands && CpuKernelCompiler::CanCompile(inst);
}

// Arenas from this size on are mapped rather than allocated and zeroed.
constexpr int64_t kMappedArenaBytes = int64_t{1} << 20;

uint8_t* AllocateAligned(int64_t bytes) {
  const size_t size = static_cast<size_t>(
      (std::max<int64_t>(bytes, 1) + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment);
  auto* memory = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, size));
  if (memory != nullptr) std::memset(memory, 0, size);
  return memory;
}

void CopyLeaves(const Literal& literal, std::vector<uint8_t*>& storage, int64_t& bytes,
                std::vector<void*>& addresses) {
  if (literal.is_tuple()) {
    for (const Literal& element : literal.tuple_elements()) {
      CopyLeaves(element, storage, bytes, addresses);
    }
    return;
  }
  uint8_t* memory = AllocateAligned(static_cast<int64_t>(literal.raw_size()));
  if (literal.raw_size() > 0) std::memcpy(memory, literal.raw_data(), literal.raw_size());
  storage.push_back(memory);
  bytes += static_cast<int64_t>(literal.raw_size());
  addresses.push_back(memory);
}

}  // namespace

struct CpuExecutable::Step {
  const Instruction* instruction = nullptr;
  std::vector<int64_t> buffers;  // operand leaves, then result leaves
  std::vector<void*> pointers;   // their addresses, refreshed each run
  bool jit = false;
  CpuKernel kernel;
  // The kernel's scratch buffers (their addresses follow the buffers' in
  // `pointers`), allocated with the step.
  std::vector<double> scratch;
  std::unique_ptr<HostOp> host;
};

CpuExecutable::CpuExecutable() = default;

CpuExecutable::~CpuExecutable() {
  if (arena_mapped_bytes_ > 0) {
    munmap(arena_, arena_mapped_bytes_);
  } else {
    std::free(arena_);
  }
  for (uint8_t* constant : constants_) std::free(constant);
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::Compile(
    const Module& module, CpuKernelCompiler& compiler) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  return CompileComputation(*module.entry(), compiler);
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::CompileComputation(
    const Computation& computation, CpuKernelCompiler& compiler) {
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  RETURN_IF_ERROR(executable->Build(computation, compiler));
  return executable;
}

namespace {

// Gives a step's kernel its scratch buffers, 64-byte aligned, after the
// buffers' addresses in `pointers`.
void AllocateScratchFor(std::vector<double>& scratch, std::vector<void*>& pointers,
                        const std::vector<int64_t>& doubles) {
  constexpr int64_t kAlign = 8;  // doubles per 64 bytes
  int64_t total = kAlign;
  for (int64_t n : doubles) total += (n + kAlign - 1) / kAlign * kAlign;
  scratch.assign(total, 0.0);
  const auto address = reinterpret_cast<uintptr_t>(scratch.data());
  int64_t offset = static_cast<int64_t>((64 - address % 64) % 64) / 8;
  for (int64_t n : doubles) {
    pointers.push_back(scratch.data() + offset);
    offset += (n + kAlign - 1) / kAlign * kAlign;
  }
}

}  // namespace

void CpuExecutable::AllocateScratch(Step& step) {
  if (step.kernel.scratch_doubles.empty()) return;
  AllocateScratchFor(step.scratch, step.pointers, step.kernel.scratch_doubles);
}

absl::StatusOr<std::unique_ptr<CpuExecutable::Step>> CpuExecutable::MakeStep(
    const Instruction& inst, CpuKernelCompiler& compiler) {
  auto step = std::make_unique<Step>();
  step->instruction = &inst;
  for (const Instruction* operand : inst.operands()) {
    for (int64_t id : assignment_.leaves(operand)) step->buffers.push_back(id);
  }
  for (int64_t id : assignment_.leaves(&inst)) step->buffers.push_back(id);
  step->pointers.resize(step->buffers.size());

  const Opcode op = inst.opcode();
  if (op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall) {
    ASSIGN_OR_RETURN(std::unique_ptr<ControlFlowOp> control, MakeControlFlowOp(inst, compiler));
    ++stats_.control_flow_count;
    for (const CpuExecutable* called : control->called()) {
      const CpuExecutableStats& s = called->stats();
      stats_.total_kernel_count += s.total_kernel_count;
      stats_.total_interpreter_op_count += s.total_interpreter_op_count;
      stats_.interpreter_ops.insert(stats_.interpreter_ops.end(), s.interpreter_ops.begin(),
                                    s.interpreter_ops.end());
      stats_.arena_bytes += s.arena_bytes;
      stats_.unshared_bytes += s.unshared_bytes;
      stats_.constant_bytes += s.constant_bytes;
      stats_.jit_fallback_count += s.jit_fallback_count;
      if (stats_.first_jit_failure.empty()) stats_.first_jit_failure = s.first_jit_failure;
    }
    step->host = std::move(control);
    return step;
  }

  ++stats_.kernel_count;
  ++stats_.total_kernel_count;
  // On the CPU im2col + GEMM beats the elemental convolution by far.
  if (op == Opcode::kConvolution) {
    if ((step->host = MakeIm2colConvolution(inst)) != nullptr) {
      ++stats_.blas_op_count;
      return step;
    }
  }
  if (TakesAnLlvmKernel(inst)) {
    absl::StatusOr<CpuKernel> kernel = compiler.Compile(inst);
    if (kernel.ok()) {
      step->jit = true;
      step->kernel = *kernel;
      ++stats_.jit_kernel_count;
      AllocateScratch(*step);
      return step;
    }
    ++stats_.jit_fallback_count;
    if (stats_.first_jit_failure.empty()) stats_.first_jit_failure = kernel.status().ToString();
  }
  if (op == Opcode::kDot) step->host = MakeBlasDot(inst);
  if (op == Opcode::kConvolution) step->host = MakeIm2colConvolution(inst);
  if (step->host != nullptr) {
    ++stats_.blas_op_count;
    return step;
  }
  if ((step->host = MakeNativeHostOp(inst)) != nullptr) {
    ++stats_.native_host_op_count;
    return step;
  }
  ASSIGN_OR_RETURN(step->host, MakeInterpreterOp(inst));
  ++stats_.interpreter_op_count;
  ++stats_.total_interpreter_op_count;
  stats_.interpreter_ops.push_back(
      absl::StrCat(std::string(OpcodeName(op)), " `", inst.name(), "`"));
  return step;
}

absl::Status CpuExecutable::Build(const Computation& computation, CpuKernelCompiler& compiler) {
  const std::vector<Instruction*> schedule = computation.MakePostOrder();
  ASSIGN_OR_RETURN(assignment_, BufferAssignment::Assign(computation, schedule));
  stats_.arena_bytes = assignment_.arena_bytes();
  stats_.unshared_bytes = assignment_.unshared_bytes();
  if (assignment_.arena_bytes() >= kMappedArenaBytes) {
    // Fresh anonymous pages are zero and get touched by the first run (a
    // warm-up), not here: zeroing a 150 MB arena would cost a warm-cache
    // recompile most of its time.
    const size_t size = static_cast<size_t>(assignment_.arena_bytes());
    void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory != MAP_FAILED) {
      arena_ = static_cast<uint8_t*>(memory);
      arena_mapped_bytes_ = size;
    }
  } else {
    arena_ = AllocateAligned(assignment_.arena_bytes());
  }
  if (arena_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", assignment_.arena_bytes(), " bytes for `", computation.name(), "`"));
  }
  slots_.assign(assignment_.buffer_count(), nullptr);
  parameter_buffers_.assign(assignment_.parameter_leaf_count(), -1);
  for (int64_t id = 0; id < assignment_.buffer_count(); ++id) {
    const LogicalBuffer& b = assignment_.buffer(id);
    if (b.kind == LogicalBuffer::Kind::kTemp) slots_[id] = arena_ + b.offset;
    if (b.kind == LogicalBuffer::Kind::kParameter) parameter_buffers_[b.parameter_leaf] = id;
  }
  for (int64_t p = 0; p < computation.parameter_count(); ++p) {
    for (const Shape& leaf : FlattenLeafShapes(computation.parameter(p)->shape())) {
      parameter_shapes_.push_back(leaf);
    }
  }

  // The kernels compile in parallel first (the compiler caches them; a
  // failure recurs below, where it is counted); the steps then find them.
  std::vector<const Instruction*> kernels;
  for (const Instruction* inst : schedule) {
    const Opcode op = inst->opcode();
    if (op != Opcode::kWhile && op != Opcode::kConditional && op != Opcode::kCall &&
        op != Opcode::kConvolution && !IsBufferAlias(*inst) && TakesAnLlvmKernel(*inst)) {
      kernels.push_back(inst);
    }
  }
  if (kernels.size() > 1) {
    ParallelForEach(0, static_cast<int64_t>(kernels.size()),
                    [&](int64_t i) { compiler.Compile(*kernels[i]).IgnoreError(); });
  }

  for (const Instruction* inst : schedule) {
    if (inst->opcode() == Opcode::kConstant) {
      if (inst->literal().is_elided()) {
        return absl::UnimplementedError(
            absl::StrCat("not supported: a constant whose values were elided as {...} in "
                         "instruction `", inst->name(), "`"));
      }
      std::vector<void*> addresses;
      CopyLeaves(inst->literal(), constants_, stats_.constant_bytes, addresses);
      const absl::Span<const int64_t> ids = assignment_.leaves(inst);
      for (size_t i = 0; i < ids.size() && i < addresses.size(); ++i) slots_[ids[i]] = addresses[i];
      continue;
    }
    if (IsBufferAlias(*inst) || inst->opcode() == Opcode::kAfterAll) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<Step> step, MakeStep(*inst, compiler));
    steps_.push_back(std::move(step));
  }

  const absl::Span<const int64_t> root = assignment_.leaves(computation.root());
  output_buffers_.assign(root.begin(), root.end());
  output_shapes_ = FlattenLeafShapes(computation.root()->shape());
  return absl::OkStatus();
}

absl::Status CpuExecutable::BindParameters(absl::Span<const void* const> parameter_leaves) {
  if (parameter_leaves.size() != parameter_buffers_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the executable takes ",
                                                   parameter_buffers_.size(),
                                                   " parameter leaves, got ",
                                                   parameter_leaves.size()));
  }
  for (size_t i = 0; i < parameter_buffers_.size(); ++i) {
    // Unused parameters have no buffer.
    if (parameter_buffers_[i] >= 0) {
      slots_[parameter_buffers_[i]] = const_cast<void*>(parameter_leaves[i]);
    }
  }
  return absl::OkStatus();
}

absl::Status CpuExecutable::RunStep(Step& step) {
  for (size_t i = 0; i < step.buffers.size(); ++i) step.pointers[i] = slots_[step.buffers[i]];
  if (!step.jit) return step.host->Run(step.pointers.data());
  const CpuKernel& k = step.kernel;
  void* const* pointers = step.pointers.data();
  const int64_t grain = std::max<int64_t>(k.grain, 1);
  if (k.parallel_extent <= grain) {
    if (k.parallel_extent > 0) k.fn(pointers, 0, k.parallel_extent);
  } else {
    ParallelFor(0, k.parallel_extent, grain,
                [&](int64_t lo, int64_t hi) { k.fn(pointers, lo, hi); });
  }
  if (!k.split_reductions.empty()) FinishSplitReductions(k, pointers);
  return absl::OkStatus();
}

absl::Status CpuExecutable::Execute(absl::Span<const void* const> parameter_leaves) {
  RETURN_IF_ERROR(BindParameters(parameter_leaves));
  for (const std::unique_ptr<Step>& step : steps_) RETURN_IF_ERROR(RunStep(*step));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CpuExecutable::StepTime>> CpuExecutable::ExecuteProfiled(
    absl::Span<const void* const> parameter_leaves) {
  RETURN_IF_ERROR(BindParameters(parameter_leaves));
  std::vector<StepTime> times;
  for (const std::unique_ptr<Step>& step : steps_) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(RunStep(*step));
    times.push_back(StepTime{step->instruction->name(), step->jit ? "llvm" : step->host->kind(),
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                 .count()});
  }
  return times;
}

const void* CpuExecutable::output_leaf(int64_t i) const { return slots_[output_buffers_[i]]; }

std::vector<Literal> CpuExecutable::ReadOutputs() const {
  std::vector<Literal> outputs;
  outputs.reserve(output_shapes_.size());
  for (size_t i = 0; i < output_shapes_.size(); ++i) {
    outputs.emplace_back(output_shapes_[i]);
    Literal& out = outputs.back();
    if (out.raw_size() > 0) std::memcpy(out.raw_data(), output_leaf(i), out.raw_size());
  }
  return outputs;
}

absl::StatusOr<std::vector<const void*>> CpuExecutable::CheckedLeaves(
    absl::Span<const Literal> arguments) const {
  std::vector<const void*> leaves = LeafData(arguments);
  if (leaves.size() != parameter_shapes_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the executable takes ",
                                                   parameter_shapes_.size(),
                                                   " parameter leaves, got ", leaves.size()));
  }
  std::vector<Shape> argument_shapes;
  for (const Literal& argument : arguments) {
    for (const Shape& leaf : FlattenLeafShapes(argument.shape())) argument_shapes.push_back(leaf);
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!argument_shapes[i].Compatible(parameter_shapes_[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument leaf ", i, " has shape ", argument_shapes[i].ToString(false),
          " but the parameter leaf is ", parameter_shapes_[i].ToString(false)));
    }
  }
  return leaves;
}

absl::StatusOr<std::vector<Literal>> CpuExecutable::Run(absl::Span<const Literal> arguments) {
  ASSIGN_OR_RETURN(const std::vector<const void*> leaves, CheckedLeaves(arguments));
  RETURN_IF_ERROR(Execute(leaves));
  return ReadOutputs();
}

absl::StatusOr<std::vector<CpuExecutable::StepTime>> CpuExecutable::Profile(
    absl::Span<const Literal> arguments, int runs) {
  if (runs < 1) return absl::InvalidArgumentError(absl::StrCat("runs must be >= 1, got ", runs));
  ASSIGN_OR_RETURN(const std::vector<const void*> leaves, CheckedLeaves(arguments));
  RETURN_IF_ERROR(Execute(leaves));  // warm-up: first touches, lazy kernel work
  std::vector<std::vector<StepTime>> samples;
  for (int r = 0; r < runs; ++r) {
    ASSIGN_OR_RETURN(std::vector<StepTime> times, ExecuteProfiled(leaves));
    samples.push_back(std::move(times));
  }
  std::vector<StepTime> median = samples.front();
  std::vector<double> seconds(samples.size());
  for (size_t step = 0; step < median.size(); ++step) {
    for (size_t r = 0; r < samples.size(); ++r) seconds[r] = samples[r][step].seconds;
    std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
    median[step].seconds = seconds[seconds.size() / 2];
  }
  return median;
}

}  // namespace hlogym

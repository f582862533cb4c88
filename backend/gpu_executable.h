// The GPU executable: a module compiled into a fixed list of steps on one
// stream (NVPTX kernels for fusions and elemental ops, cuBLAS for dots) over
// device buffers assigned once at compile time. Instructions with no GPU
// step yet (convolution, sort, scatter, while, ...) run on the host through
// the CPU backend's host ops, their operands copied to the host and their
// results back; the statistics count them. Built only with CUDA.
#pragma once

#ifdef HLOGYM_HAVE_CUDA

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/buffer_assignment.h"
#include "backend/cpu_kernel.h"
#include "backend/gpu_context.h"
#include "backend/gpu_kernel_cache.h"
#include "core/ir/module.h"

namespace hlogym {

struct GpuExecutableStats {
  int64_t kernel_count = 0;   // steps that run code (one per fusion or unfused op)
  int64_t gpu_kernel_count = 0;
  int64_t cublas_count = 0;
  int64_t host_op_count = 0;  // run on the host: operands copied over and back
  int64_t control_flow_count = 0;  // while, conditional, call (driven by the host)
  std::string first_host_op;  // the first such instruction and why
  // Over called computations' executables too (loop bodies, branches).
  int64_t total_gpu_kernel_count = 0;
  int64_t total_host_op_count = 0;
  int64_t arena_bytes = 0;    // temporaries on the device
  int64_t parameter_bytes = 0;
  int64_t constant_bytes = 0;
};

class GpuExecutable {
 public:
  // Compiles the module's entry computation. Kernels come from `kernels`;
  // host steps compile their CPU code with `host` (both must outlive the
  // executable, as must the module).
  static absl::StatusOr<std::unique_ptr<GpuExecutable>> Compile(const Module& module,
                                                                GpuKernelCache& kernels,
                                                                CpuKernelCompiler& host);
  // Compiles one computation (a while body, a branch, ...).
  static absl::StatusOr<std::unique_ptr<GpuExecutable>> CompileComputation(
      const Computation& computation, GpuKernelCache& kernels, CpuKernelCompiler& host);
  ~GpuExecutable();
  GpuExecutable(const GpuExecutable&) = delete;
  GpuExecutable& operator=(const GpuExecutable&) = delete;

  // Uploads the arguments (one per parameter, shapes checked) into the
  // executable's parameter buffers, where they stay for every Execute.
  absl::Status SetArguments(absl::Span<const Literal> arguments);
  // Runs every step on the stream and waits for it.
  absl::Status Execute();
  // Execute timed by CUDA events on the stream: seconds.
  absl::StatusOr<double> ExecuteTimed();
  // The last Execute's results, flattened as EvaluateFlat does.
  absl::StatusOr<std::vector<Literal>> ReadOutputs() const;
  // SetArguments, Execute, ReadOutputs.
  absl::StatusOr<std::vector<Literal>> Run(absl::Span<const Literal> arguments);

  const GpuExecutableStats& stats() const { return stats_; }
  const GpuContext& gpu() const { return gpu_; }

  // For callers that drive executables on the device (control flow): the
  // parameter leaves' buffers (write arguments there), the results' buffers
  // after Enqueue, and Enqueue itself (every step on the stream, no final
  // wait).
  absl::Span<const CUdeviceptr> parameter_leaves() const { return parameter_pointers_; }
  absl::Span<const int64_t> parameter_leaf_bytes() const { return parameter_bytes_; }
  absl::Span<const CUdeviceptr> output_leaves() const { return output_pointers_; }
  int64_t output_leaf_count() const { return static_cast<int64_t>(output_shapes_.size()); }
  const Shape& output_leaf_shape(int64_t i) const { return output_shapes_[i]; }
  absl::Status Enqueue();

 private:
  struct Step;
  explicit GpuExecutable(const GpuContext& gpu);
  absl::Status Build(const Computation& computation, GpuKernelCache& kernels,
                     CpuKernelCompiler& host);
  absl::StatusOr<std::unique_ptr<Step>> MakeStep(const Instruction& instruction,
                                                 GpuKernelCache& kernels, CpuKernelCompiler& host);
  absl::Status RunStep(Step& step);

  const GpuContext& gpu_;
  // The lowered copy the steps point into (LowerForGpu), when Compile made
  // one; declared before the steps so that it outlives them.
  std::unique_ptr<Module> lowered_;
  BufferAssignment assignment_;
  std::vector<CUdeviceptr> slots_;  // buffer id -> device address
  std::vector<int64_t> parameter_buffers_, output_buffers_;
  std::vector<Shape> parameter_shapes_, output_shapes_;
  std::vector<CUdeviceptr> parameter_pointers_, output_pointers_;
  std::vector<int64_t> parameter_bytes_;
  DeviceBuffer arena_;
  std::vector<DeviceBuffer> parameters_, constants_;
  std::vector<std::unique_ptr<Step>> steps_;
  CUevent start_ = nullptr, stop_ = nullptr;
  GpuExecutableStats stats_;
};

}  // namespace hlogym

#endif  // HLOGYM_HAVE_CUDA

// Per-target code generation choices that LLVM reads only from process-wide
// command-line options, read when a target builds its codegen pipeline.
//
// The CPU target compiles without loop strength reduction (-disable-lsr):
// LSR was a quarter to a third of the machine-code time of a kernel, the
// larger part of a warm recompile after one decision, and timing the corpus
// with and without it showed no difference beyond noise for elementwise
// kernels and about 3% for row reductions. The NVPTX target keeps LLVM's
// default (LSR on), unmeasured otherwise on a GPU.
//
// Build a target's codegen pipeline inside its scope: CPU scopes are shared
// (kernels compile in parallel), an NVPTX scope is exclusive and holds the
// NVPTX setting while it lasts.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace hlogym {

class CpuCodegenScope {
 public:
  CpuCodegenScope();
  CpuCodegenScope(const CpuCodegenScope&) = delete;
  CpuCodegenScope& operator=(const CpuCodegenScope&) = delete;

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

class NvptxCodegenScope {
 public:
  NvptxCodegenScope();
  ~NvptxCodegenScope();
  NvptxCodegenScope(const NvptxCodegenScope&) = delete;
  NvptxCodegenScope& operator=(const NvptxCodegenScope&) = delete;

 private:
  std::unique_lock<std::shared_mutex> lock_;
};

// Whether a codegen pipeline built now runs loop strength reduction. Call it
// inside a scope (for tests).
bool CodegenRunsLoopStrengthReduction();

}  // namespace hlogym

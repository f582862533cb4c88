// The analytical cost model: a runtime estimate of a module without running
// it. Each kernel (a fusion, or an unfused instruction that needs one) costs
// max(bytes moved / bandwidth, flops / peak) plus a launch cost, as XLA's GPU
// performance model does in its simplest form. It is the reward source of
// last resort and the greedy agent's lookahead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlogym {

struct DeviceSpec {
  std::string name;
  double bandwidth_bytes_per_s;  // memory bandwidth
  double peak_flops_per_s;       // arithmetic peak (no tensor cores)
  double launch_seconds;         // per-kernel launch/dispatch cost
  // What one element of a transcendental function (exp, log, sin, tanh,
  // pow, ...) costs in flops: a GPU's special function units make it a
  // few; a CPU evaluates a vectorized polynomial and range reduction.
  double transcendental_flops = 16;
  // A kernel that moves at most cache_bytes streams them at
  // cache_bandwidth_bytes_per_s: its arrays stay in the last-level cache
  // between kernels and runs. 0 models no cache.
  double cache_bytes = 0;
  double cache_bandwidth_bytes_per_s = 0;
};

// An NVIDIA H100 SXM: HBM3 about 3.35 TB/s, about 60 TFLOP/s fp32 without
// tensor cores, about 5 us per kernel launch when launches are not pipelined.
DeviceSpec H100Device();
// A generic server CPU core pair (the CI machine's class): about 20 GB/s
// from memory, about 45 GB/s for kernels moving at most 16 MiB (half of a
// 32 MiB L3: a subtract of two f32 arrays streams 44-48 GB/s up to 12 MiB
// and 18-23 GB/s from 24 MiB on, on 2 cores), about 50 GFLOP/s, about 1 us
// per kernel (a function call plus a TBB dispatch), and 45 flops per
// transcendental element: libmvec's AVX2 log and sin take 1.5-1.8 ns per
// element on one core (5-6 cycles), 45 flops at 25 GFLOP/s a core.
// Calibrate() fits real numbers.
DeviceSpec CpuDevice();
// "h100" or "cpu"; anything else is an error listing both.
absl::StatusOr<DeviceSpec> DeviceByName(std::string_view name);

struct KernelCost {
  const Instruction* kernel;
  double bytes;    // read + written
  double flops;    // transcendentals weighted by the device's transcendental_flops
  double seconds;  // max(bytes/bw, flops/peak) + launch
  double transcendentals = 0;  // elements of transcendental functions (in flops)
};

struct CostEstimate {
  double seconds = 0;
  int64_t kernels = 0;
  double bytes = 0;
  double flops = 0;
  double transcendentals = 0;
  std::vector<KernelCost> per_kernel;  // in execution order
};

// One kernel's time on `device`: max(bytes / bandwidth, flops / peak) plus
// the launch cost, at the cache's bandwidth when the bytes fit in it.
double KernelSeconds(double bytes, double flops, const DeviceSpec& device);

// A sum of kernel times in whole femtoseconds. Sums of these do not depend
// on the order of their terms, so a module's estimate is the same number
// whether it is added up over the module in its post-order or over a view of
// a module with alternatives (CostAfterChoices, backend/cost_after_choices.h).
using ExactSeconds = __int128;
ExactSeconds ToExactSeconds(double seconds);
double FromExactSeconds(ExactSeconds total);

// Instructions that move no data of their own (views, tuples, bookkeeping):
// no kernel, no cost.
bool IsCostFree(const Instruction& inst);

// One kernel's cost (a fusion, or an unfused instruction that needs one).
KernelCost EstimateKernel(const Instruction& inst, const DeviceSpec& device);

// What an operand stands for: itself in a plain module; in a view of a module
// with alternatives, the operand the choices pick.
using OperandResolver = absl::FunctionRef<const Instruction*(const Instruction*)>;

// The trip count of a counted loop (a counter compared with a constant
// bound, starting at a constant), or 1 when it cannot be read off the IR.
double TripCount(const Instruction& loop,
                 OperandResolver resolve = [](const Instruction* i) { return i; });
// `repeat` runs of a loop of `trips` trips, saturated far below int64's end.
int64_t RepeatTimes(int64_t repeat, double trips);

// Estimates the entry computation. While loops count their body and
// condition once per iteration when the trip count can be read off the loop
// (a counter compared with a constant, as lax.fori_loop and scan lower to),
// else once. Conditionals count their most expensive branch.
CostEstimate EstimateCost(const Module& module, const DeviceSpec& device);

// One measured kernel for calibration.
struct KernelSample {
  double bytes;
  double flops;
  double seconds;
};

// Fits bandwidth, peak and launch cost to measured kernels (least squares on
// the memory-bound and compute-bound samples). Needs at least 3 samples.
absl::StatusOr<DeviceSpec> Calibrate(const DeviceSpec& initial,
                                     const std::vector<KernelSample>& samples);

}  // namespace hlogym

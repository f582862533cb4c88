#include "backend/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ir/unique_id_index.h"

namespace hlogym {

// Reshape counts as free because every array is row-major here, where XLA
// lowers a reshape to a bitcast.
bool IsCostFree(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kGetTupleElement:
    case Opcode::kTuple: case Opcode::kBitcast: case Opcode::kReshape:
    case Opcode::kAfterAll: case Opcode::kOptimizationBarrier:
    case Opcode::kAlternatives: case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kAddDependency: case Opcode::kDomain:
      return true;
    default:
      return false;
  }
}

namespace {

bool IsTranscendental(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kErf: case Opcode::kPower:
    case Opcode::kSin: case Opcode::kCos: case Opcode::kTan: case Opcode::kAtan2:
    case Opcode::kCbrt: case Opcode::kAcos: case Opcode::kAsin: case Opcode::kAtan:
    case Opcode::kAcosh: case Opcode::kAsinh: case Opcode::kAtanh: case Opcode::kCosh:
    case Opcode::kSinh:
      return true;
    default:
      return false;
  }
}

// Rough cost of one element of an elementwise op, in flops: transcendental
// functions take what the device says.
double FlopsPerElement(Opcode opcode, const DeviceSpec& device) {
  if (IsTranscendental(opcode)) return device.transcendental_flops;
  switch (opcode) {
    case Opcode::kDivide: case Opcode::kRemainder: case Opcode::kSqrt:
    case Opcode::kRsqrt:
      return 4;
    default:
      return 1;
  }
}

double Elements(const Shape& shape) {
  if (shape.IsTuple()) {
    double n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += Elements(s);
    return n;
  }
  return shape.IsArray() ? static_cast<double>(shape.element_count()) : 0;
}

// What one kernel does: bytes read and written, flops (transcendentals
// weighted), transcendental elements.
struct KernelWork {
  double bytes = 0;
  double flops = 0;
  double transcendentals = 0;
};

KernelWork FusionWork(const Instruction& fusion, const DeviceSpec& device);

// The product of the contracting dimensions of a dot's lhs (1 without them).
double ContractingSize(const Instruction& dot) {
  double k = 1;
  if (!dot.has_attrs<DotAttrs>()) return k;
  const Shape& lhs = dot.operand(0)->shape();
  for (int64_t d : dot.attrs<DotAttrs>().dims.lhs_contracting) {
    if (d >= 0 && d < lhs.rank()) k *= lhs.dim(d);
  }
  return k;
}

// How many times one run of `user` evaluates each element of its operand
// `i` per evaluation of each of its own elements, as a factor on the
// operand's element count (see RecomputeFactors).
double OperandReuse(const Instruction& user, int64_t i) {
  const Instruction& operand = *user.operand(i);
  const double in = std::max(1.0, Elements(operand.shape()));
  const double out = std::max(1.0, Elements(user.shape()));
  switch (user.opcode()) {
    case Opcode::kBroadcast: {
      // Loop-invariant code leaves the loops it does not depend on: the
      // operand is computed once per iteration of the loops down to the
      // innermost output dimension it maps to (loops run row-major).
      double outer = 1;
      int64_t innermost = -1;
      for (int64_t d : user.dimensions()) innermost = std::max(innermost, d);
      for (int64_t d = 0; d <= innermost && d < user.shape().rank(); ++d) {
        outer *= static_cast<double>(user.shape().dim(d));
      }
      return outer / in;
    }
    case Opcode::kReduce: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kDynamicUpdateSlice:
    case Opcode::kScatter:
      return 1;  // each operand element feeds one output element
    case Opcode::kReduceWindow: {
      if (!user.has_attrs<WindowAttrs>()) return 1;
      double window = 1;
      for (const WindowDimension& d : user.attrs<WindowAttrs>().window) window *= d.size;
      return window * out / in;
    }
    case Opcode::kDot:
      return ContractingSize(user) * out / in;
    default:
      // One operand element per output element (elementwise ops, transpose,
      // reshape, slices, gathers): a slice computes only its window of the
      // operand, a gather each row as often as it is gathered.
      return out / in;
  }
}

// RecomputeFactors' table: a factor per instruction of one fused
// computation, in a vector indexed by unique id when the computation's ids
// are distinct and dense (as a module hands them out), else hashed by
// address (both give the same factors). A hash map per fusion was ~1% of an
// env step. Instructions of other computations have no factor.
class Factors {
 public:
  explicit Factors(const Computation& fused) : fused_(&fused) {
    const int64_t n = fused.instruction_count();
    if (!IndexByUniqueId(fused.instructions(), 4 * n + 64, kUnset, kMarked, dense_, base_)) {
      map_.reserve(static_cast<size_t>(n));
    }
  }
  // The factor of `inst`, or null when it has none yet.
  const double* Find(const Instruction* inst) const {
    if (dense_.empty()) {
      auto it = map_.find(inst);
      return it == map_.end() ? nullptr : &it->second;
    }
    if (inst->parent() != fused_) return nullptr;
    const int64_t slot = inst->unique_id() - base_;
    if (slot < 0 || slot >= static_cast<int64_t>(dense_.size())) return nullptr;
    const double* f = &dense_[static_cast<size_t>(slot)];
    return *f == kUnset ? nullptr : f;
  }
  // `inst` is one of the fused computation's instructions.
  void Set(const Instruction* inst, double f) {
    if (dense_.empty()) {
      map_[inst] = f;
    } else {
      dense_[static_cast<size_t>(inst->unique_id() - base_)] = f;
    }
  }
  // An instruction the root does not reach is never evaluated.
  double Of(const Instruction* inst) const {
    const double* f = Find(inst);
    return f == nullptr ? 0 : *f;
  }

 private:
  // Factors are never negative.
  static constexpr double kUnset = -1;
  static constexpr double kMarked = -2;
  const Computation* fused_;
  std::vector<double> dense_;
  int64_t base_ = 0;
  absl::flat_hash_map<const Instruction*, double> map_;
};

// For each instruction of a fused computation, how many times the kernel
// evaluates its elements relative to its element count: 1 when each element
// is computed once, more when a fused producer is recomputed (a row-wise
// reduce broadcast along the rows is computed once per row, one broadcast
// along the columns once per element), less when only a slice of it is used.
// A value several users need at the same index is computed once (the
// elemental emitter caches it), so users combine by max, not sum.
Factors RecomputeFactors(const Computation& fused) {
  Factors factor(fused);
  std::vector<Instruction*> order = fused.MakePostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* inst = *it;
    double f = inst == fused.root() ? 1 : 0;
    for (const Instruction* user : inst->users()) {
      const double* found = factor.Find(user);
      if (found == nullptr) continue;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != inst) continue;
        // Scalars that are not elementwise operands (a reduce's init, a
        // pad value, slice indices) are read once.
        const bool scalar_attribute = inst->shape().IsScalar() && !IsElementwise(user->opcode());
        f = std::max(f, scalar_attribute ? 1.0 : *found * OperandReuse(*user, i));
      }
    }
    factor.Set(inst, f);
  }
  return factor;
}

double InstructionFlops(const Instruction& inst, const DeviceSpec& device) {
  const double out = Elements(inst.shape());
  switch (inst.opcode()) {
    case Opcode::kDot:
      return inst.has_attrs<DotAttrs>() ? 2 * out * ContractingSize(inst) : out;
    case Opcode::kConvolution: {
      if (!inst.has_attrs<ConvolutionAttrs>()) return out;
      const auto& a = inst.attrs<ConvolutionAttrs>();
      double window = 1;
      for (const WindowDimension& d : a.window) window *= d.size;
      const Shape& rhs = inst.operand(1)->shape();
      double in_features = a.dims.kernel_input_feature < rhs.rank()
                               ? rhs.dim(a.dims.kernel_input_feature) : 1;
      return 2 * out * window * in_features;
    }
    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kScatter:
    case Opcode::kSelectAndScatter: {
      double in = 0;
      for (const Instruction* operand : inst.operands()) in += Elements(operand->shape());
      return in;
    }
    case Opcode::kSort: {
      double n = Elements(inst.operand(0)->shape());
      return n * std::max(1.0, std::log2(std::max(2.0, n)));
    }
    case Opcode::kFusion:
      return inst.called_computations().empty() ? out
                                                : FusionWork(inst, device).flops;
    default:
      return IsElementwise(inst.opcode()) ? out * FlopsPerElement(inst.opcode(), device) : 0;
  }
}

// Elements of transcendental functions one unfused instruction evaluates.
double Transcendentals(const Instruction& inst) {
  return IsTranscendental(inst.opcode()) ? Elements(inst.shape()) : 0;
}

// A fusion's work, each fused instruction counted as often as the kernel
// evaluates it (RecomputeFactors). A parameter is read as far as the
// kernel needs it (a slice's window), re-reads of it hit the cache.
KernelWork FusionWork(const Instruction& fusion, const DeviceSpec& device) {
  const Computation& fused = *fusion.fused_computation();
  const Factors factor = RecomputeFactors(fused);
  KernelWork work;
  work.bytes = static_cast<double>(fusion.shape().byte_size());
  for (const auto& inst : fused.instructions()) {
    const double f = factor.Of(inst.get());
    if (inst->opcode() == Opcode::kParameter) {
      work.bytes += static_cast<double>(inst->shape().byte_size()) * std::min(1.0, f);
      continue;
    }
    work.flops += InstructionFlops(*inst, device) * f;
    work.transcendentals += Transcendentals(*inst) * f;
  }
  return work;
}

KernelWork UnfusedWork(const Instruction& inst, const DeviceSpec& device) {
  KernelWork work;
  work.flops = InstructionFlops(inst, device);
  work.transcendentals = Transcendentals(inst);
  work.bytes = static_cast<double>(inst.shape().byte_size());
  if (inst.opcode() == Opcode::kDynamicUpdateSlice) {
    // In place: only the update region is read and written.
    work.bytes = 2 * static_cast<double>(inst.operand(1)->shape().byte_size());
    return work;
  }
  const bool windowed = inst.opcode() == Opcode::kSlice ||
                        inst.opcode() == Opcode::kDynamicSlice || inst.opcode() == Opcode::kGather;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    // Slices and gathers read what they produce of their operand 0.
    work.bytes += windowed && i == 0 ? static_cast<double>(inst.shape().byte_size())
                                     : static_cast<double>(inst.operand(i)->shape().byte_size());
  }
  return work;
}

void AddComputation(const Computation& computation, const DeviceSpec& device,
                    int64_t repeat, CostEstimate* estimate, ExactSeconds* total);

void AddKernel(const Instruction& inst, const DeviceSpec& device, int64_t repeat,
               CostEstimate* estimate, ExactSeconds* total) {
  const KernelCost k = EstimateKernel(inst, device);
  estimate->per_kernel.push_back(k);
  const double r = static_cast<double>(repeat);
  estimate->transcendentals += k.transcendentals * r;
  *total += ToExactSeconds(k.seconds) * repeat;
  estimate->bytes += k.bytes * r;
  estimate->flops += k.flops * r;
  estimate->kernels += 1;
}

void AddComputation(const Computation& computation, const DeviceSpec& device,
                    int64_t repeat, CostEstimate* estimate, ExactSeconds* total) {
  for (Instruction* inst : computation.MakePostOrder()) {
    if (IsCostFree(*inst)) continue;
    switch (inst->opcode()) {
      case Opcode::kWhile: {
        const int64_t times = RepeatTimes(repeat, TripCount(*inst));
        if (inst->while_condition()) {
          AddComputation(*inst->while_condition(), device, times, estimate, total);
        }
        if (inst->while_body()) {
          AddComputation(*inst->while_body(), device, times, estimate, total);
        }
        break;
      }
      case Opcode::kCall:
        if (!inst->called_computations().empty()) {
          AddComputation(*inst->to_apply(), device, repeat, estimate, total);
        }
        break;
      case Opcode::kConditional: {
        CostEstimate worst;
        ExactSeconds worst_total = 0;
        for (const Computation* branch : inst->called_computations()) {
          CostEstimate branch_cost;
          ExactSeconds branch_total = 0;
          AddComputation(*branch, device, 1, &branch_cost, &branch_total);
          if (branch_total >= worst_total) {
            worst = std::move(branch_cost);
            worst_total = branch_total;
          }
        }
        const double r = static_cast<double>(repeat);
        *total += worst_total * repeat;
        estimate->bytes += worst.bytes * r;
        estimate->flops += worst.flops * r;
        estimate->transcendentals += worst.transcendentals * r;
        estimate->kernels += worst.kernels;
        for (KernelCost& k : worst.per_kernel) estimate->per_kernel.push_back(k);
        break;
      }
      default:
        AddKernel(*inst, device, repeat, estimate, total);
    }
  }
}

}  // namespace

DeviceSpec H100Device() { return {"h100", 3.35e12, 60e12, 5e-6}; }
DeviceSpec CpuDevice() { return {"cpu", 20e9, 50e9, 1e-6, 45, 16.0 * (1 << 20), 45e9}; }

double KernelSeconds(double bytes, double flops, const DeviceSpec& device) {
  const bool cached = device.cache_bytes > 0 && bytes <= device.cache_bytes;
  const double bandwidth =
      cached ? device.cache_bandwidth_bytes_per_s : device.bandwidth_bytes_per_s;
  return std::max(bytes / bandwidth, flops / device.peak_flops_per_s) + device.launch_seconds;
}

absl::StatusOr<DeviceSpec> DeviceByName(std::string_view name) {
  if (name == "h100") return H100Device();
  if (name == "cpu") return CpuDevice();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device `", std::string(name), "`; known devices: cpu, h100"));
}

// The trip count of a counted loop (counter < constant, counter starting at a
// constant), or 1 when it cannot be read off the IR.
double TripCount(const Instruction& loop, OperandResolver resolve) {
  const Computation* cond = loop.while_condition();
  const Instruction* root = cond ? resolve(cond->root()) : nullptr;
  if (root == nullptr || root->opcode() != Opcode::kCompare ||
      !root->has_attrs<CompareAttrs>() ||
      root->comparison_direction() != ComparisonDirection::kLt) {
    return 1;
  }
  const Instruction* counter = resolve(root->operand(0));
  const Instruction* limit = resolve(root->operand(1));
  if (counter->opcode() != Opcode::kGetTupleElement ||
      resolve(counter->operand(0))->opcode() != Opcode::kParameter ||
      limit->opcode() != Opcode::kConstant || !limit->has_attrs<ConstantAttrs>() ||
      !limit->shape().IsScalar()) {
    return 1;
  }
  const Instruction* init = resolve(loop.operand(0));
  if (init->opcode() != Opcode::kTuple || counter->tuple_index() >= init->operand_count()) {
    return 1;
  }
  const Instruction* start = resolve(init->operand(counter->tuple_index()));
  if (start->opcode() != Opcode::kConstant || !start->has_attrs<ConstantAttrs>() ||
      !start->shape().IsScalar()) {
    return 1;
  }
  const double trips = static_cast<double>(limit->literal().GetAsInt64(0) -
                                           start->literal().GetAsInt64(0));
  return std::max(1.0, trips);
}

int64_t RepeatTimes(int64_t repeat, double trips) {
  // Saturated far below int64's end: a product of nested trip counts.
  constexpr double kMax = 1e15;
  const double r = std::min(kMax, static_cast<double>(repeat) * std::max(1.0, trips));
  return static_cast<int64_t>(std::llround(r));
}

ExactSeconds ToExactSeconds(double seconds) {
  // Whole femtoseconds: a kernel takes at least a launch (a microsecond), so
  // rounding moves it by under one part in 10^9. Capped at 9000 s a kernel.
  const double fs = seconds * 1e15;
  if (!(fs > 0)) return 0;
  return static_cast<ExactSeconds>(std::llround(std::min(fs, 9e18)));
}

double FromExactSeconds(ExactSeconds total) { return static_cast<double>(total) / 1e15; }

KernelCost EstimateKernel(const Instruction& inst, const DeviceSpec& device) {
  const KernelWork work = inst.opcode() == Opcode::kFusion && !inst.called_computations().empty()
                               ? FusionWork(inst, device)
                               : UnfusedWork(inst, device);
  return {&inst, work.bytes, work.flops, KernelSeconds(work.bytes, work.flops, device),
          work.transcendentals};
}

CostEstimate EstimateCost(const Module& module, const DeviceSpec& device) {
  CostEstimate estimate;
  ExactSeconds total = 0;
  if (module.entry() != nullptr) AddComputation(*module.entry(), device, 1, &estimate, &total);
  estimate.seconds = FromExactSeconds(total);
  return estimate;
}

absl::StatusOr<DeviceSpec> Calibrate(const DeviceSpec& initial,
                                     const std::vector<KernelSample>& samples) {
  if (samples.size() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration needs at least 3 measured kernels, got ", samples.size()));
  }
  // Alternate least-squares fits until they agree: with the current model,
  // each sample is memory- or compute-bound; fit launch + bytes/bw on the
  // memory-bound ones from memory and, as a line of its own, on those the
  // cache holds (whose intercept gives the launch cost when too few come
  // from memory), and flops/peak (after launch) on the rest.
  struct Line {  // least squares y = intercept + slope * x
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    void Add(double x, double y) { n += 1; sx += x; sy += y; sxx += x * x; sxy += x * y; }
    bool Fits() const { return n >= 2 && n * sxx - sx * sx > 0 && Slope() > 0; }
    double Slope() const { return (n * sxy - sx * sy) / (n * sxx - sx * sx); }
    double Intercept() const { return (sy - Slope() * sx) / n; }
  };
  DeviceSpec spec = initial;
  for (int round = 0; round < 8; ++round) {
    Line memory, cache;
    double fx = 0, fy = 0;  // y - launch = x / peak
    for (const KernelSample& s : samples) {
      const bool cached = spec.cache_bytes > 0 && s.bytes <= spec.cache_bytes;
      const double bandwidth =
          cached ? spec.cache_bandwidth_bytes_per_s : spec.bandwidth_bytes_per_s;
      if (s.bytes / bandwidth < s.flops / spec.peak_flops_per_s) {
        fx += s.flops * s.flops;
        fy += s.flops * std::max(0.0, s.seconds - spec.launch_seconds);
      } else {
        (cached ? cache : memory).Add(s.bytes, s.seconds);
      }
    }
    if (memory.Fits()) {
      spec.bandwidth_bytes_per_s = 1 / memory.Slope();
      spec.launch_seconds = std::max(0.0, memory.Intercept());
    }
    if (cache.Fits()) {
      spec.cache_bandwidth_bytes_per_s = 1 / cache.Slope();
      if (!memory.Fits()) spec.launch_seconds = std::max(0.0, cache.Intercept());
    }
    if (fx > 0 && fy > 0) spec.peak_flops_per_s = fx / fy;
  }
  if (!std::isfinite(spec.bandwidth_bytes_per_s) || !std::isfinite(spec.peak_flops_per_s)) {
    return absl::InvalidArgumentError("calibration samples do not determine the model");
  }
  spec.name = initial.name + "-calibrated";
  return spec;
}

}  // namespace hlogym

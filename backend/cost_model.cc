#include "backend/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// Instructions that move no data of their own: views, tuples, bookkeeping.
// Reshape counts as free because every array is row-major here, where XLA
// lowers a reshape to a bitcast.
bool IsFree(const Instruction& inst) {
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

double ComputationFlops(const Computation& computation, const DeviceSpec& device);

double InstructionFlops(const Instruction& inst, const DeviceSpec& device) {
  const double out = Elements(inst.shape());
  switch (inst.opcode()) {
    case Opcode::kDot: {
      if (!inst.has_attrs<DotAttrs>()) return out;
      double k = 1;
      const Shape& lhs = inst.operand(0)->shape();
      for (int64_t d : inst.attrs<DotAttrs>().dims.lhs_contracting) {
        if (d >= 0 && d < lhs.rank()) k *= lhs.dim(d);
      }
      return 2 * out * k;
    }
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
                                                : ComputationFlops(*inst.fused_computation(), device);
    default:
      return IsElementwise(inst.opcode()) ? out * FlopsPerElement(inst.opcode(), device) : 0;
  }
}

// Elements of transcendental functions one kernel evaluates.
double Transcendentals(const Instruction& inst) {
  if (inst.opcode() == Opcode::kFusion && !inst.called_computations().empty()) {
    double n = 0;
    for (const auto& i : inst.fused_computation()->instructions()) n += Transcendentals(*i);
    return n;
  }
  return IsTranscendental(inst.opcode()) ? Elements(inst.shape()) : 0;
}

double ComputationFlops(const Computation& computation, const DeviceSpec& device) {
  double flops = 0;
  for (const auto& inst : computation.instructions()) flops += InstructionFlops(*inst, device);
  return flops;
}

// Bytes a kernel reads from one operand: all of it, unless the kernel only
// takes a window of it (slices and gathers read what they produce).
double OperandBytesRead(const Instruction& kernel, int64_t i) {
  const Instruction* operand = kernel.operand(i);
  const double full = static_cast<double>(operand->shape().byte_size());
  auto windowed = [](const Instruction& user) {
    return user.opcode() == Opcode::kSlice || user.opcode() == Opcode::kDynamicSlice ||
           user.opcode() == Opcode::kGather;
  };
  if (windowed(kernel) && i == 0) return static_cast<double>(kernel.shape().byte_size());
  if (kernel.opcode() == Opcode::kFusion && !kernel.called_computations().empty()) {
    const Computation* fused = kernel.fused_computation();
    if (i >= fused->parameter_count()) return full;
    const Instruction* param = fused->parameter(i);
    if (param->user_count() == 0) return 0;
    double read = 0;
    for (const Instruction* user : param->users()) {
      if (!windowed(*user) || user->operand(0) != param) return full;
      read += static_cast<double>(user->shape().byte_size());
    }
    return std::min(read, full);
  }
  return full;
}

// The trip count of a counted loop (counter < constant, counter starting at a
// constant), or 1 when it cannot be read off the IR.
double TripCount(const Instruction& loop) {
  const Computation* cond = loop.while_condition();
  const Instruction* root = cond ? cond->root() : nullptr;
  if (root == nullptr || root->opcode() != Opcode::kCompare ||
      !root->has_attrs<CompareAttrs>() ||
      root->comparison_direction() != ComparisonDirection::kLt) {
    return 1;
  }
  const Instruction* counter = root->operand(0);
  const Instruction* limit = root->operand(1);
  if (counter->opcode() != Opcode::kGetTupleElement ||
      counter->operand(0)->opcode() != Opcode::kParameter ||
      limit->opcode() != Opcode::kConstant || !limit->has_attrs<ConstantAttrs>() ||
      !limit->shape().IsScalar()) {
    return 1;
  }
  const Instruction* init = loop.operand(0);
  if (init->opcode() != Opcode::kTuple || counter->tuple_index() >= init->operand_count()) {
    return 1;
  }
  const Instruction* start = init->operand(counter->tuple_index());
  if (start->opcode() != Opcode::kConstant || !start->has_attrs<ConstantAttrs>() ||
      !start->shape().IsScalar()) {
    return 1;
  }
  const double trips = static_cast<double>(limit->literal().GetAsInt64(0) -
                                           start->literal().GetAsInt64(0));
  return std::max(1.0, trips);
}

void AddComputation(const Computation& computation, const DeviceSpec& device,
                    double repeat, CostEstimate* estimate);

void AddKernel(const Instruction& inst, const DeviceSpec& device, double repeat,
               CostEstimate* estimate) {
  double bytes = static_cast<double>(inst.shape().byte_size());
  if (inst.opcode() == Opcode::kDynamicUpdateSlice) {
    // In place: only the update region is read and written.
    bytes = 2 * static_cast<double>(inst.operand(1)->shape().byte_size());
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) bytes += OperandBytesRead(inst, i);
  }
  const double flops = InstructionFlops(inst, device);
  const double seconds =
      std::max(bytes / device.bandwidth_bytes_per_s, flops / device.peak_flops_per_s) +
      device.launch_seconds;
  const double transcendentals = Transcendentals(inst);
  estimate->per_kernel.push_back({&inst, bytes, flops, seconds, transcendentals});
  estimate->transcendentals += transcendentals * repeat;
  estimate->seconds += seconds * repeat;
  estimate->bytes += bytes * repeat;
  estimate->flops += flops * repeat;
  estimate->kernels += 1;
}

void AddComputation(const Computation& computation, const DeviceSpec& device,
                    double repeat, CostEstimate* estimate) {
  for (Instruction* inst : computation.MakePostOrder()) {
    if (IsFree(*inst)) continue;
    switch (inst->opcode()) {
      case Opcode::kWhile: {
        const double trips = TripCount(*inst);
        if (inst->while_condition()) {
          AddComputation(*inst->while_condition(), device, repeat * trips, estimate);
        }
        if (inst->while_body()) {
          AddComputation(*inst->while_body(), device, repeat * trips, estimate);
        }
        break;
      }
      case Opcode::kCall:
        if (!inst->called_computations().empty()) {
          AddComputation(*inst->to_apply(), device, repeat, estimate);
        }
        break;
      case Opcode::kConditional: {
        CostEstimate worst;
        for (const Computation* branch : inst->called_computations()) {
          CostEstimate branch_cost;
          AddComputation(*branch, device, 1, &branch_cost);
          if (branch_cost.seconds >= worst.seconds) worst = std::move(branch_cost);
        }
        estimate->seconds += worst.seconds * repeat;
        estimate->bytes += worst.bytes * repeat;
        estimate->flops += worst.flops * repeat;
        estimate->transcendentals += worst.transcendentals * repeat;
        estimate->kernels += worst.kernels;
        for (KernelCost& k : worst.per_kernel) estimate->per_kernel.push_back(k);
        break;
      }
      default:
        AddKernel(*inst, device, repeat, estimate);
    }
  }
}

}  // namespace

DeviceSpec H100Device() { return {"h100", 3.35e12, 60e12, 5e-6}; }
DeviceSpec CpuDevice() { return {"cpu", 20e9, 50e9, 1e-6, 45}; }

absl::StatusOr<DeviceSpec> DeviceByName(std::string_view name) {
  if (name == "h100") return H100Device();
  if (name == "cpu") return CpuDevice();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device `", std::string(name), "`; known devices: cpu, h100"));
}

CostEstimate EstimateCost(const Module& module, const DeviceSpec& device) {
  CostEstimate estimate;
  if (module.entry() != nullptr) AddComputation(*module.entry(), device, 1, &estimate);
  return estimate;
}

absl::StatusOr<DeviceSpec> Calibrate(const DeviceSpec& initial,
                                     const std::vector<KernelSample>& samples) {
  if (samples.size() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration needs at least 3 measured kernels, got ", samples.size()));
  }
  // Alternate two least-squares fits until they agree: with the current
  // model, each sample is memory- or compute-bound; fit launch + bytes/bw on
  // the memory-bound ones and flops/peak (after launch) on the rest.
  DeviceSpec spec = initial;
  for (int round = 0; round < 8; ++round) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;  // y = launch + x / bw
    double fx = 0, fy = 0;                            // y - launch = x / peak
    for (const KernelSample& s : samples) {
      const bool memory_bound =
          s.bytes / spec.bandwidth_bytes_per_s >= s.flops / spec.peak_flops_per_s;
      if (memory_bound) {
        n += 1; sx += s.bytes; sy += s.seconds; sxx += s.bytes * s.bytes;
        sxy += s.bytes * s.seconds;
      } else {
        fx += s.flops * s.flops;
        fy += s.flops * std::max(0.0, s.seconds - spec.launch_seconds);
      }
    }
    const double denom = n * sxx - sx * sx;
    if (n >= 2 && denom > 0) {
      const double slope = (n * sxy - sx * sy) / denom;
      const double intercept = (sy - slope * sx) / n;
      if (slope > 0) spec.bandwidth_bytes_per_s = 1 / slope;
      spec.launch_seconds = std::max(0.0, intercept);
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

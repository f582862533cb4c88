#include "core/eval/interpreter.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/eval/kernels.h"
#include "core/eval/profile.h"

namespace hlogym {
namespace {

// Values are immutable once computed. Owned ones are allocated non-const, so
// a value whose last reference is being returned may be moved from.
using Value = std::shared_ptr<const Literal>;

// The deleter of borrowed values (parameters, constants): never moved from.
struct Borrowed {
  void operator()(const Literal*) const {}
};

// The value as a Literal: moved out when nothing else can see it, else copied.
Literal Release(Value value) {
  if (value.use_count() == 1 && std::get_deleter<Borrowed>(value) == nullptr) {
    return std::move(const_cast<Literal&>(*value));
  }
  return *value;
}

absl::Status NotSupported(const Instruction& inst, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat("not supported: ", what, " in instruction `", inst.name(), "`"));
}

absl::StatusOr<Literal> Call(const Computation& computation, Operands arguments);

// Copies slice `t` along `dim` out of `array` (into) or into it (out of).
void CopySlice(const Literal& from, Literal& to, int64_t dim, int64_t t, bool into_slice) {
  const Literal& full = into_slice ? from : to;
  const int width = ByteWidth(full.shape().element_type());
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < full.shape().rank(); ++d) inner *= full.shape().dim(d);
  const int64_t outer = full.element_count() / (inner * full.shape().dim(dim));
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t full_at = (o * full.shape().dim(dim) + t) * inner * width;
    const int64_t slice_at = o * inner * width;
    if (into_slice) {
      std::memcpy(to.raw_data() + slice_at, from.raw_data() + full_at, inner * width);
    } else {
      std::memcpy(to.raw_data() + full_at, from.raw_data() + slice_at, inner * width);
    }
  }
}

// scan: operands are inputs then carries; the body maps (input slices...,
// carries...) to (output slices..., carries...); outputs stack along the
// scan dimension, and the final carries follow them in the result tuple.
absl::StatusOr<Literal> EvalScan(const Instruction& inst, Operands operands) {
  const auto& a = inst.attrs<ScanAttrs>();
  const int64_t dim = inst.dimension(0);
  const int64_t carries = a.num_carries;
  const int64_t inputs = static_cast<int64_t>(operands.size()) - carries;
  const int64_t outputs = inst.shape().tuple_size() - carries;
  const Computation& body = *inst.to_apply();
  std::vector<Literal> results;
  for (int64_t k = 0; k < outputs; ++k) results.emplace_back(inst.shape().tuple_shape(k));
  std::vector<Literal> state;
  for (int64_t k = 0; k < carries; ++k) state.push_back(*operands[inputs + k]);
  const int64_t length = operands[0]->shape().dim(dim);
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = a.is_reverse ? length - 1 - step : step;
    std::vector<Literal> args;
    for (int64_t k = 0; k < inputs; ++k) {
      args.emplace_back(body.parameter(k)->shape());
      CopySlice(*operands[k], args.back(), dim, t, true);
    }
    for (Literal& c : state) args.push_back(std::move(c));
    std::vector<const Literal*> pointers;
    for (const Literal& arg : args) pointers.push_back(&arg);
    absl::StatusOr<Literal> r = Call(body, pointers);
    if (!r.ok()) return r.status();
    std::vector<Literal>& leaves = r->tuple_elements();
    for (int64_t k = 0; k < outputs; ++k) CopySlice(leaves[k], results[k], dim, t, false);
    state.clear();
    for (int64_t k = 0; k < carries; ++k) state.push_back(std::move(leaves[outputs + k]));
  }
  for (Literal& c : state) results.push_back(std::move(c));
  return Literal::Tuple(std::move(results));
}

// Computes one instruction from its operand values.
absl::StatusOr<Value> EvalInstruction(const Instruction& inst, const std::vector<Value>& values,
                                      absl::Span<const Literal* const> parameters) {
  std::vector<const Literal*> operands;
  operands.reserve(values.size());
  for (const Value& v : values) operands.push_back(v.get());
  const CallComputation call = Call;
  auto wrap = [](absl::StatusOr<Literal> r) -> absl::StatusOr<Value> {
    if (!r.ok()) return r.status();
    return std::make_shared<Literal>(*std::move(r));
  };
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kParameter: {
      const int64_t p = inst.parameter_number();
      // Parameters are borrowed: the caller keeps them alive for the call.
      return Value(parameters[p], Borrowed());
    }
    case Opcode::kConstant:
      if (inst.literal().is_elided()) {
        return NotSupported(inst, "a constant whose values were elided as {...}");
      }
      return Value(&inst.literal(), Borrowed());
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      for (const Value& v : values) elements.push_back(*v);
      return std::make_shared<Literal>(Literal::Tuple(std::move(elements)));
    }
    case Opcode::kGetTupleElement:
      // An alias into the tuple, which it keeps alive: no copy.
      return Value(values[0], &values[0]->tuple_elements().at(inst.tuple_index()));
    case Opcode::kAlternatives: case Opcode::kOptimizationBarrier:
      return values[0];
    case Opcode::kFusion: case Opcode::kCall:
      return wrap(Call(*inst.called_computations()[0], operands));
    case Opcode::kWhile: {
      Literal state = *values[0];
      for (int64_t trip = 0;; ++trip) {
        if (trip == kMaxWhileTrips) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "while `", inst.name(), "` did not end within ", kMaxWhileTrips,
              " trips (the interpreter's limit, kMaxWhileTrips): its condition may never turn "
              "false"));
        }
        const Literal* arg = &state;
        absl::StatusOr<Literal> keep_going = Call(*inst.while_condition(), {&arg, 1});
        if (!keep_going.ok()) return keep_going.status();
        if (keep_going->GetAsInt64(0) == 0) break;
        absl::StatusOr<Literal> next = Call(*inst.while_body(), {&arg, 1});
        if (!next.ok()) return next.status();
        state = *std::move(next);
      }
      return std::make_shared<Literal>(std::move(state));
    }
    case Opcode::kConditional: {
      const Literal& selector = *values[0];
      int64_t branch;
      const int64_t branches = static_cast<int64_t>(inst.called_computations().size());
      if (selector.shape().element_type() == PrimitiveType::kPred) {
        branch = selector.GetAsInt64(0) ? 0 : 1;  // {true, false} computations
      } else {
        branch = selector.GetAsInt64(0);
        if (branch < 0 || branch >= branches) branch = branches - 1;  // XLA: out of range -> last
      }
      const Literal* arg = operands[branch + 1];
      return wrap(Call(*inst.called_computations()[branch], {&arg, 1}));
    }
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kReverse: case Opcode::kIota:
      return wrap(EvalDataMovement(inst, operands));
    case Opcode::kCopy:
      return values[0];  // values are immutable: a copy is the same value
    case Opcode::kGather: return wrap(EvalGather(inst, operands));
    case Opcode::kScatter: return wrap(EvalScatter(inst, operands, call));
    case Opcode::kReduce: return wrap(EvalReduce(inst, operands, call));
    case Opcode::kReduceWindow: return wrap(EvalReduceWindow(inst, operands, call));
    case Opcode::kSelectAndScatter: return wrap(EvalSelectAndScatter(inst, operands, call));
    case Opcode::kSort: return wrap(EvalSort(inst, operands, call));
    case Opcode::kTopK: return wrap(EvalTopK(inst, operands));
    case Opcode::kScan: return wrap(EvalScan(inst, operands));
    case Opcode::kDot: return wrap(EvalDot(inst, operands));
    case Opcode::kConvolution: return wrap(EvalConvolution(inst, operands));
    case Opcode::kRngBitGenerator: return wrap(EvalRngBitGenerator(inst, operands));
    case Opcode::kCustomCall:
      return NotSupported(inst, absl::StrCat("custom-call target `", inst.custom_call_target(), "`"));
    default:
      if (IsElementwise(op) || op == Opcode::kCompare) return wrap(EvalElementwise(inst, operands));
      return NotSupported(inst, std::string(OpcodeName(op)));
  }
}

absl::StatusOr<Literal> Call(const Computation& computation, Operands arguments) {
  if (static_cast<int64_t>(arguments.size()) != computation.parameter_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "computation `", computation.name(), "` takes ", computation.parameter_count(),
        " arguments, got ", arguments.size()));
  }
  const std::vector<Instruction*> order = computation.MakePostOrder();
  absl::flat_hash_map<const Instruction*, Value> values;
  // How many users still need each value, so big intermediates die early.
  absl::flat_hash_map<const Instruction*, int64_t> pending;
  for (const Instruction* inst : order) pending[inst] = inst->user_count();
  for (const Instruction* inst : order) {
    std::vector<Value> operands;
    operands.reserve(inst->operand_count());
    for (const Instruction* operand : inst->operands()) operands.push_back(values.at(operand));
    EvalTimer timer(EvalProfile::Enabled());
    absl::StatusOr<Value> value = EvalInstruction(*inst, operands, arguments);
    timer.Stop(*inst);
    if (!value.ok()) return value.status();
    values[inst] = *std::move(value);
    // Users are counted once each, however many times they use an operand.
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const Instruction* operand = inst->operand(k);
      bool first_use = true;
      for (int64_t j = 0; j < k; ++j) first_use &= inst->operand(j) != operand;
      if (first_use && --pending[operand] == 0 && operand != computation.root()) {
        values.erase(operand);
      }
    }
  }
  Value root = std::move(values.at(computation.root()));
  values.clear();
  return Release(std::move(root));
}

void Flatten(Literal literal, std::vector<Literal>& out) {
  if (!literal.is_tuple()) {
    out.push_back(std::move(literal));
    return;
  }
  for (Literal& element : literal.tuple_elements()) Flatten(std::move(element), out);
}

}  // namespace

absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            absl::Span<const Literal* const> arguments) {
  return Call(computation, arguments);
}

absl::StatusOr<Literal> Evaluate(const Module& module, absl::Span<const Literal> arguments) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (static_cast<int64_t>(arguments.size()) != entry->parameter_count()) {
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ",
                                                   entry->parameter_count(), " arguments, got ",
                                                   arguments.size()));
  }
  std::vector<const Literal*> pointers;
  for (int64_t p = 0; p < entry->parameter_count(); ++p) {
    const Shape& expected = entry->parameter(p)->shape();
    if (!arguments[p].shape().Compatible(expected)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", p, " has shape ", arguments[p].shape().ToString(false),
          " but parameter `", entry->parameter(p)->name(), "` is ", expected.ToString(false)));
    }
    pointers.push_back(&arguments[p]);
  }
  absl::StatusOr<Literal> result = Call(*entry, pointers);
  if (EvalProfile::Enabled()) {
    std::fprintf(stderr, "interpreter profile of %s:\n%s", module.name().c_str(),
                 EvalProfile::TakeReport().c_str());
  }
  return result;
}

absl::StatusOr<std::vector<Literal>> EvaluateFlat(const Module& module,
                                                  absl::Span<const Literal> arguments) {
  absl::StatusOr<Literal> result = Evaluate(module, arguments);
  if (!result.ok()) return result.status();
  std::vector<Literal> leaves;
  Flatten(*std::move(result), leaves);
  return leaves;
}

}  // namespace hlogym

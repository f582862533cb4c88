// The host op of last resort: one instruction evaluated by the reference
// interpreter, on Literals copied from and to the executable's buffers.
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "backend/host_ops.h"
#include "core/eval/interpreter.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// Opcodes the interpreter evaluates without calling back into the module's
// control flow (while, conditional and call are driven by the executable).
bool InterpreterRuns(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kReverse: case Opcode::kIota: case Opcode::kCopy:
    case Opcode::kGather: case Opcode::kScatter: case Opcode::kReduce:
    case Opcode::kReduceWindow: case Opcode::kSelectAndScatter: case Opcode::kSort:
    case Opcode::kTopK: case Opcode::kScan: case Opcode::kDot: case Opcode::kConvolution:
    case Opcode::kRngBitGenerator: case Opcode::kFusion: case Opcode::kCompare:
      return true;
    default:
      return IsElementwise(op);
  }
}

// Fills `literal` (of a leaf-compatible shape) from consecutive buffers.
void ReadLeaves(Literal& literal, void* const* buffers, int64_t& next) {
  if (literal.is_tuple()) {
    for (Literal& element : literal.tuple_elements()) ReadLeaves(element, buffers, next);
    return;
  }
  if (literal.raw_size() > 0) std::memcpy(literal.raw_data(), buffers[next], literal.raw_size());
  ++next;
}

void WriteLeaves(const Literal& literal, void* const* buffers, int64_t& next) {
  if (literal.is_tuple()) {
    for (const Literal& element : literal.tuple_elements()) WriteLeaves(element, buffers, next);
    return;
  }
  if (literal.raw_size() > 0) std::memcpy(buffers[next], literal.raw_data(), literal.raw_size());
  ++next;
}

class InterpreterOp : public HostOp {
 public:
  explicit InterpreterOp(const Instruction& instruction)
      : wrapper_(absl::StrCat(instruction.name(), ".host")), name_(instruction.name()) {
    // A one-instruction computation around a clone, so the interpreter's
    // own dispatch (called computations included) evaluates it.
    std::vector<Instruction*> parameters;
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      const Shape& shape = instruction.operand(i)->shape();
      parameters.push_back(wrapper_.AddInstruction(
          Instruction::CreateParameter(i, shape, absl::StrCat("p", i))));
      operand_shapes_.push_back(shape);
    }
    wrapper_.set_root(
        wrapper_.AddInstruction(instruction.CloneWithNewOperands(instruction.shape(), parameters)));
  }

  absl::Status Run(void* const* buffers) override {
    std::vector<Literal> operands;
    operands.reserve(operand_shapes_.size());
    int64_t next = 0;
    for (const Shape& shape : operand_shapes_) {
      operands.emplace_back(shape);
      ReadLeaves(operands.back(), buffers, next);
    }
    std::vector<const Literal*> pointers;
    for (const Literal& operand : operands) pointers.push_back(&operand);
    absl::StatusOr<Literal> result = EvaluateComputation(wrapper_, pointers);
    if (!result.ok()) return result.status();
    if (!result->shape().Compatible(wrapper_.root()->shape())) {
      return absl::InternalError(absl::StrCat("the interpreter gave `", name_, "` the shape ",
                                              result->shape().ToString(false)));
    }
    WriteLeaves(*result, buffers, next);
    return absl::OkStatus();
  }
  bool allocates() const override { return true; }
  std::string kind() const override { return "interpreter"; }

 private:
  Computation wrapper_;
  std::string name_;
  std::vector<Shape> operand_shapes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostOp>> MakeInterpreterOp(const Instruction& instruction) {
  const Opcode op = instruction.opcode();
  if (op == Opcode::kCustomCall) {
    ASSIGN_OR_RETURN(std::unique_ptr<HostOp> fault, MakeFaultInjectionOp(instruction));
    if (fault != nullptr) return fault;
    return absl::UnimplementedError(
        absl::StrCat("not supported: custom-call target `", instruction.custom_call_target(),
                     "` in instruction `", instruction.name(), "` (the CPU backend has no kernel for it)"));
  }
  if (!InterpreterRuns(op)) {
    return absl::UnimplementedError(absl::StrCat("not supported: ", std::string(OpcodeName(op)),
                                                 " in instruction `", instruction.name(),
                                                 "` (the CPU backend has no kernel for it)"));
  }
  return std::unique_ptr<HostOp>(new InterpreterOp(instruction));
}

}  // namespace hlogym

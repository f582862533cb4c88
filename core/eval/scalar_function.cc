// ScalarFunction: reducers and comparators evaluated element by element.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

bool IsScalarOp(const Instruction& inst) {
  if (!inst.shape().IsScalar() && !(inst.IsRoot() && inst.opcode() == Opcode::kTuple)) {
    return false;
  }
  switch (inst.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kCompare:
    case Opcode::kSelect: case Opcode::kClamp: case Opcode::kTuple:
      return true;
    default:
      return IsElementwiseUnary(inst.opcode()) || IsElementwiseBinary(inst.opcode());
  }
}

}  // namespace

absl::StatusOr<ScalarFunction> ScalarFunction::Make(const Computation& computation,
                                                    const CallComputation& call) {
  ScalarFunction f;
  f.computation_ = &computation;
  f.call_ = call;
  std::vector<Instruction*> order = computation.MakePostOrder();
  bool compilable = true;
  for (const Instruction* inst : order) {
    if (!IsScalarOp(*inst) || inst->opcode() == Opcode::kBitcastConvert ||
        inst->opcode() == Opcode::kReducePrecision ||
        (inst->opcode() == Opcode::kConstant && inst->literal().is_elided())) {
      compilable = false;
      break;
    }
  }
  if (compilable) {
    absl::flat_hash_map<const Instruction*, int> reg;
    for (const Instruction* inst : order) {
      Op op{inst, {}};
      for (const Instruction* operand : inst->operands()) op.operands.push_back(reg.at(operand));
      reg[inst] = static_cast<int>(f.program_.size());
      f.program_.push_back(std::move(op));
    }
    const Instruction* root = computation.root();
    if (root->opcode() == Opcode::kTuple) {
      for (const Instruction* leaf : root->operands()) f.result_registers_.push_back(reg.at(leaf));
    } else {
      f.result_registers_.push_back(reg.at(root));
    }
    f.compiled_ = true;
  }
  return f;
}

absl::Status ScalarFunction::Run(absl::Span<const Scalar> in, absl::Span<Scalar> out) const {
  if (!compiled_) {
    // General path: wrap the scalars in literals and call the computation.
    std::vector<Literal> args;
    for (int64_t p = 0; p < computation_->parameter_count(); ++p) {
      args.emplace_back(computation_->parameter(p)->shape());
      StoreScalar(args.back(), 0, in[p]);
    }
    std::vector<const Literal*> pointers;
    for (const Literal& a : args) pointers.push_back(&a);
    absl::StatusOr<Literal> result = call_(*computation_, pointers);
    if (!result.ok()) return result.status();
    if (result->is_tuple()) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = LoadScalar(result->tuple_elements()[i], 0);
    } else {
      out[0] = LoadScalar(*result, 0);
    }
    return absl::OkStatus();
  }
  thread_local std::vector<Scalar> regs;
  regs.resize(program_.size());
  for (size_t r = 0; r < program_.size(); ++r) {
    const Op& op = program_[r];
    const Instruction& inst = *op.inst;
    const PrimitiveType out_type = inst.shape().element_type();
    auto operand_type = [&](int k) { return inst.operand(k)->shape().element_type(); };
    switch (inst.opcode()) {
      case Opcode::kParameter: regs[r] = in[inst.parameter_number()]; break;
      case Opcode::kConstant: regs[r] = LoadScalar(inst.literal(), 0); break;
      case Opcode::kTuple: break;
      case Opcode::kCompare: {
        const auto& a = inst.attrs<CompareAttrs>();
        regs[r] = Scalar();
        regs[r].i = Compare(a.direction, a.type, operand_type(0), regs[op.operands[0]],
                            regs[op.operands[1]]);
        break;
      }
      case Opcode::kSelect:
        regs[r] = regs[op.operands[0]].i ? regs[op.operands[1]] : regs[op.operands[2]];
        break;
      case Opcode::kClamp: {
        absl::StatusOr<Scalar> m = ApplyBinary(Opcode::kMaximum, out_type, out_type,
                                               regs[op.operands[1]], regs[op.operands[0]]);
        if (!m.ok()) return m.status();
        m = ApplyBinary(Opcode::kMinimum, out_type, out_type, *m, regs[op.operands[2]]);
        if (!m.ok()) return m.status();
        regs[r] = *m;
        break;
      }
      default: {
        absl::StatusOr<Scalar> v =
            op.operands.size() == 1
                ? ApplyUnary(inst.opcode(), operand_type(0), out_type, regs[op.operands[0]])
                : ApplyBinary(inst.opcode(), operand_type(0), out_type, regs[op.operands[0]],
                              regs[op.operands[1]]);
        if (!v.ok()) return v.status();
        regs[r] = *v;
      }
    }
  }
  for (size_t i = 0; i < out.size() && i < result_registers_.size(); ++i) {
    out[i] = regs[result_registers_[i]];
  }
  return absl::OkStatus();
}

}  // namespace hlogym

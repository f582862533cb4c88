// ScalarFunction: reducers and comparators evaluated element by element.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/eval/float_ops.h"
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

void ScalarFunction::Resolve(Op& op) {
  const Instruction& inst = *op.inst;
  const PrimitiveType out = inst.shape().IsTuple() ? PrimitiveType::kTuple
                                                   : inst.shape().element_type();
  auto operand_type = [&](int k) { return inst.operand(k)->shape().element_type(); };
  switch (inst.opcode()) {
    case Opcode::kParameter: op.kind = Kind::kParameter; return;
    case Opcode::kConstant:
      op.kind = Kind::kConstant;
      op.constant = LoadScalar(inst.literal(), 0);
      return;
    case Opcode::kTuple: op.kind = Kind::kTuple; return;
    case Opcode::kSelect: op.kind = Kind::kSelect; return;
    case Opcode::kCompare: {
      if (!IsFloat(operand_type(0))) return;
      const auto& a = inst.attrs<CompareAttrs>();
      WithFloatCompare(a.direction, a.type, [&](auto fn) {
        op.float_compare = +fn;
        op.kind = Kind::kFloatCompare;
      });
      return;
    }
    case Opcode::kAnd: case Opcode::kOr:
      if (out == PrimitiveType::kPred) {
        op.kind = inst.opcode() == Opcode::kAnd ? Kind::kPredAnd : Kind::kPredOr;
      }
      return;
    default:
      // Only f32 and f64 results: their rounding is a cast (RoundTo below).
      if (op.operands.size() == 2 && (out == PrimitiveType::kF32 || out == PrimitiveType::kF64) &&
          operand_type(0) == out) {
        WithFloatBinary(inst.opcode(), [&](auto fn) {
          op.float_binary = +fn;
          op.kind = Kind::kFloatBinary;
        });
      }
      return;
  }
}

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
      Op op;
      op.inst = inst;
      for (const Instruction* operand : inst->operands()) op.operands.push_back(reg.at(operand));
      Resolve(op);
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
    switch (op.kind) {
      case Kind::kParameter: regs[r] = in[inst.parameter_number()]; continue;
      case Kind::kConstant: regs[r] = op.constant; continue;
      case Kind::kTuple: continue;
      case Kind::kSelect:
        regs[r] = regs[op.operands[0]].i ? regs[op.operands[1]] : regs[op.operands[2]];
        continue;
      case Kind::kFloatCompare:
        regs[r] = Scalar();
        regs[r].i = op.float_compare(regs[op.operands[0]].f, regs[op.operands[1]].f);
        continue;
      case Kind::kPredAnd:
        regs[r] = Scalar();
        regs[r].i = (regs[op.operands[0]].i != 0) & (regs[op.operands[1]].i != 0);
        continue;
      case Kind::kPredOr:
        regs[r] = Scalar();
        regs[r].i = (regs[op.operands[0]].i != 0) | (regs[op.operands[1]].i != 0);
        continue;
      case Kind::kFloatBinary: {
        Scalar v;
        v.f = op.float_binary(regs[op.operands[0]].f, regs[op.operands[1]].f);
        regs[r] = RoundTo(inst.shape().element_type(), v);
        continue;
      }
      case Kind::kGeneric:
        break;
    }
    const PrimitiveType out_type = inst.shape().element_type();
    auto operand_type = [&](int k) { return inst.operand(k)->shape().element_type(); };
    switch (inst.opcode()) {
      case Opcode::kCompare: {
        const auto& a = inst.attrs<CompareAttrs>();
        regs[r] = Scalar();
        regs[r].i = Compare(a.direction, a.type, operand_type(0), regs[op.operands[0]],
                            regs[op.operands[1]]);
        break;
      }
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

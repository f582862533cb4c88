#include "backend/cpu_split_reduce.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/eval/float_ops.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// A split pays off when each output folds at least this many elements, and
// each partial result at least kMinPartialWork of them.
constexpr int64_t kMinWorkPerOutput = 4096;
constexpr int64_t kMinPartialWork = 256;
// Few outputs: more already spread over the threads by themselves.
constexpr int64_t kMaxOutputs = 1024;
constexpr int64_t kMaxPartials = 64;
constexpr int64_t kMinPartials = 4;
// Columns accumulated at once by a column split (as EmitColumnReduce).
constexpr int64_t kColumnTile = 256;

}  // namespace

std::optional<SplitReducePlan> PlanSplitReduce(const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 ||
      !reduce.shape().IsArray() || reduce.dimensions().empty()) {
    return std::nullopt;
  }
  const PrimitiveType type = reduce.shape().element_type();
  const Shape& in = reduce.operand(0)->shape();
  if ((type != PrimitiveType::kF32 && type != PrimitiveType::kF64) || !in.IsArray() ||
      in.element_type() != type || reduce.operand(1)->shape().element_type() != type) {
    return std::nullopt;
  }
  const Computation& reducer = *reduce.to_apply();
  const Instruction* root = reducer.root();
  if (reducer.parameter_count() != 2 || root->operand_count() != 2 ||
      root->shape().element_type() != type || root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  SplitReducePlan plan;
  plan.op = root->opcode();
  if (plan.op != Opcode::kAdd && plan.op != Opcode::kMaximum && plan.op != Opcode::kMinimum) {
    return std::nullopt;
  }
  const int64_t n = in.element_count();
  plan.outputs = reduce.shape().element_count();
  if (n == 0 || plan.outputs == 0 || plan.outputs > kMaxOutputs ||
      n / plan.outputs < kMinWorkPerOutput) {
    return std::nullopt;
  }
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : reduce.dimensions()) reduced[d] = true;
  while (plan.lead_dims < in.rank() && reduced[plan.lead_dims]) ++plan.lead_dims;
  // The innermost dimension stays a loop of its own, along memory.
  if (plan.lead_dims == in.rank() && in.rank() > 1) --plan.lead_dims;
  if (plan.lead_dims == 0) return std::nullopt;
  plan.rows = 1;
  for (int64_t d = 0; d < plan.lead_dims; ++d) plan.rows *= in.dim(d);
  plan.partials = std::min({kMaxPartials, plan.rows, n / (plan.outputs * kMinPartialWork)});
  if (plan.partials < kMinPartials) return std::nullopt;
  plan.work = n / (plan.outputs * plan.partials);
  plan.columns = !reduced[in.rank() - 1];
  return plan;
}

absl::Status EmitSplitReduce(ElementalEmitter& emitter, const Instruction& reduce,
                             const SplitReducePlan& plan, llvm::Value* partials,
                             llvm::Value* init, llvm::Value* lo, llvm::Value* hi) {
  llvm::IRBuilder<>& b = *emitter.builder();
  const Shape& in = reduce.operand(0)->shape();
  const PrimitiveType type = reduce.shape().element_type();
  const Computation& reducer = *reduce.to_apply();
  const bool add = plan.op == Opcode::kAdd;
  // Sums accumulate in double; maximum and minimum in the type.
  llvm::Type* acc_type = add ? b.getDoubleTy() : emitter.ValueType(type);
  llvm::Constant* identity =
      add ? llvm::ConstantFP::get(acc_type, -0.0)  // x + -0 == x, for x == -0 too
          : llvm::ConstantFP::getInfinity(acc_type, /*Negative=*/plan.op == Opcode::kMaximum);
  auto fold = [&](llvm::Value* acc, llvm::Value* v, bool reassociate) -> absl::StatusOr<llvm::Value*> {
    if (add) {
      llvm::Value* sum = b.CreateFAdd(acc, b.CreateFPCast(v, b.getDoubleTy()));
      if (reassociate) {
        llvm::FastMathFlags flags;
        flags.setAllowReassoc();
        llvm::cast<llvm::Instruction>(sum)->setFastMathFlags(flags);
      }
      return sum;
    }
    ASSIGN_OR_RETURN(std::vector<llvm::Value*> r, emitter.EmitScalarComputation(reducer, {acc, v}));
    return r.at(0);
  };
  auto to_double = [&](llvm::Value* v) { return b.CreateFPCast(v, b.getDoubleTy()); };
  auto constant = [&](int64_t v) { return b.getInt64(v); };

  // The init value, by the range that holds partial 0.
  llvm::Value* first = b.CreateAnd(b.CreateICmpEQ(lo, constant(0)), b.CreateICmpSGT(hi, lo));
  RETURN_IF_ERROR(emitter.EmitLoop(b.CreateSelect(first, constant(1), constant(0)), "split_init",
                                   [&](llvm::Value*) -> absl::Status {
    ASSIGN_OR_RETURN(llvm::Value * v, emitter.OperandElement(reduce, 1, {}));
    b.CreateStore(to_double(v), init);
    return absl::OkStatus();
  }));

  std::vector<int64_t> kept, rest_reduced;
  {
    std::vector<bool> reduced(in.rank(), false);
    for (int64_t d : reduce.dimensions()) reduced[d] = true;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (!reduced[d]) kept.push_back(d);
      if (reduced[d] && d >= plan.lead_dims) rest_reduced.push_back(d);
    }
  }
  IrIndex in_index(in.rank(), nullptr);
  // Row-major `linear` into index entries `dims` of in_index.
  auto delinearize = [&](llvm::Value* linear, const std::vector<int64_t>& dims) {
    for (size_t i = dims.size(); i-- > 0;) {
      if (i == 0) {
        in_index[dims[i]] = linear;
      } else {
        in_index[dims[i]] = b.CreateURem(linear, constant(in.dim(dims[i])));
        linear = b.CreateUDiv(linear, constant(in.dim(dims[i])));
      }
    }
  };
  std::vector<int64_t> lead;
  for (int64_t d = 0; d < plan.lead_dims; ++d) lead.push_back(d);
  // Rows [p * rows / partials, (p + 1) * rows / partials) of the leading
  // reduced dimensions, each through the other reduced dimensions in order.
  auto for_each_input = [&](llvm::Value* p, const std::function<absl::Status()>& body) {
    llvm::Value* row_lo = b.CreateUDiv(b.CreateMul(p, constant(plan.rows)), constant(plan.partials));
    llvm::Value* row_hi = b.CreateUDiv(b.CreateMul(b.CreateAdd(p, constant(1)), constant(plan.rows)),
                                       constant(plan.partials));
    return emitter.EmitLoop(b.CreateSub(row_hi, row_lo), "split_row", [&](llvm::Value* r) {
      delinearize(b.CreateAdd(row_lo, r), lead);
      return emitter.EmitLoopsOver(in, rest_reduced, "split_r", in_index, body);
    });
  };
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  const int64_t outputs = plan.outputs;

  if (!plan.columns) {
    // One partial result at a time; its innermost loop runs along memory.
    llvm::Value* acc = entry.CreateAlloca(acc_type, nullptr, "split_acc");
    return emitter.EmitLoop(b.CreateSub(hi, lo), "split_out", [&](llvm::Value* i) -> absl::Status {
      llvm::Value* linear = b.CreateAdd(lo, i);
      delinearize(b.CreateURem(linear, constant(outputs)), kept);
      b.CreateStore(identity, acc);
      RETURN_IF_ERROR(for_each_input(b.CreateUDiv(linear, constant(outputs)), [&]() -> absl::Status {
        ASSIGN_OR_RETURN(llvm::Value * v, emitter.OperandElement(reduce, 0, in_index));
        ASSIGN_OR_RETURN(llvm::Value * next, fold(b.CreateLoad(acc_type, acc), v, true));
        b.CreateStore(next, acc);
        return absl::OkStatus();
      }));
      b.CreateStore(to_double(b.CreateLoad(acc_type, acc)),
                    b.CreateInBoundsGEP(b.getDoubleTy(), partials, linear));
      return absl::OkStatus();
    });
  }

  // Columns: per partial, tiles of its outputs fold the chunk's rows in
  // order into a row of accumulators, the inner loop along memory.
  llvm::Value* acc = entry.CreateAlloca(acc_type, entry.getInt64(kColumnTile), "split_acc");
  auto slot = [&](llvm::Value* j) { return b.CreateInBoundsGEP(acc_type, acc, j); };
  llvm::Value* p_lo = b.CreateUDiv(lo, constant(outputs));
  llvm::Value* p_hi = b.CreateUDiv(b.CreateAdd(hi, constant(outputs - 1)), constant(outputs));
  auto max = [&](llvm::Value* x, llvm::Value* y) { return b.CreateSelect(b.CreateICmpSGT(x, y), x, y); };
  auto min = [&](llvm::Value* x, llvm::Value* y) { return b.CreateSelect(b.CreateICmpSLT(x, y), x, y); };
  return emitter.EmitLoop(b.CreateSub(p_hi, p_lo), "split_p", [&](llvm::Value* pr) -> absl::Status {
    llvm::Value* p = b.CreateAdd(p_lo, pr);
    llvm::Value* base = b.CreateMul(p, constant(outputs));
    llvm::Value* c_lo = b.CreateSub(max(lo, base), base);
    llvm::Value* c_hi = b.CreateSub(min(hi, b.CreateAdd(base, constant(outputs))), base);
    llvm::Value* width = max(b.CreateSub(c_hi, c_lo), constant(0));
    llvm::Value* tiles = b.CreateUDiv(b.CreateAdd(width, constant(kColumnTile - 1)),
                                      constant(kColumnTile));
    return emitter.EmitLoop(tiles, "split_tile", [&](llvm::Value* t) -> absl::Status {
      llvm::Value* offset = b.CreateMul(t, constant(kColumnTile));
      llvm::Value* c0 = b.CreateAdd(c_lo, offset);
      llvm::Value* tile = min(b.CreateSub(width, offset), constant(kColumnTile));
      RETURN_IF_ERROR(emitter.EmitLoop(tile, "split_acc_init", [&](llvm::Value* j) {
        b.CreateStore(identity, slot(j));
        return absl::OkStatus();
      }));
      RETURN_IF_ERROR(for_each_input(p, [&]() -> absl::Status {
        return emitter.EmitLoop(tile, "split_column", [&](llvm::Value* j) -> absl::Status {
          delinearize(b.CreateAdd(c0, j), kept);
          ASSIGN_OR_RETURN(llvm::Value * v, emitter.OperandElement(reduce, 0, in_index));
          ASSIGN_OR_RETURN(llvm::Value * next, fold(b.CreateLoad(acc_type, slot(j)), v, false));
          b.CreateStore(next, slot(j));
          return absl::OkStatus();
        });
      }));
      return emitter.EmitLoop(tile, "split_store", [&](llvm::Value* j) {
        b.CreateStore(to_double(b.CreateLoad(acc_type, slot(j))),
                      b.CreateInBoundsGEP(b.getDoubleTy(), partials,
                                          b.CreateAdd(base, b.CreateAdd(c0, j))));
        return absl::OkStatus();
      });
    });
  });
}

void FinishSplitReductions(const CpuKernel& kernel, void* const* buffers) {
  for (const SplitReduction& s : kernel.split_reductions) {
    const auto* partials = static_cast<const double*>(buffers[s.partial_buffer]);
    const double init = *static_cast<const double*>(buffers[s.init_buffer]);
    for (int64_t o = 0; o < s.outputs; ++o) {
      double acc = init;
      for (int64_t p = 0; p < s.partials; ++p) {
        const double v = partials[p * s.outputs + o];
        switch (s.op) {
          case Opcode::kMaximum: acc = FloatMaximum(acc, v); break;
          case Opcode::kMinimum: acc = FloatMinimum(acc, v); break;
          default: acc += v; break;
        }
      }
      if (s.f64) {
        static_cast<double*>(buffers[s.output_buffer])[o] = acc;
      } else {
        static_cast<float*>(buffers[s.output_buffer])[o] = static_cast<float>(acc);
      }
    }
  }
}

}  // namespace hlogym

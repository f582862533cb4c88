// CpuKernelCompiler: turns a fusion (or an unfused elemental instruction)
// into a kernel over a range of its output elements, with the elemental
// emitter for the values and CpuJit for the code, cached by structure.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "backend/cpu_jit.h"
#include "backend/cpu_kernel.h"
#include "backend/cpu_split_reduce.h"
#include "backend/cpu_vector_math.h"
#include "backend/elemental_emitter.h"
#include "backend/index_breakpoints.h"
#include "backend/kernel_plan.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"

namespace hlogym {
namespace {

// The shared emitter with the CPU's code shapes: reductions hoisted out of
// the output loops they do not depend on, and folded with independent
// partial accumulators (8: two AVX2 vectors of doubles for a float sum).
// Math calls are computed in double for f32 (and f16/bf16) values and
// rounded once, as the interpreter computes them, and carry their libmvec
// variants so that loops calling them vectorize.
class CpuElementalEmitter : public ElementalEmitter {
 public:
  CpuElementalEmitter(llvm::IRBuilder<>* b, llvm::Module* module,
                      const VectorMathLibrary& vector_math)
      : ElementalEmitter(b, module), vector_math_(vector_math) {}

 protected:
  bool HoistInvariantReductions() const override { return true; }
  int ReductionPartials() const override { return 8; }

  llvm::Value* EmitMathCall(absl::string_view name, absl::Span<llvm::Value* const> args,
                            llvm::Type* type) override {
    llvm::IRBuilder<>& b = *builder();
    if (type->isFloatTy()) {
      std::vector<llvm::Value*> wide;
      for (llvm::Value* arg : args) wide.push_back(b.CreateFPExt(arg, b.getDoubleTy()));
      return b.CreateFPTrunc(EmitMathCall(name, wide, b.getDoubleTy()), type);
    }
    llvm::Value* result = ElementalEmitter::EmitMathCall(name, args, type);
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(result); call != nullptr) {
      vector_math_.Annotate(call, name);
    }
    return result;
  }

 private:
  const VectorMathLibrary& vector_math_;
};

// Columns per tile of a column reduction: the accumulators of one tile stay
// in L1 while the reduced rows stream past.
constexpr int64_t kColumnTile = 256;

// Whether output `out` is a reduce whose kept dimensions are the minor ones
// (a column reduction, such as a bias gradient): it is then emitted as
// tiles of columns, each folding the reduced rows in order into a row of
// accumulators, so the inner loop runs along memory and vectorizes. The
// fold order per column is the one of the per-element loop, so results are
// identical.
bool IsColumnReduce(const KernelOutput& out) {
  const Instruction& reduce = *out.producer;
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 || out.leaf != 0 ||
      reduce.shape().IsTuple() || reduce.shape().rank() == 0 || reduce.dimensions().empty()) {
    return false;
  }
  const Shape& in = reduce.operand(0)->shape();
  const int64_t kept = in.rank() - static_cast<int64_t>(reduce.dimensions().size());
  for (int64_t d : reduce.dimensions()) {
    if (d >= in.rank() - kept) return false;
  }
  const PrimitiveType type = reduce.shape().element_type();
  const Instruction* root = reduce.to_apply()->root();
  const bool float_add = root->opcode() == Opcode::kAdd && IsFloat(type);
  // Narrow float sums keep the per-element path (its round-to-odd step).
  if (float_add && type != PrimitiveType::kF32 && type != PrimitiveType::kF64) return false;
  return reduce.shape().dims().back() >= 8;
}

// Stores reduce output `out` for output elements [begin, hi) into `base`.
absl::Status EmitColumnReduce(ElementalEmitter& emitter, const KernelOutput& out,
                              llvm::Value* base, llvm::Value* begin, llvm::Value* hi) {
  llvm::IRBuilder<>& b = *emitter.builder();
  const Instruction& reduce = *out.producer;
  const Computation& reducer = *reduce.to_apply();
  const Instruction* root = reducer.root();
  const PrimitiveType type = reduce.shape().element_type();
  const Shape& in = reduce.operand(0)->shape();
  const bool float_add = root->opcode() == Opcode::kAdd && IsFloat(type) &&
                         reducer.parameter_count() == 2 &&
                         root->operand(0)->opcode() == Opcode::kParameter &&
                         root->operand(1)->opcode() == Opcode::kParameter &&
                         root->operand(0) != root->operand(1);
  llvm::Type* acc_type = float_add ? b.getDoubleTy() : emitter.ValueType(type);
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::Value* acc = entry.CreateAlloca(acc_type, entry.getInt64(kColumnTile), "column_acc");

  std::vector<int64_t> reduced(reduce.dimensions().begin(), reduce.dimensions().end());
  std::sort(reduced.begin(), reduced.end());
  const int64_t first_kept = in.rank() - reduce.shape().rank();
  llvm::Value* count = b.CreateSub(hi, begin);
  llvm::Value* tiles = b.CreateSDiv(b.CreateAdd(count, b.getInt64(kColumnTile - 1)),
                                    b.getInt64(kColumnTile));
  return emitter.EmitLoop(tiles, "tile", [&](llvm::Value* t) -> absl::Status {
    llvm::Value* t0 = b.CreateAdd(begin, b.CreateMul(t, b.getInt64(kColumnTile)));
    llvm::Value* rest = b.CreateSub(hi, t0);
    llvm::Value* width = b.CreateSelect(b.CreateICmpSLT(rest, b.getInt64(kColumnTile)), rest,
                                        b.getInt64(kColumnTile));
    auto slot = [&](llvm::Value* j) { return b.CreateInBoundsGEP(acc_type, acc, j); };
    RETURN_IF_ERROR(emitter.EmitLoop(width, "acc_init", [&](llvm::Value* j) -> absl::Status {
      ASSIGN_OR_RETURN(llvm::Value * init, emitter.OperandElement(reduce, 1, {}));
      if (float_add) init = b.CreateFPCast(init, b.getDoubleTy());
      b.CreateStore(init, slot(j));
      return absl::OkStatus();
    }));
    IrIndex in_index(in.rank(), nullptr);
    RETURN_IF_ERROR(emitter.EmitLoopsOver(in, reduced, "reduced", in_index, [&]() -> absl::Status {
      return emitter.EmitLoop(width, "column", [&](llvm::Value* j) -> absl::Status {
        llvm::Value* linear = b.CreateAdd(t0, j);
        for (int64_t d = in.rank(); d-- > first_kept;) {
          if (d == first_kept) {
            in_index[d] = linear;
          } else {
            in_index[d] = b.CreateURem(linear, b.getInt64(in.dim(d)));
            linear = b.CreateUDiv(linear, b.getInt64(in.dim(d)));
          }
        }
        ASSIGN_OR_RETURN(llvm::Value * v, emitter.OperandElement(reduce, 0, in_index));
        llvm::Value* a = b.CreateLoad(acc_type, slot(j));
        llvm::Value* next;
        if (float_add) {
          next = b.CreateFAdd(a, b.CreateFPCast(v, b.getDoubleTy()));
        } else {
          ASSIGN_OR_RETURN(std::vector<llvm::Value*> r,
                           emitter.EmitScalarComputation(reducer, {a, v}));
          next = r.at(0);
        }
        b.CreateStore(next, slot(j));
        return absl::OkStatus();
      });
    }));
    return emitter.EmitLoop(width, "acc_store", [&](llvm::Value* j) -> absl::Status {
      llvm::Value* v = b.CreateLoad(acc_type, slot(j));
      if (float_add && type == PrimitiveType::kF32) v = b.CreateFPTrunc(v, b.getFloatTy());
      b.CreateStore(emitter.ToStorage(type, v),
                    b.CreateInBoundsGEP(emitter.StorageType(type), base, b.CreateAdd(t0, j)));
      return absl::OkStatus();
    });
  });
}

class LlvmCpuKernelCompiler : public CpuKernelCompiler {
 public:
  explicit LlvmCpuKernelCompiler(std::unique_ptr<CpuJit> jit) : jit_(std::move(jit)) {}

  absl::StatusOr<CpuKernel> Compile(const Instruction& instruction) override {
    if (!CanCompile(instruction)) {
      const absl::Status why =
          instruction.IsFusion()
              ? ElementalEmitter::CheckSupported(*instruction.fused_computation())
              : ElementalEmitter::CheckSupported(instruction);
      if (!why.ok()) return why;
      return absl::UnimplementedError(absl::StrCat("not supported: ",
                                                   std::string(OpcodeName(instruction.opcode())),
                                                   " (", instruction.name(),
                                                   ") is run by the host"));
    }
    const std::string key = KernelCacheKey(instruction);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        ++cache_hits_;
        return it->second;
      }
    }
    // Built without the lock, so kernels compile in parallel. Two threads
    // may build the same kernel at once: the first one cached serves both
    // (the other's code stays unused in the JIT).
    ASSIGN_OR_RETURN(CpuKernel kernel, Build(instruction));
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = cache_.emplace(key, kernel);
    if (inserted) ++compiled_;
    return it->second;
  }

  int64_t compiled_count() const override { return compiled_; }
  int64_t cache_hits() const override { return cache_hits_; }

 private:
  absl::StatusOr<CpuKernel> Build(const Instruction& instruction);

  std::unique_ptr<CpuJit> jit_;
  std::mutex mutex_;
  std::unordered_map<std::string, CpuKernel> cache_;
  std::atomic<int64_t> compiled_{0};
  std::atomic<int64_t> cache_hits_{0};
  std::atomic<int64_t> next_name_{0};  // kernel symbols are unique in the JIT
};

absl::StatusOr<CpuKernel> LlvmCpuKernelCompiler::Build(const Instruction& instruction) {
  auto context = std::make_unique<llvm::LLVMContext>();
  const std::string name = absl::StrCat("hlogym_kernel_", next_name_++);
  auto module = std::make_unique<llvm::Module>(name, *context);
  jit_->PrepareModule(*module);
  llvm::IRBuilder<> b(*context);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* ptr = b.getPtrTy();
  llvm::Function* function = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i64}, false),
      llvm::Function::ExternalLinkage, name, *module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* buffers = function->getArg(0);
  llvm::Value* begin = function->getArg(1);
  llvm::Value* end = function->getArg(2);
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", function));

  CpuElementalEmitter emitter(&b, module.get(), jit_->vector_math());
  const int64_t operand_count = instruction.operand_count();
  std::vector<llvm::Value*> base(operand_count);
  auto buffer = [&](int64_t i) {
    return b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, buffers, i),
                        absl::StrCat("buffer", i));
  };
  for (int64_t i = 0; i < operand_count; ++i) base[i] = buffer(i);
  ElementalEmitter::ParameterReader reader =
      [&](int64_t number, const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    if (number < 0 || number >= operand_count) {
      return absl::InternalError(absl::StrCat("parameter ", number, " out of range"));
    }
    const Shape& shape = instruction.operand(number)->shape();
    llvm::Type* storage = emitter.StorageType(shape.element_type());
    llvm::Value* linear = b.getInt64(0);
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.dim(d) == 1) continue;
      linear = b.CreateAdd(b.CreateMul(linear, b.getInt64(shape.dim(d)), "", true, true),
                           index[d], "", true, true);
    }
    return b.CreateLoad(storage, b.CreateInBoundsGEP(storage, base[number], linear));
  };
  const Instruction* root = &instruction;
  if (instruction.IsFusion()) {
    root = instruction.fused_computation()->root();
    emitter.BindComputation(instruction.fused_computation(), reader);
  } else {
    emitter.BindUnfused(&instruction, reader);
  }
  ASSIGN_OR_RETURN(std::vector<KernelOutput> outputs, KernelOutputs(*root, operand_count));
  std::vector<llvm::Value*> out_base(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) out_base[k] = buffer(outputs[k].buffer);

  // Reduces to few elements over many become partial results in scratch
  // buffers after the outputs (backend/cpu_split_reduce.h).
  CpuKernel kernel;
  std::vector<std::optional<SplitReducePlan>> splits(outputs.size());
  std::vector<llvm::Value*> split_init(outputs.size(), nullptr);
  int64_t work = 1;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const KernelOutput& out = outputs[k];
    if (out.leaf != 0 || !(splits[k] = PlanSplitReduce(*out.producer))) continue;
    // Results of the reduce used inside the kernel too are computed whole there.
    if (out.producer != root && out.producer->user_count() != 1) {
      splits[k].reset();
      continue;
    }
    const int64_t scratch = operand_count + static_cast<int64_t>(outputs.size()) +
                            static_cast<int64_t>(kernel.scratch_doubles.size());
    kernel.scratch_doubles.push_back(splits[k]->partials * splits[k]->outputs);
    kernel.scratch_doubles.push_back(1);
    SplitReduction split;
    split.output_buffer = out.buffer;
    split.partial_buffer = scratch;
    split.init_buffer = scratch + 1;
    split.partials = splits[k]->partials;
    split.outputs = splits[k]->outputs;
    split.op = splits[k]->op;
    split.f64 = out.shape.element_type() == PrimitiveType::kF64;
    kernel.split_reductions.push_back(split);
    out_base[k] = buffer(split.partial_buffer);
    split_init[k] = buffer(split.init_buffer);
    work = std::max(work, splits[k]->work);
  }

  // Outputs of the same dimensions share one loop (and so their common
  // subexpressions); each group covers [begin, min(end, its size)). A split
  // reduce is a group of its own over its partials x outputs, spread over
  // the whole range in proportion (its work is spread as the rest is).
  std::map<std::pair<int64_t, std::vector<int64_t>>, std::vector<size_t>> groups;
  int64_t extent = 1;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const auto dims = outputs[k].shape.dims();
    if (splits[k]) {
      groups[{static_cast<int64_t>(k) + 1, {}}].push_back(k);
      extent = std::max(extent, splits[k]->partials * splits[k]->outputs);
      continue;
    }
    groups[{0, std::vector<int64_t>(dims.begin(), dims.end())}].push_back(k);
    extent = std::max(extent, outputs[k].shape.element_count());
  }
  for (const auto& [key, members] : groups) {
    if (key.first > 0) {
      const size_t k = members[0];
      const int64_t count = splits[k]->partials * splits[k]->outputs;
      auto scaled = [&](llvm::Value* at) {
        return b.CreateUDiv(b.CreateAdd(b.CreateMul(at, b.getInt64(count)), b.getInt64(extent - 1)),
                            b.getInt64(extent));
      };
      RETURN_IF_ERROR(EmitSplitReduce(emitter, *outputs[k].producer, *splits[k], out_base[k],
                                      split_init[k], scaled(begin), scaled(end)));
      continue;
    }
    const std::vector<int64_t>& dims = key.second;
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    if (count == 0) continue;
    llvm::Value* hi =
        b.CreateSelect(b.CreateICmpSLT(end, b.getInt64(count)), end, b.getInt64(count));
    if (std::all_of(members.begin(), members.end(),
                    [&](size_t k) { return IsColumnReduce(outputs[k]); })) {
      for (size_t k : members) {
        RETURN_IF_ERROR(EmitColumnReduce(emitter, outputs[k], out_base[k], begin, hi));
      }
      continue;
    }
    std::vector<const Instruction*> producers;
    for (size_t k : members) producers.push_back(outputs[k].producer);
    auto store_all = [&](const IrIndex& index, llvm::Value* linear) -> absl::Status {
      // Sibling row sums share one loop over their rows.
      if (producers.size() > 1) RETURN_IF_ERROR(emitter.EmitSiblingSums(producers, index));
      for (size_t k : members) {
        const KernelOutput& out = outputs[k];
        ASSIGN_OR_RETURN(std::vector<llvm::Value*> values,
                         emitter.EmitElements(*out.producer, index));
        const PrimitiveType type = out.shape.element_type();
        llvm::Value* stored = emitter.ToStorage(type, values.at(out.leaf));
        b.CreateStore(stored, b.CreateInBoundsGEP(emitter.StorageType(type), out_base[k], linear));
      }
      return absl::OkStatus();
    };
    const int64_t inner = dims.empty() ? 1 : dims.back();
    std::vector<int64_t> outer_dims(dims.begin(), dims.empty() ? dims.end() : dims.end() - 1);
    // Columns split where a concatenate or pad the outputs read through
    // changes operand (backend/index_breakpoints.h): one loop per segment.
    std::vector<int64_t> segments = {0, inner};
    if (!dims.empty()) {
      std::set<int64_t> breakpoints;
      for (size_t k : members) {
        for (int64_t p : IndexBreakpoints(*outputs[k].producer, dims.size() - 1)) {
          breakpoints.insert(p);
        }
      }
      if (static_cast<int64_t>(breakpoints.size()) < kMaxLoopSegments) {
        segments.insert(segments.begin() + 1, breakpoints.begin(), breakpoints.end());
      }
    }
    // Rows of the innermost dimension, and the part of each row in range.
    llvm::Value* row_lo = b.CreateSDiv(begin, b.getInt64(inner));
    llvm::Value* row_hi = b.CreateSDiv(b.CreateAdd(hi, b.getInt64(inner - 1)), b.getInt64(inner));
    RETURN_IF_ERROR(emitter.EmitLoop(
        b.CreateSub(row_hi, row_lo), "row", [&](llvm::Value* r) -> absl::Status {
          llvm::Value* row = b.CreateAdd(r, row_lo);
          llvm::Value* row_start = b.CreateMul(row, b.getInt64(inner));
          llvm::Value* j_lo = b.CreateSub(begin, row_start);
          j_lo = b.CreateSelect(b.CreateICmpSLT(j_lo, b.getInt64(0)), b.getInt64(0), j_lo);
          llvm::Value* j_hi = b.CreateSub(hi, row_start);
          j_hi = b.CreateSelect(b.CreateICmpSGT(j_hi, b.getInt64(inner)), b.getInt64(inner), j_hi);
          IrIndex outer;
          if (!outer_dims.empty()) {
            // Row-major row number to the outer indices.
            llvm::Value* rest = row;
            outer.resize(outer_dims.size());
            for (size_t d = outer_dims.size(); d-- > 0;) {
              if (d == 0) {
                outer[d] = rest;
              } else {
                outer[d] = b.CreateURem(rest, b.getInt64(outer_dims[d]));
                rest = b.CreateUDiv(rest, b.getInt64(outer_dims[d]));
              }
              emitter.SetIndexRange(outer[d], 0, outer_dims[d] - 1);
            }
          }
          for (size_t s = 0; s + 1 < segments.size(); ++s) {
            // This task's part of segment s: [max(j_lo, a), min(j_hi, b)).
            const int64_t a = segments[s], e = segments[s + 1];
            llvm::Value* lo =
                b.CreateSelect(b.CreateICmpSGT(j_lo, b.getInt64(a)), j_lo, b.getInt64(a));
            llvm::Value* up =
                b.CreateSelect(b.CreateICmpSLT(j_hi, b.getInt64(e)), j_hi, b.getInt64(e));
            llvm::Value* trip = b.CreateSub(up, lo);
            trip = b.CreateSelect(b.CreateICmpSLT(trip, b.getInt64(0)), b.getInt64(0), trip);
            RETURN_IF_ERROR(emitter.EmitLoop(
                trip, absl::StrCat("col", s), [&](llvm::Value* c) -> absl::Status {
                  llvm::Value* j = b.CreateAdd(c, lo, "", /*HasNUW=*/true, /*HasNSW=*/true);
                  emitter.SetIndexRange(j, a, e - 1);
                  IrIndex index = outer;
                  if (!dims.empty()) index.push_back(j);
                  return store_all(index, b.CreateAdd(row_start, j));
                }));
          }
          return absl::OkStatus();
        }));
  }
  b.CreateRetVoid();

  ASSIGN_OR_RETURN(void* address, jit_->Add(std::move(module), std::move(context), name));
  kernel.fn = reinterpret_cast<CpuKernelFn>(address);
  kernel.parallel_extent = extent;
  // A split reduce's work per element of the range is that of a partial
  // result, not of a whole output.
  if (kernel.split_reductions.empty()) {
    work = WorkPerElement(instruction);
  } else {
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Instruction& p = *outputs[k].producer;
      if (splits[k] || p.opcode() != Opcode::kReduce) continue;
      work = std::max(work, p.operand(0)->shape().element_count() /
                                std::max<int64_t>(1, outputs[k].shape.element_count()));
    }
  }
  kernel.grain = std::max<int64_t>(1, 32768 / work);
  return kernel;
}

}  // namespace

bool CpuKernelCompiler::CanCompile(const Instruction& instruction) {
  return CanCompileKernel(instruction);
}

absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> CpuKernelCompiler::Create() {
  ASSIGN_OR_RETURN(std::unique_ptr<CpuJit> jit, CpuJit::Create());
  return std::unique_ptr<CpuKernelCompiler>(new LlvmCpuKernelCompiler(std::move(jit)));
}

}  // namespace hlogym

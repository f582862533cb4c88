#include "backend/gpu_kernel_emitter.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/elemental_emitter.h"
#include "backend/kernel_plan.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace hlogym {
namespace {

constexpr unsigned kGlobalSpace = 1;
constexpr unsigned kSharedSpace = 3;
constexpr int64_t kLoopThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // the rest is grid-stride

// Math functions come from libdevice (__nv_expf, __nv_tanh, ...), which the
// PTX compiler links in; computing exp/tanh in double as on the CPU would be
// slow on most GPUs.
class NvptxElementalEmitter : public ElementalEmitter {
 public:
  using ElementalEmitter::ElementalEmitter;

 protected:
  llvm::Value* EmitMathCall(absl::string_view name, absl::Span<llvm::Value* const> args,
                            llvm::Type* type) override {
    std::string symbol = absl::StrCat("__nv_", std::string(name), type->isFloatTy() ? "f" : "");
    std::vector<llvm::Type*> params(args.size(), type);
    llvm::Module* module = builder()->GetInsertBlock()->getModule();
    llvm::FunctionCallee callee =
        module->getOrInsertFunction(symbol, llvm::FunctionType::get(type, params, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotAccessMemory();
      f->setDoesNotThrow();
      f->setWillReturn();
    }
    return builder()->CreateCall(callee, std::vector<llvm::Value*>(args.begin(), args.end()));
  }
  bool InlineFloatMath() const override { return false; }
};

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Builds one kernel function; the two kernel shapes are its methods.
class KernelBuilder {
 public:
  KernelBuilder(const Instruction& instruction, const std::string& name, llvm::Module* module)
      : instruction_(instruction), b_(module->getContext()), emitter_(&b_, module) {
    llvm::LLVMContext& ctx = module->getContext();
    const int64_t operands = instruction.operand_count();
    buffer_count_ = operands + static_cast<int64_t>(
                                   instruction.shape().IsTuple() ? instruction.shape().tuple_size()
                                                                 : 1);
    std::vector<llvm::Type*> params(buffer_count_, llvm::PointerType::get(ctx, kGlobalSpace));
    function_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                       llvm::Function::ExternalLinkage, name, module);
    function_->addFnAttr(llvm::Attribute::NoUnwind);
    for (int64_t i = 0; i < buffer_count_; ++i) {
      // Buffers of one kernel never overlap (buffer assignment gives each live
      // value its own bytes), and inputs are only read.
      function_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
      if (i < operands) function_->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::ReadOnly);
    }
    llvm::NamedMDNode* annotations = module->getOrInsertNamedMetadata("nvvm.annotations");
    annotations->addOperand(llvm::MDNode::get(
        ctx, {llvm::ValueAsMetadata::get(function_), llvm::MDString::get(ctx, "kernel"),
              llvm::ValueAsMetadata::get(b_.getInt32(1))}));
    entry_ = llvm::BasicBlock::Create(ctx, "entry", function_);
    b_.SetInsertPoint(entry_);

    ElementalEmitter::ParameterReader reader =
        [this](int64_t number, const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      if (number < 0 || number >= instruction_.operand_count()) {
        return absl::InternalError(absl::StrCat("parameter ", number, " out of range"));
      }
      const Shape& shape = instruction_.operand(number)->shape();
      llvm::Type* storage = emitter_.StorageType(shape.element_type());
      llvm::Value* ptr = b_.CreateInBoundsGEP(storage, function_->getArg(number),
                                              Linearize(shape.dims(), index));
      return b_.CreateLoad(storage, ptr);
    };
    if (instruction.IsFusion()) {
      root_ = instruction.fused_computation()->root();
      emitter_.BindComputation(instruction.fused_computation(), reader);
    } else {
      root_ = &instruction;
      emitter_.BindUnfused(&instruction, reader);
    }
  }

  int64_t buffer_count() const { return buffer_count_; }
  const Instruction* root() const { return root_; }

  // One thread per output element, grid-stride; outputs of equal dimensions
  // share a loop and so their common subexpressions.
  absl::StatusOr<GpuLaunch> EmitLoopKernel() {
    ASSIGN_OR_RETURN(std::vector<KernelOutput> outputs,
                     KernelOutputs(*root_, instruction_.operand_count()));
    llvm::Value* thread = b_.CreateAdd(b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                                    Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    llvm::Value* stride = b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    RETURN_IF_ERROR(EmitLoopPart(outputs, thread, stride));
    b_.CreateRetVoid();
    GpuLaunch launch;
    launch.threads = kLoopThreads;
    launch.blocks = LoopBlocks(outputs);
    return launch;
  }

  // Blocks of kLoopThreads that give each element of the largest output a
  // thread (up to kMaxBlocks; the loops are grid-stride).
  static int64_t LoopBlocks(const std::vector<KernelOutput>& outputs) {
    int64_t extent = 1;
    for (const KernelOutput& out : outputs) extent = std::max(extent, out.shape.element_count());
    return std::clamp<int64_t>((extent + kLoopThreads - 1) / kLoopThreads, 1, kMaxBlocks);
  }

  // The loops storing `outputs`, with this thread's first element and the
  // grid's stride. Every emitter call is inside a loop body, so the values
  // it caches never cross into another part of the kernel.
  absl::Status EmitLoopPart(const std::vector<KernelOutput>& outputs, llvm::Value* thread,
                            llvm::Value* stride) {
    std::map<std::vector<int64_t>, std::vector<size_t>> groups;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto dims = outputs[k].shape.dims();
      groups[std::vector<int64_t>(dims.begin(), dims.end())].push_back(k);
    }
    for (const auto& [dims, members] : groups) {
      const int64_t count = Product(dims);
      if (count == 0) continue;
      RETURN_IF_ERROR(emitter_.EmitLoop(
          StridedTripCount(thread, stride, count), "element", [&](llvm::Value* k) -> absl::Status {
            llvm::Value* linear = b_.CreateAdd(thread, b_.CreateMul(k, stride));
            const IrIndex index = Delinearize(dims, linear);
            for (size_t m : members) {
              const KernelOutput& out = outputs[m];
              ASSIGN_OR_RETURN(std::vector<llvm::Value*> values,
                               emitter_.EmitElements(*out.producer, index));
              RETURN_IF_ERROR(Store(out, values.at(out.leaf), linear));
            }
            return absl::OkStatus();
          }));
    }
    return absl::OkStatus();
  }

  // A multi-output fusion of reductions and other outputs (a reduce beside an
  // elementwise result): the first blocks reduce, a block per reduction
  // output; the others run the loop part for the other outputs.
  absl::StatusOr<GpuLaunch> EmitMixedKernel(const std::vector<const Instruction*>& reduces) {
    ASSIGN_OR_RETURN(std::vector<KernelOutput> outputs,
                     KernelOutputs(*root_, instruction_.operand_count()));
    std::vector<KernelOutput> rest;
    for (const KernelOutput& out : outputs) {
      if (std::find(reduces.begin(), reduces.end(), out.producer) == reduces.end()) rest.push_back(out);
    }
    const int64_t reduce_blocks = RowBlocks(reduces);
    const int64_t loop_blocks = LoopBlocks(rest);
    llvm::LLVMContext& ctx = b_.getContext();
    llvm::Value* block = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    auto* reduce_part = llvm::BasicBlock::Create(ctx, "reduce_part", function_);
    auto* loop_part = llvm::BasicBlock::Create(ctx, "loop_part", function_);
    b_.CreateCondBr(b_.CreateICmpULT(block, b_.getInt64(reduce_blocks)), reduce_part, loop_part);
    b_.SetInsertPoint(reduce_part);
    RETURN_IF_ERROR(EmitRowReducePart(reduces, block, b_.getInt64(reduce_blocks), kLoopThreads));
    b_.CreateRetVoid();
    b_.SetInsertPoint(loop_part);
    llvm::Value* ntid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
    llvm::Value* thread = b_.CreateAdd(b_.CreateMul(b_.CreateSub(block, b_.getInt64(reduce_blocks)), ntid),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    RETURN_IF_ERROR(EmitLoopPart(rest, thread, b_.CreateMul(b_.getInt64(loop_blocks), ntid)));
    b_.CreateRetVoid();
    GpuLaunch launch;
    launch.threads = kLoopThreads;
    launch.blocks = reduce_blocks + loop_blocks;
    return launch;
  }

  // The reduces a row-reduction kernel computes together, or empty when the
  // root is not a reduction over the operand's minor dimension with rows long
  // enough to share among a block.
  // `mixed` says whether the root also has outputs that are not reductions
  // (then the reduces must have one output each).
  static std::vector<const Instruction*> RowReductions(const Instruction& root, bool* mixed) {
    std::vector<const Instruction*> reduces;
    *mixed = false;
    if (root.opcode() == Opcode::kReduce) {
      reduces.push_back(&root);
    } else if (root.opcode() == Opcode::kTuple) {
      for (const Instruction* operand : root.operands()) {
        if (operand->shape().IsTuple()) return {};
        if (operand->opcode() == Opcode::kReduce) {
          if (std::find(reduces.begin(), reduces.end(), operand) == reduces.end()) reduces.push_back(operand);
        } else {
          *mixed = true;
        }
      }
    }
    if (reduces.empty()) return {};
    const Shape& first = reduces[0]->operand(0)->shape();
    const absl::Span<const int64_t> dims = reduces[0]->dimensions();
    for (const Instruction* r : reduces) {
      if (r->operand(0)->shape().dims() != first.dims() ||
          r->dimensions() != dims) {
        return {};
      }
    }
    if (first.rank() == 0) return {};
    int64_t row = 1;
    for (int64_t d : dims) row *= first.dim(d);
    const int64_t outputs = first.element_count() / std::max<int64_t>(row, 1);
    const bool minor = std::find(dims.begin(), dims.end(), first.rank() - 1) != dims.end();
    // Over the minor dimension a block reads its row coalesced. A column
    // reduction (minor dimension kept) reads coalesced with a thread per
    // output, unless there are too few outputs to fill the GPU (batch norm's
    // per-channel sums): then a block per output, strided reads and all.
    if (row < 32 || (!minor && (outputs >= 8192 || row < 1024))) return {};
    return reduces;
  }

  // A block per output element (grid-stride): each thread folds a strided
  // part of the row, then warps combine with shuffles and shared memory. A
  // thread's partial result starts from its first element, not the init
  // value, so the result is exact for any init value; the reducer must be
  // associative and commutative, as XLA assumes too.
  absl::StatusOr<GpuLaunch> EmitRowReduceKernel(const std::vector<const Instruction*>& reduces) {
    const int64_t blocks = RowBlocks(reduces);
    RETURN_IF_ERROR(EmitRowReducePart(reduces, Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                      b_.getInt64(blocks), RowThreads(reduces)));
    b_.CreateRetVoid();
    GpuLaunch launch;
    launch.threads = RowThreads(reduces);
    launch.blocks = blocks;
    return launch;
  }

  static int64_t RowLength(const std::vector<const Instruction*>& reduces) {
    const Shape& in = reduces[0]->operand(0)->shape();
    int64_t row = 1;
    for (int64_t d : reduces[0]->dimensions()) row *= in.dim(d);
    return row;
  }
  static int64_t RowThreads(const std::vector<const Instruction*>& reduces) {
    return std::min<int64_t>(256, (RowLength(reduces) + 31) / 32 * 32);
  }
  static int64_t RowBlocks(const std::vector<const Instruction*>& reduces) {
    const int64_t rows = reduces[0]->operand(0)->shape().element_count() / std::max<int64_t>(1, RowLength(reduces));
    return std::clamp<int64_t>(rows, 1, kMaxBlocks);
  }

  // The reductions' part of a kernel: block `block` of `blocks` (grid-stride
  // over the reduction outputs), `threads` (a multiple of 32) per block.
  absl::Status EmitRowReducePart(const std::vector<const Instruction*>& reduces, llvm::Value* block,
                                 llvm::Value* blocks, int64_t threads) {
    llvm::LLVMContext& ctx = b_.getContext();
    const Shape& in = reduces[0]->operand(0)->shape();
    const absl::Span<const int64_t> reduced = reduces[0]->dimensions();
    std::vector<int64_t> kept_dims, kept_pos, red_dims, red_pos;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
      (is_reduced ? red_dims : kept_dims).push_back(in.dim(d));
      (is_reduced ? red_pos : kept_pos).push_back(d);
    }
    const int64_t row = Product(red_dims);
    const int64_t rows = Product(kept_dims);
    const int64_t warps = threads / 32;

    // Accumulators: every leaf of every reduce.
    struct Acc {
      const Instruction* reduce;
      int64_t leaf;
      llvm::Type* type;
      llvm::Value* slot;
      llvm::GlobalVariable* shared;
    };
    std::vector<Acc> accs;
    for (const Instruction* r : reduces) {
      const int64_t n = r->operand_count() / 2;
      for (int64_t k = 0; k < n; ++k) {
        llvm::Type* type = emitter_.ValueType(r->operand(k)->shape().element_type());
        llvm::Value* slot = EntryAlloca(type);
        auto* shared = new llvm::GlobalVariable(
            *function_->getParent(), llvm::ArrayType::get(b_.getInt64Ty(), 32), false,
            llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(llvm::ArrayType::get(b_.getInt64Ty(), 32)),
            absl::StrCat("partial", accs.size()), nullptr, llvm::GlobalValue::NotThreadLocal,
            kSharedSpace);
        accs.push_back({r, k, type, slot, shared});
      }
    }
    auto* shared_valid = new llvm::GlobalVariable(
        *function_->getParent(), llvm::ArrayType::get(b_.getInt32Ty(), 32), false,
        llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(llvm::ArrayType::get(b_.getInt32Ty(), 32)),
        "partial_valid", nullptr, llvm::GlobalValue::NotThreadLocal, kSharedSpace);
    llvm::Value* valid_slot = EntryAlloca(b_.getInt1Ty());

    llvm::Value* tid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    llvm::Value* lane = b_.CreateAnd(tid, b_.getInt64(31));
    llvm::Value* warp = b_.CreateLShr(tid, b_.getInt64(5));

    // The operands' values of every reduce at reduced position `j` of output `o`.
    auto values_at = [&](const IrIndex& kept, llvm::Value* j) -> absl::StatusOr<std::vector<std::vector<llvm::Value*>>> {
      const IrIndex red = Delinearize(red_dims, j);
      IrIndex full(in.rank());
      for (size_t i = 0; i < kept_pos.size(); ++i) full[kept_pos[i]] = kept[i];
      for (size_t i = 0; i < red_pos.size(); ++i) full[red_pos[i]] = red[i];
      std::vector<std::vector<llvm::Value*>> values;
      for (const Instruction* r : reduces) {
        std::vector<llvm::Value*> v;
        for (int64_t k = 0; k < r->operand_count() / 2; ++k) {
          ASSIGN_OR_RETURN(llvm::Value * x, emitter_.OperandElement(*r, k, full));
          v.push_back(x);
        }
        values.push_back(std::move(v));
      }
      return values;
    };
    // Applies each reduce's reducer to (accumulators, values).
    auto combine = [&](const std::vector<llvm::Value*>& acc, const std::vector<llvm::Value*>& x)
        -> absl::StatusOr<std::vector<llvm::Value*>> {
      std::vector<llvm::Value*> out;
      size_t a = 0;
      for (const Instruction* r : reduces) {
        const int64_t n = r->operand_count() / 2;
        std::vector<llvm::Value*> args(acc.begin() + a, acc.begin() + a + n);
        args.insert(args.end(), x.begin() + a, x.begin() + a + n);
        ASSIGN_OR_RETURN(std::vector<llvm::Value*> result,
                         emitter_.EmitScalarComputation(*r->to_apply(), args));
        out.insert(out.end(), result.begin(), result.end());
        a += n;
      }
      return out;
    };
    auto flatten = [](const std::vector<std::vector<llvm::Value*>>& v) {
      std::vector<llvm::Value*> out;
      for (const auto& x : v) out.insert(out.end(), x.begin(), x.end());
      return out;
    };
    auto load_accs = [&] {
      std::vector<llvm::Value*> v;
      for (const Acc& a : accs) v.push_back(b_.CreateLoad(a.type, a.slot));
      return v;
    };
    auto store_accs = [&](const std::vector<llvm::Value*>& v) {
      for (size_t i = 0; i < accs.size(); ++i) b_.CreateStore(v[i], accs[i].slot);
    };
    // Folds the partial results of a warp into its lane 0.
    auto warp_reduce = [&]() -> absl::Status {
      for (int offset = 16; offset >= 1; offset /= 2) {
        std::vector<llvm::Value*> acc = load_accs();
        llvm::Value* valid = b_.CreateLoad(b_.getInt1Ty(), valid_slot);
        std::vector<llvm::Value*> other;
        for (llvm::Value* v : acc) other.push_back(ShuffleDown(v, offset));
        llvm::Value* other_valid = b_.CreateTrunc(ShuffleDown(b_.CreateZExt(valid, b_.getInt32Ty()), offset), b_.getInt1Ty());
        other_valid = b_.CreateAnd(other_valid, b_.CreateICmpULT(b_.CreateAdd(lane, b_.getInt64(offset)), b_.getInt64(32)));
        ASSIGN_OR_RETURN(std::vector<llvm::Value*> both, combine(acc, other));
        std::vector<llvm::Value*> next;
        for (size_t i = 0; i < acc.size(); ++i) {
          next.push_back(b_.CreateSelect(b_.CreateAnd(valid, other_valid), both[i],
                                         b_.CreateSelect(other_valid, other[i], acc[i])));
        }
        store_accs(next);
        b_.CreateStore(b_.CreateOr(valid, other_valid), valid_slot);
      }
      return absl::OkStatus();
    };
    // if (cond) { body } with plain stores only inside.
    auto if_then = [&](llvm::Value* cond, const std::function<void()>& body) {
      auto* then = llvm::BasicBlock::Create(ctx, "then", function_);
      auto* done = llvm::BasicBlock::Create(ctx, "done", function_);
      b_.CreateCondBr(cond, then, done);
      b_.SetInsertPoint(then);
      body();
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    };
    auto barrier = [&] { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };

    ASSIGN_OR_RETURN(std::vector<KernelOutput> all_outputs,
                     KernelOutputs(*root_, instruction_.operand_count()));
    std::vector<KernelOutput> outputs;
    for (const KernelOutput& out : all_outputs) {
      if (std::find(reduces.begin(), reduces.end(), out.producer) != reduces.end()) outputs.push_back(out);
    }
    RETURN_IF_ERROR(emitter_.EmitLoop(
        StridedTripCount(block, blocks, rows), "row", [&](llvm::Value* k) -> absl::Status {
          llvm::Value* o = b_.CreateAdd(block, b_.CreateMul(k, blocks));
          const IrIndex kept = Delinearize(kept_dims, o);
          // The thread's first element (a clamped position when it has none).
          llvm::Value* has_first = b_.CreateICmpSLT(tid, b_.getInt64(row));
          llvm::Value* first = b_.CreateSelect(has_first, tid, b_.getInt64(row - 1));
          ASSIGN_OR_RETURN(auto first_values, values_at(kept, first));
          store_accs(flatten(first_values));
          b_.CreateStore(has_first, valid_slot);
          // The rest of its elements: tid + T, tid + 2T, ...
          llvm::Value* rest = b_.CreateSelect(
              has_first, b_.CreateUDiv(b_.CreateSub(b_.getInt64(row - 1), tid), b_.getInt64(threads)),
              b_.getInt64(0));
          RETURN_IF_ERROR(emitter_.EmitLoop(rest, "fold", [&](llvm::Value* i) -> absl::Status {
            llvm::Value* j = b_.CreateAdd(tid, b_.CreateMul(b_.CreateAdd(i, b_.getInt64(1)),
                                                            b_.getInt64(threads)));
            ASSIGN_OR_RETURN(auto x, values_at(kept, j));
            ASSIGN_OR_RETURN(std::vector<llvm::Value*> next, combine(load_accs(), flatten(x)));
            store_accs(next);
            return absl::OkStatus();
          }));
          RETURN_IF_ERROR(warp_reduce());
          if (warps > 1) {
            if_then(b_.CreateICmpEQ(lane, b_.getInt64(0)), [&] {
              std::vector<llvm::Value*> acc = load_accs();
              for (size_t i = 0; i < accs.size(); ++i) {
                b_.CreateStore(ToBits64(acc[i]), SharedSlot(accs[i].shared, b_.getInt64Ty(), warp));
              }
              b_.CreateStore(b_.CreateZExt(b_.CreateLoad(b_.getInt1Ty(), valid_slot), b_.getInt32Ty()),
                             SharedSlot(shared_valid, b_.getInt32Ty(), warp));
            });
            barrier();
            // Every warp reads the partials (lanes past the warp count read
            // none) and folds them; warp 0's result is the one stored.
            llvm::Value* in_range = b_.CreateICmpULT(lane, b_.getInt64(warps));
            llvm::Value* at = b_.CreateSelect(in_range, lane, b_.getInt64(0));
            std::vector<llvm::Value*> partial;
            for (const Acc& a : accs) {
              partial.push_back(FromBits64(b_.CreateLoad(b_.getInt64Ty(), SharedSlot(a.shared, b_.getInt64Ty(), at)), a.type));
            }
            store_accs(partial);
            llvm::Value* v = b_.CreateLoad(b_.getInt32Ty(), SharedSlot(shared_valid, b_.getInt32Ty(), at));
            b_.CreateStore(b_.CreateAnd(in_range, b_.CreateICmpNE(v, b_.getInt32(0))), valid_slot);
            RETURN_IF_ERROR(warp_reduce());
          }
          // result = reducer(init, partial) where any element was folded.
          std::vector<llvm::Value*> inits;
          for (const Instruction* r : reduces) {
            const int64_t n = r->operand_count() / 2;
            for (int64_t i = 0; i < n; ++i) {
              ASSIGN_OR_RETURN(llvm::Value * init, emitter_.OperandElement(*r, n + i, IrIndex{}));
              inits.push_back(init);
            }
          }
          std::vector<llvm::Value*> acc = load_accs();
          ASSIGN_OR_RETURN(std::vector<llvm::Value*> with_init, combine(inits, acc));
          llvm::Value* valid = b_.CreateLoad(b_.getInt1Ty(), valid_slot);
          std::vector<llvm::Value*> result;
          for (size_t i = 0; i < acc.size(); ++i) {
            result.push_back(b_.CreateSelect(valid, with_init[i], inits[i]));
          }
          absl::Status stored = absl::OkStatus();
          if_then(b_.CreateICmpEQ(tid, b_.getInt64(0)), [&] {
            for (const KernelOutput& out : outputs) {
              size_t a = 0;
              while (a < accs.size() && !(accs[a].reduce == out.producer && accs[a].leaf == out.leaf)) ++a;
              if (a == accs.size()) {
                stored = absl::InternalError("row reduction output without accumulator");
                return;
              }
              stored.Update(Store(out, result[a], o));
            }
          });
          RETURN_IF_ERROR(stored);
          if (warps > 1) barrier();  // the next row reuses the shared partials
          return absl::OkStatus();
        }));
    return absl::OkStatus();
  }

  // A thread per slice position (grid-stride) walks the scan dimension,
  // evaluating the elementwise body at its position with the carries in
  // registers.
  absl::StatusOr<GpuLaunch> EmitScanKernel() {
    const Instruction& scan = instruction_;
    const auto& a = scan.attrs<ScanAttrs>();
    const int64_t dim = scan.dimension(0);
    const int64_t carries = a.num_carries;
    const int64_t inputs = scan.operand_count() - carries;
    const int64_t outputs = scan.shape().tuple_size() - carries;
    const Shape& in = scan.operand(0)->shape();
    const int64_t length = in.dim(dim);
    std::vector<int64_t> slice_dims;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (d != dim) slice_dims.push_back(in.dim(d));
    }
    const int64_t positions = Product(slice_dims);
    const Computation& body = *scan.to_apply();
    // Carries live in storage-typed slots between steps.
    std::vector<llvm::Value*> slots;
    std::vector<PrimitiveType> carry_types;
    for (int64_t k = 0; k < carries; ++k) {
      carry_types.push_back(scan.operand(inputs + k)->shape().element_type());
      slots.push_back(EntryAlloca(emitter_.StorageType(carry_types.back())));
    }
    llvm::Value* t_value = nullptr;  // the current step, while emitting a step
    ElementalEmitter::ParameterReader reader =
        [&](int64_t number, const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
      if (number >= inputs) {
        const int64_t k = number - inputs;
        return b_.CreateLoad(emitter_.StorageType(carry_types[k]), slots[k]);
      }
      IrIndex full(index.begin(), index.end());
      full.insert(full.begin() + dim, t_value);
      const Shape& shape = scan.operand(number)->shape();
      llvm::Type* storage = emitter_.StorageType(shape.element_type());
      return b_.CreateLoad(storage, b_.CreateInBoundsGEP(storage, function_->getArg(number),
                                                         Linearize(shape.dims(), full)));
    };
    emitter_.BindComputation(&body, reader);
    llvm::Value* thread = b_.CreateAdd(b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                                    Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    llvm::Value* stride = b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    const int64_t first_result = scan.operand_count();
    RETURN_IF_ERROR(emitter_.EmitLoop(
        StridedTripCount(thread, stride, positions), "position", [&](llvm::Value* p) -> absl::Status {
          llvm::Value* position = b_.CreateAdd(thread, b_.CreateMul(p, stride));
          const IrIndex slice = Delinearize(slice_dims, position);
          for (int64_t k = 0; k < carries; ++k) {
            const Shape& shape = scan.operand(inputs + k)->shape();
            llvm::Type* storage = emitter_.StorageType(shape.element_type());
            b_.CreateStore(b_.CreateLoad(storage, b_.CreateInBoundsGEP(
                                                      storage, function_->getArg(inputs + k),
                                                      Linearize(shape.dims(), slice))),
                           slots[k]);
          }
          RETURN_IF_ERROR(emitter_.EmitLoop(b_.getInt64(length), "step", [&](llvm::Value* i) -> absl::Status {
            t_value = a.is_reverse ? b_.CreateSub(b_.getInt64(length - 1), i) : i;
            ASSIGN_OR_RETURN(std::vector<llvm::Value*> values, emitter_.EmitElements(*body.root(), slice));
            IrIndex full(slice.begin(), slice.end());
            full.insert(full.begin() + dim, t_value);
            for (int64_t k = 0; k < outputs; ++k) {
              const Shape& shape = scan.shape().tuple_shape(k);
              const PrimitiveType type = shape.element_type();
              llvm::Type* storage = emitter_.StorageType(type);
              b_.CreateStore(emitter_.ToStorage(type, values.at(k)),
                             b_.CreateInBoundsGEP(storage, function_->getArg(first_result + k),
                                                  Linearize(shape.dims(), full)));
            }
            for (int64_t k = 0; k < carries; ++k) {
              b_.CreateStore(emitter_.ToStorage(carry_types[k], values.at(outputs + k)), slots[k]);
            }
            return absl::OkStatus();
          }));
          for (int64_t k = 0; k < carries; ++k) {
            const Shape& shape = scan.shape().tuple_shape(outputs + k);
            llvm::Type* storage = emitter_.StorageType(carry_types[k]);
            b_.CreateStore(b_.CreateLoad(storage, slots[k]),
                           b_.CreateInBoundsGEP(storage, function_->getArg(first_result + outputs + k),
                                                Linearize(shape.dims(), slice)));
          }
          return absl::OkStatus();
        }));
    b_.CreateRetVoid();
    GpuLaunch launch;
    launch.threads = kLoopThreads;
    launch.blocks = std::clamp<int64_t>((positions + kLoopThreads - 1) / kLoopThreads, 1, kMaxBlocks);
    return launch;
  }

  // A thread per update element (grid-stride): finds its operand element as
  // the interpreter does (update windows that do not fit are skipped) and
  // combines into the result, which already holds the operand.
  absl::StatusOr<GpuLaunch> EmitScatterKernel() {
    const Instruction& scatter = instruction_;
    const ScatterDimensions& s = scatter.attrs<ScatterAttrs>().dims;
    const Shape& operand = scatter.operand(0)->shape();
    const Shape& indices = scatter.operand(1)->shape();
    const Shape& updates = scatter.operand(2)->shape();
    const PrimitiveType type = operand.element_type();
    const int64_t r = operand.rank();
    auto contains = [](const std::vector<int64_t>& v, int64_t x) {
      return std::find(v.begin(), v.end(), x) != v.end();
    };
    std::vector<int64_t> window_dims, update_scatter_dims, index_batch_dims;
    for (int64_t d = 0; d < r; ++d) {
      if (!contains(s.inserted_window_dims, d) && !contains(s.input_batching_dims, d)) window_dims.push_back(d);
    }
    for (int64_t d = 0; d < updates.rank(); ++d) {
      if (!contains(s.update_window_dims, d)) update_scatter_dims.push_back(d);
    }
    for (int64_t d = 0; d < indices.rank(); ++d) {
      if (d != s.index_vector_dim) index_batch_dims.push_back(d);
    }
    std::vector<int64_t> window_size(r, 1);
    for (size_t j = 0; j < window_dims.size(); ++j) {
      window_size[window_dims[j]] = updates.dim(s.update_window_dims[j]);
    }
    auto strides = [](absl::Span<const int64_t> dims) {
      std::vector<int64_t> out(dims.size(), 1);
      for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) out[d] = out[d + 1] * dims[d + 1];
      return out;
    };
    const std::vector<int64_t> operand_strides = strides(operand.dims());
    const std::vector<int64_t> index_strides = strides(indices.dims());
    llvm::Type* index_storage = emitter_.StorageType(indices.element_type());
    const bool signed_index = IsSignedInteger(indices.element_type());
    llvm::Type* storage = emitter_.StorageType(type);
    llvm::Type* word = b_.getIntNTy(static_cast<unsigned>(8 * ByteWidth(type)));
    const Computation& combiner = *scatter.to_apply();
    const Instruction* root = combiner.root();
    const bool assign = root->opcode() == Opcode::kParameter && root->parameter_number() == 1;
    const bool add = root->opcode() == Opcode::kAdd && root->operand(0)->opcode() == Opcode::kParameter &&
                     root->operand(1)->opcode() == Opcode::kParameter &&
                     root->operand(0) != root->operand(1);
    llvm::LLVMContext& ctx = b_.getContext();

    llvm::Value* thread = b_.CreateAdd(b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                                    Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    llvm::Value* stride = b_.CreateMul(Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                       Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
    const int64_t count = updates.element_count();
    RETURN_IF_ERROR(emitter_.EmitLoop(
        StridedTripCount(thread, stride, count), "update", [&](llvm::Value* k) -> absl::Status {
          llvm::Value* i = b_.CreateAdd(thread, b_.CreateMul(k, stride));
          const IrIndex index = Delinearize(updates.dims(), i);
          auto read_index = [&](int64_t component) {
            llvm::Value* linear = b_.getInt64(0);
            for (size_t j = 0; j < index_batch_dims.size(); ++j) {
              linear = b_.CreateAdd(linear, b_.CreateMul(index[update_scatter_dims[j]],
                                                         b_.getInt64(index_strides[index_batch_dims[j]])));
            }
            if (s.index_vector_dim < indices.rank()) {
              linear = b_.CreateAdd(linear, b_.getInt64(component * index_strides[s.index_vector_dim]));
            }
            llvm::Value* v = b_.CreateLoad(index_storage, b_.CreateInBoundsGEP(index_storage, function_->getArg(1), linear));
            return signed_index ? b_.CreateSExtOrTrunc(v, b_.getInt64Ty()) : b_.CreateZExtOrTrunc(v, b_.getInt64Ty());
          };
          std::vector<llvm::Value*> start(r, b_.getInt64(0));
          for (size_t c = 0; c < s.scatter_dims_to_operand_dims.size(); ++c) {
            start[s.scatter_dims_to_operand_dims[c]] = read_index(static_cast<int64_t>(c));
          }
          for (size_t c = 0; c < s.input_batching_dims.size(); ++c) {
            const size_t j = std::find(index_batch_dims.begin(), index_batch_dims.end(),
                                       s.scatter_indices_batching_dims[c]) - index_batch_dims.begin();
            start[s.input_batching_dims[c]] = j < update_scatter_dims.size() ? index[update_scatter_dims[j]] : b_.getInt64(0);
          }
          llvm::Value* in_bounds = b_.getTrue();
          llvm::Value* target = b_.getInt64(0);
          for (int64_t d = 0; d < r; ++d) {
            in_bounds = b_.CreateAnd(in_bounds, b_.CreateICmpSGE(start[d], b_.getInt64(0)));
            in_bounds = b_.CreateAnd(in_bounds, b_.CreateICmpSLE(start[d], b_.getInt64(operand.dim(d) - window_size[d])));
            target = b_.CreateAdd(target, b_.CreateMul(start[d], b_.getInt64(operand_strides[d])));
          }
          for (size_t j = 0; j < window_dims.size(); ++j) {
            target = b_.CreateAdd(target, b_.CreateMul(index[s.update_window_dims[j]],
                                                       b_.getInt64(operand_strides[window_dims[j]])));
          }
          auto* apply = llvm::BasicBlock::Create(ctx, "apply", function_);
          auto* done = llvm::BasicBlock::Create(ctx, "applied", function_);
          b_.CreateCondBr(in_bounds, apply, done);
          b_.SetInsertPoint(apply);
          llvm::Value* update = b_.CreateLoad(storage, b_.CreateInBoundsGEP(storage, function_->getArg(2), i));
          llvm::Value* ptr = b_.CreateInBoundsGEP(storage, function_->getArg(3), target);
          if (assign) {
            b_.CreateStore(update, ptr);
          } else if (add) {
            b_.CreateAtomicRMW(IsFloat(type) ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, ptr,
                               update, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
          } else {
            // Compare-and-swap until no other thread changed the element in
            // between.
            llvm::Value* first = b_.CreateLoad(word, ptr);
            llvm::BasicBlock* entry = b_.GetInsertBlock();
            auto* retry = llvm::BasicBlock::Create(ctx, "cas", function_);
            auto* exit = llvm::BasicBlock::Create(ctx, "cas.done", function_);
            b_.CreateBr(retry);
            b_.SetInsertPoint(retry);
            llvm::PHINode* old = b_.CreatePHI(word, 2);
            old->addIncoming(first, entry);
            llvm::Value* old_value = emitter_.FromStorage(type, b_.CreateBitCast(old, storage));
            llvm::Value* new_value = emitter_.FromStorage(type, update);
            absl::StatusOr<std::vector<llvm::Value*>> combined =
                emitter_.EmitScalarComputation(combiner, {old_value, new_value});
            if (!combined.ok()) return combined.status();
            llvm::Value* desired = b_.CreateBitCast(emitter_.ToStorage(type, combined->at(0)), word);
            llvm::Value* pair = b_.CreateAtomicCmpXchg(ptr, old, desired, llvm::MaybeAlign(),
                                                       llvm::AtomicOrdering::Monotonic,
                                                       llvm::AtomicOrdering::Monotonic);
            llvm::Value* seen = b_.CreateExtractValue(pair, 0);
            old->addIncoming(seen, b_.GetInsertBlock());
            b_.CreateCondBr(b_.CreateExtractValue(pair, 1), exit, retry);
            b_.SetInsertPoint(exit);
          }
          b_.CreateBr(done);
          b_.SetInsertPoint(done);
          return absl::OkStatus();
        }));
    b_.CreateRetVoid();
    GpuLaunch launch;
    launch.threads = kLoopThreads;
    launch.blocks = std::clamp<int64_t>((count + kLoopThreads - 1) / kLoopThreads, 1, kMaxBlocks);
    return launch;
  }

 private:
  llvm::Value* Sreg(llvm::Intrinsic::ID id) {
    return b_.CreateZExt(b_.CreateIntrinsic(id, {}, {}), b_.getInt64Ty());
  }

  llvm::Value* EntryAlloca(llvm::Type* type) {
    llvm::IRBuilder<> entry(entry_, entry_->begin());
    return entry.CreateAlloca(type);
  }

  // Iterations of `first + k * stride < count` for k = 0, 1, ...
  llvm::Value* StridedTripCount(llvm::Value* first, llvm::Value* stride, int64_t count) {
    llvm::Value* left = b_.CreateSub(b_.getInt64(count), first);
    llvm::Value* trips =
        b_.CreateUDiv(b_.CreateAdd(left, b_.CreateSub(stride, b_.getInt64(1))), stride);
    return b_.CreateSelect(b_.CreateICmpSLT(first, b_.getInt64(count)), trips, b_.getInt64(0));
  }

  llvm::Value* Linearize(absl::Span<const int64_t> dims, const IrIndex& index) {
    llvm::Value* linear = b_.getInt64(0);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      linear = b_.CreateAdd(b_.CreateMul(linear, b_.getInt64(dims[d]), "", true, true), index[d],
                            "", true, true);
    }
    return linear;
  }

  IrIndex Delinearize(absl::Span<const int64_t> dims, llvm::Value* linear) {
    IrIndex index(dims.size());
    for (size_t d = dims.size(); d-- > 0;) {
      if (d == 0) {
        index[d] = linear;
      } else if (dims[d] == 1) {
        index[d] = b_.getInt64(0);
      } else {
        index[d] = b_.CreateURem(linear, b_.getInt64(dims[d]));
        linear = b_.CreateUDiv(linear, b_.getInt64(dims[d]));
      }
    }
    return index;
  }

  absl::Status Store(const KernelOutput& out, llvm::Value* value, llvm::Value* linear) {
    const PrimitiveType type = out.shape.element_type();
    llvm::Type* storage = emitter_.StorageType(type);
    b_.CreateStore(emitter_.ToStorage(type, value),
                   b_.CreateInBoundsGEP(storage, function_->getArg(out.buffer), linear));
    return absl::OkStatus();
  }

  // A value's bits in 32 (or 64) bits, and back, for shuffles and shared memory.
  llvm::Value* ToBits64(llvm::Value* v) {
    llvm::Type* t = v->getType();
    if (t->isFloatTy()) return b_.CreateZExt(b_.CreateBitCast(v, b_.getInt32Ty()), b_.getInt64Ty());
    if (t->isDoubleTy()) return b_.CreateBitCast(v, b_.getInt64Ty());
    return b_.CreateZExtOrTrunc(v, b_.getInt64Ty());
  }
  llvm::Value* FromBits64(llvm::Value* bits, llvm::Type* t) {
    if (t->isFloatTy()) return b_.CreateBitCast(b_.CreateTrunc(bits, b_.getInt32Ty()), t);
    if (t->isDoubleTy()) return b_.CreateBitCast(bits, t);
    return b_.CreateZExtOrTrunc(bits, t);
  }
  llvm::Value* Shuffle32(llvm::Value* v32, int offset) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                              {b_.getInt32(0xffffffffu), v32, b_.getInt32(offset), b_.getInt32(31)});
  }
  llvm::Value* ShuffleDown(llvm::Value* v, int offset) {
    llvm::Type* t = v->getType();
    const unsigned bits = t->getPrimitiveSizeInBits().getFixedValue();
    if (bits <= 32) {
      llvm::Value* word = t->isFloatTy() ? b_.CreateBitCast(v, b_.getInt32Ty())
                                         : b_.CreateZExtOrTrunc(v, b_.getInt32Ty());
      llvm::Value* got = Shuffle32(word, offset);
      return t->isFloatTy() ? b_.CreateBitCast(got, t) : b_.CreateZExtOrTrunc(got, t);
    }
    llvm::Value* wide = ToBits64(v);
    llvm::Value* lo = Shuffle32(b_.CreateTrunc(wide, b_.getInt32Ty()), offset);
    llvm::Value* hi = Shuffle32(b_.CreateTrunc(b_.CreateLShr(wide, 32), b_.getInt32Ty()), offset);
    llvm::Value* joined = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()),
                                      b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return FromBits64(joined, t);
  }
  llvm::Value* SharedSlot(llvm::GlobalVariable* array, llvm::Type* element, llvm::Value* i) {
    return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt64(0), i});
    (void)element;
  }

  const Instruction& instruction_;
  llvm::IRBuilder<> b_;
  NvptxElementalEmitter emitter_;
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  const Instruction* root_ = nullptr;
  int64_t buffer_count_ = 0;
};

}  // namespace

bool IsGpuScan(const Instruction& scan) {
  if (scan.opcode() != Opcode::kScan || !scan.has_attrs<ScanAttrs>() || !scan.shape().IsTuple() ||
      scan.dimensions().size() != 1 || scan.to_apply() == nullptr || scan.operand_count() == 0) {
    return false;
  }
  const auto& a = scan.attrs<ScanAttrs>();
  const int64_t dim = scan.dimension(0);
  const int64_t inputs = scan.operand_count() - a.num_carries;
  if (inputs < 1 || !scan.operand(0)->shape().IsArray()) return false;
  const Shape& in = scan.operand(0)->shape();
  std::vector<int64_t> slice;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (d != dim) slice.push_back(in.dim(d));
  }
  auto is_slice = [&](const Shape& s) {
    return s.IsArray() && std::vector<int64_t>(s.dims().begin(), s.dims().end()) == slice;
  };
  for (int64_t k = 0; k < scan.operand_count(); ++k) {
    const Shape& s = scan.operand(k)->shape();
    if (k < inputs ? !(s.IsArray() && s.dims() == in.dims()) : !is_slice(s)) return false;
  }
  const int64_t outputs = scan.shape().tuple_size() - a.num_carries;
  for (int64_t k = 0; k < scan.shape().tuple_size(); ++k) {
    const Shape& s = scan.shape().tuple_shape(k);
    if (k < outputs ? !(s.IsArray() && s.dims() == in.dims()) : !is_slice(s)) return false;
  }
  // Elementwise over the slice: every value at a position depends only on
  // the same position of the parameters.
  const Computation& body = *scan.to_apply();
  for (const auto& i : body.instructions()) {
    const Opcode op = i->opcode();
    const bool scalar_broadcast = op == Opcode::kBroadcast && i->operand(0)->shape().rank() == 0;
    const bool scalar_constant = op == Opcode::kConstant && i->shape().rank() == 0;
    if (!(IsElementwise(op) || op == Opcode::kParameter || scalar_broadcast || scalar_constant ||
          (op == Opcode::kTuple && i.get() == body.root()))) {
      return false;
    }
    if (op != Opcode::kTuple && i->shape().rank() != 0 && !is_slice(i->shape())) return false;
  }
  return body.root()->opcode() == Opcode::kTuple &&
         ElementalEmitter::CheckSupported(body).ok();
}

bool IsGpuScatter(const Instruction& scatter) {
  if (scatter.opcode() != Opcode::kScatter || scatter.operand_count() != 3 ||
      !scatter.has_attrs<ScatterAttrs>() || scatter.to_apply() == nullptr ||
      !scatter.shape().IsArray()) {
    return false;
  }
  for (const Instruction* o : scatter.operands()) {
    if (!o->shape().IsArray()) return false;
  }
  const PrimitiveType type = scatter.shape().element_type();
  const int width = ByteWidth(type);
  if ((width != 4 && width != 8) || !(IsFloat(type) || IsInteger(type)) ||
      !IsInteger(scatter.operand(1)->shape().element_type()) ||
      scatter.operand(2)->shape().element_type() != type) {
    return false;
  }
  const Computation& combiner = *scatter.to_apply();
  return combiner.parameter_count() == 2 && combiner.root()->shape().IsArray() &&
         ElementalEmitter::CheckSupported(combiner).ok();
}

bool IsGpuKernel(const Instruction& instruction) {
  bool arrays = instruction.shape().IsArray() || instruction.shape().IsTuple();
  for (const Instruction* operand : instruction.operands()) arrays &= operand->shape().IsArray();
  return (arrays && CanCompileKernel(instruction)) || IsGpuScan(instruction) ||
         IsGpuScatter(instruction);
}

absl::StatusOr<GpuKernelIr> EmitGpuKernelInto(const Instruction& instruction,
                                              const std::string& name, llvm::Module* module) {
  if (IsGpuScatter(instruction)) {
    GpuKernelIr kernel;
    kernel.name = name;
    KernelBuilder builder(instruction, name, module);
    kernel.buffer_count = builder.buffer_count();
    kernel.kind = "scatter";
    ASSIGN_OR_RETURN(kernel.launch, builder.EmitScatterKernel());
    return kernel;
  }
  if (IsGpuScan(instruction)) {
    GpuKernelIr kernel;
    kernel.name = name;
    KernelBuilder builder(instruction, name, module);
    kernel.buffer_count = builder.buffer_count();
    kernel.kind = "scan";
    ASSIGN_OR_RETURN(kernel.launch, builder.EmitScanKernel());
    return kernel;
  }
  if (!CanCompileKernel(instruction)) {
    return absl::UnimplementedError(absl::StrCat(
        "not supported: ", std::string(OpcodeName(instruction.opcode())), " (", instruction.name(),
        ") is not a GPU kernel"));
  }
  for (const Instruction* operand : instruction.operands()) {
    if (!operand->shape().IsArray()) {
      return absl::UnimplementedError(absl::StrCat("not supported: tuple operand of `",
                                                   instruction.name(), "` in a GPU kernel"));
    }
  }
  GpuKernelIr kernel;
  kernel.name = name;
  KernelBuilder builder(instruction, name, module);
  kernel.buffer_count = builder.buffer_count();
  bool mixed = false;
  const std::vector<const Instruction*> rows = KernelBuilder::RowReductions(*builder.root(), &mixed);
  if (!rows.empty() && mixed) {
    kernel.kind = "row-reduce+loop";
    ASSIGN_OR_RETURN(kernel.launch, builder.EmitMixedKernel(rows));
  } else if (!rows.empty()) {
    kernel.kind = "row-reduce";
    ASSIGN_OR_RETURN(kernel.launch, builder.EmitRowReduceKernel(rows));
  } else {
    kernel.kind = "loop";
    ASSIGN_OR_RETURN(kernel.launch, builder.EmitLoopKernel());
  }
  return kernel;
}

absl::StatusOr<GpuKernelIr> EmitGpuKernelIr(const Instruction& instruction,
                                            const std::string& name) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(name, *context);
  ASSIGN_OR_RETURN(GpuKernelIr kernel, EmitGpuKernelInto(instruction, name, module.get()));
  kernel.context = std::move(context);
  kernel.module = std::move(module);
  return kernel;
}

}  // namespace hlogym

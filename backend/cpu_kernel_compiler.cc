// CpuKernelCompiler: turns a fusion (or an unfused elemental instruction)
// into a kernel over a range of its output elements, with the elemental
// emitter for the values and CpuJit for the code, cached by structure.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "backend/cpu_jit.h"
#include "backend/cpu_kernel.h"
#include "backend/elemental_emitter.h"
#include "core/base/status_macros.h"
#include "core/ir/computation.h"
#include "core/ir/fingerprint.h"
#include "core/text/printer.h"

namespace hlogym {
namespace {

// Ops the executable runs on the host instead (they have no elemental form,
// or produce no array of their own).
bool IsHostOnly(Opcode op) {
  switch (op) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

// The key under which a kernel is cached: what determines its code.
std::string CacheKey(const Instruction& instruction) {
  std::string key = absl::StrCat(instruction.shape().ToString(), "|");
  for (const Instruction* operand : instruction.operands()) {
    absl::StrAppend(&key, operand->shape().ToString(), ";");
  }
  if (instruction.IsFusion()) {
    absl::StrAppend(&key, "fusion:", Fingerprint(*instruction.fused_computation()));
    return key;
  }
  // An unfused op: its text without its name and operand names.
  PrintOptions options;
  options.print_metadata = false;
  const std::string text = PrintInstruction(instruction, options);
  const std::string opcode(OpcodeName(instruction.opcode()));
  size_t open = text.find(" " + opcode + "(");
  size_t close = open == std::string::npos ? std::string::npos : text.find(')', open);
  absl::StrAppend(&key, opcode, close == std::string::npos ? text : text.substr(close));
  for (const Computation* called : instruction.called_computations()) {
    absl::StrAppend(&key, "|", Fingerprint(*called));
  }
  return key;
}

// Work per output element, for the task grain: a reduction's row length.
int64_t WorkPerElement(const Instruction& instruction) {
  int64_t work = 1;
  auto visit = [&](const Instruction& i) {
    if (i.opcode() == Opcode::kReduce) {
      const int64_t out = std::max<int64_t>(1, i.shape().IsTuple()
                                                   ? i.shape().tuple_shape(0).element_count()
                                                   : i.shape().element_count());
      work = std::max(work, i.operand(0)->shape().element_count() / out);
    } else if (i.opcode() == Opcode::kReduceWindow) {
      int64_t size = 1;
      for (const WindowDimension& w : i.attrs<WindowAttrs>().window) size *= w.size;
      work = std::max(work, size);
    }
  };
  if (instruction.IsFusion()) {
    for (const auto& i : instruction.fused_computation()->instructions()) visit(*i);
  } else {
    visit(instruction);
  }
  return work;
}

// One value the kernel stores: leaf `leaf` of `producer` into buffer `buffer`.
struct Output {
  const Instruction* producer;
  int64_t leaf;
  int64_t buffer;
  Shape shape;
};

absl::StatusOr<std::vector<Output>> Outputs(const Instruction& root, int64_t first_buffer) {
  std::vector<Output> outputs;
  auto not_supported = [&](const Instruction& i) {
    return absl::UnimplementedError(absl::StrCat("not supported: nested tuple output of ",
                                                 std::string(OpcodeName(i.opcode())), " (",
                                                 i.name(), ")"));
  };
  if (root.opcode() == Opcode::kTuple) {
    for (int64_t j = 0; j < root.operand_count(); ++j) {
      const Instruction* operand = root.operand(j);
      if (operand->shape().IsTuple()) return not_supported(*operand);
      outputs.push_back({operand, 0, first_buffer + j, operand->shape()});
    }
  } else if (root.shape().IsTuple()) {
    for (int64_t k = 0; k < root.shape().tuple_size(); ++k) {
      if (root.shape().tuple_shape(k).IsTuple()) return not_supported(root);
      outputs.push_back({&root, k, first_buffer + k, root.shape().tuple_shape(k)});
    }
  } else {
    outputs.push_back({&root, 0, first_buffer, root.shape()});
  }
  return outputs;
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
    const std::string key = CacheKey(instruction);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++cache_hits_;
      return it->second;
    }
    ASSIGN_OR_RETURN(CpuKernel kernel, Build(instruction));
    cache_.emplace(key, kernel);
    ++compiled_;
    return kernel;
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
};

absl::StatusOr<CpuKernel> LlvmCpuKernelCompiler::Build(const Instruction& instruction) {
  auto context = std::make_unique<llvm::LLVMContext>();
  const std::string name = absl::StrCat("hlogym_kernel_", compiled_.load());
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

  ElementalEmitter emitter(&b, module.get());
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
  ASSIGN_OR_RETURN(std::vector<Output> outputs, Outputs(*root, operand_count));
  std::vector<llvm::Value*> out_base(outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) out_base[k] = buffer(outputs[k].buffer);

  // Outputs of the same dimensions share one loop (and so their common
  // subexpressions); each group covers [begin, min(end, its size)).
  std::map<std::vector<int64_t>, std::vector<size_t>> groups;
  int64_t extent = 1;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const auto dims = outputs[k].shape.dims();
    groups[std::vector<int64_t>(dims.begin(), dims.end())].push_back(k);
    extent = std::max(extent, outputs[k].shape.element_count());
  }
  for (const auto& [dims, members] : groups) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    if (count == 0) continue;
    llvm::Value* hi =
        b.CreateSelect(b.CreateICmpSLT(end, b.getInt64(count)), end, b.getInt64(count));
    auto store_all = [&](const IrIndex& index, llvm::Value* linear) -> absl::Status {
      for (size_t k : members) {
        const Output& out = outputs[k];
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
            }
          }
          return emitter.EmitLoop(
              b.CreateSub(j_hi, j_lo), "col", [&](llvm::Value* c) -> absl::Status {
                llvm::Value* j = b.CreateAdd(c, j_lo);
                IrIndex index = outer;
                if (!dims.empty()) index.push_back(j);
                return store_all(index, b.CreateAdd(row_start, j));
              });
        }));
  }
  b.CreateRetVoid();

  ASSIGN_OR_RETURN(void* address, jit_->Add(std::move(module), std::move(context), name));
  CpuKernel kernel;
  kernel.fn = reinterpret_cast<CpuKernelFn>(address);
  kernel.parallel_extent = extent;
  kernel.grain = std::max<int64_t>(1, 32768 / WorkPerElement(instruction));
  return kernel;
}

}  // namespace

bool CpuKernelCompiler::CanCompile(const Instruction& instruction) {
  if (instruction.IsFusion()) {
    return ElementalEmitter::CheckSupported(*instruction.fused_computation()).ok();
  }
  if (IsHostOnly(instruction.opcode())) return false;
  return ElementalEmitter::CheckSupported(instruction).ok();
}

absl::StatusOr<std::unique_ptr<CpuKernelCompiler>> CpuKernelCompiler::Create() {
  ASSIGN_OR_RETURN(std::unique_ptr<CpuJit> jit, CpuJit::Create());
  return std::unique_ptr<CpuKernelCompiler>(new LlvmCpuKernelCompiler(std::move(jit)));
}

}  // namespace hlogym

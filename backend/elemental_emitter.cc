// Dispatch, caching, types, parameters and constants of the elemental
// emitter. Arithmetic is in elemental_arithmetic.cc, index arithmetic in
// elemental_data_movement.cc, reductions in elemental_reduce.cc.
#include "backend/elemental_emitter.h"

#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/literal.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"

namespace hlogym {
namespace {

absl::Status NotSupported(const Instruction& instruction, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("not supported: ",
                                               std::string(OpcodeName(instruction.opcode())), " (",
                                               instruction.name(), ")", std::string(why)));
}

bool IsSupportedOpcode(Opcode op) {
  switch (op) {
    // Elementwise unary.
    case Opcode::kAbs: case Opcode::kNegate: case Opcode::kSign: case Opcode::kExp:
    case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kTanh: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt:
    case Opcode::kSin: case Opcode::kCos: case Opcode::kTan: case Opcode::kErf:
    case Opcode::kAtan: case Opcode::kAcos: case Opcode::kAsin: case Opcode::kAcosh:
    case Opcode::kAsinh: case Opcode::kAtanh: case Opcode::kCosh: case Opcode::kSinh:
    case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kIsFinite: case Opcode::kConvert:
    case Opcode::kCopy: case Opcode::kBitcastConvert: case Opcode::kNot:
    case Opcode::kPopulationCount: case Opcode::kClz:
    // Elementwise binary and ternary.
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kRemainder: case Opcode::kPower: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAtan2: case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
    case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kCompare: case Opcode::kMulhi:
    case Opcode::kSelect: case Opcode::kClamp:
    // Data movement.
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kPad: case Opcode::kConcatenate:
    case Opcode::kReverse: case Opcode::kIota: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kGather:
    // The rest.
    case Opcode::kConstant: case Opcode::kParameter: case Opcode::kReduce:
    case Opcode::kReduceWindow: case Opcode::kConvolution:
    case Opcode::kTuple: case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

absl::Status CheckShape(const Instruction& instruction, const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& leaf : shape.tuple_shapes()) RETURN_IF_ERROR(CheckShape(instruction, leaf));
    return absl::OkStatus();
  }
  if (!ElementalEmitter::SupportedType(shape.element_type())) {
    return NotSupported(
        instruction,
        absl::StrCat(" on element type ", std::string(PrimitiveTypeName(shape.element_type()))));
  }
  if (!shape.is_static()) return NotSupported(instruction, " with a dynamic shape");
  return absl::OkStatus();
}

absl::Status CheckInstruction(const Instruction& instruction, std::set<const Computation*>& seen);

absl::Status CheckComputation(const Computation& computation,
                              std::set<const Computation*>& seen) {
  if (!seen.insert(&computation).second) return absl::OkStatus();
  for (const auto& instruction : computation.instructions()) {
    RETURN_IF_ERROR(CheckInstruction(*instruction, seen));
  }
  return absl::OkStatus();
}

absl::Status CheckInstruction(const Instruction& instruction,
                              std::set<const Computation*>& seen) {
  if (!IsSupportedOpcode(instruction.opcode())) return NotSupported(instruction, "");
  RETURN_IF_ERROR(CheckShape(instruction, instruction.shape()));
  for (const Instruction* operand : instruction.operands()) {
    RETURN_IF_ERROR(CheckShape(instruction, operand->shape()));
  }
  if (instruction.opcode() == Opcode::kParameter && instruction.shape().IsTuple()) {
    return NotSupported(instruction, " of tuple shape");
  }
  if (instruction.opcode() == Opcode::kTuple) {
    for (const Instruction* operand : instruction.operands()) {
      if (operand->shape().IsTuple()) return NotSupported(instruction, " of tuples");
    }
  }
  if (instruction.opcode() == Opcode::kConstant && instruction.literal().is_elided()) {
    return NotSupported(instruction, " with elided values");
  }
  if (instruction.opcode() == Opcode::kReduce || instruction.opcode() == Opcode::kReduceWindow) {
    RETURN_IF_ERROR(CheckComputation(*instruction.to_apply(), seen));
  }
  if (instruction.opcode() == Opcode::kConvolution) {
    if (!instruction.has_attrs<ConvolutionAttrs>() || instruction.operand_count() != 2 ||
        !IsFloat(instruction.shape().element_type()) ||
        !IsFloat(instruction.operand(0)->shape().element_type()) ||
        !IsFloat(instruction.operand(1)->shape().element_type())) {
      return NotSupported(instruction, " of non-float types");
    }
  }
  return absl::OkStatus();
}

}  // namespace

ElementalEmitter::ElementalEmitter(llvm::IRBuilder<>* b, llvm::Module* module)
    : b_(b), module_(module) {
  cache_.emplace_back();
}

bool ElementalEmitter::SupportedType(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return true;
  if (IsInteger(type)) return true;
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

absl::Status ElementalEmitter::CheckSupported(const Computation& computation) {
  std::set<const Computation*> seen;
  return CheckComputation(computation, seen);
}

absl::Status ElementalEmitter::CheckSupported(const Instruction& instruction) {
  std::set<const Computation*> seen;
  return CheckInstruction(instruction, seen);
}

void ElementalEmitter::BindComputation(const Computation* computation, ParameterReader reader) {
  readers_[computation] = std::move(reader);
}

void ElementalEmitter::BindUnfused(const Instruction* instruction, ParameterReader reader) {
  unfused_ = instruction;
  unfused_reader_ = std::move(reader);
}

llvm::Type* ElementalEmitter::StorageType(PrimitiveType type) const {
  llvm::LLVMContext& ctx = b_->getContext();
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: return llvm::Type::getInt16Ty(ctx);
    case PrimitiveType::kF32: return llvm::Type::getFloatTy(ctx);
    case PrimitiveType::kF64: return llvm::Type::getDoubleTy(ctx);
    default: return llvm::Type::getIntNTy(ctx, 8 * ByteWidth(type));
  }
}

llvm::Type* ElementalEmitter::ValueType(PrimitiveType type) const {
  llvm::LLVMContext& ctx = b_->getContext();
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
      return llvm::Type::getFloatTy(ctx);
    case PrimitiveType::kF64: return llvm::Type::getDoubleTy(ctx);
    case PrimitiveType::kPred: return llvm::Type::getInt1Ty(ctx);
    default: return llvm::Type::getIntNTy(ctx, BitWidth(type));
  }
}

llvm::Value* ElementalEmitter::FromStorage(PrimitiveType type, llvm::Value* stored) {
  llvm::LLVMContext& ctx = b_->getContext();
  switch (type) {
    case PrimitiveType::kF16:
      return b_->CreateFPExt(b_->CreateBitCast(stored, llvm::Type::getHalfTy(ctx)),
                             b_->getFloatTy());
    case PrimitiveType::kBF16:
      return b_->CreateBitCast(b_->CreateShl(b_->CreateZExt(stored, b_->getInt32Ty()), 16),
                               b_->getFloatTy());
    case PrimitiveType::kF32: case PrimitiveType::kF64: return stored;
    case PrimitiveType::kPred:
      return b_->CreateICmpNE(stored, llvm::ConstantInt::get(stored->getType(), 0));
    default:
      if (static_cast<unsigned>(BitWidth(type)) == stored->getType()->getIntegerBitWidth())
        return stored;
      return b_->CreateTrunc(stored, ValueType(type));
  }
}

llvm::Value* ElementalEmitter::ToStorage(PrimitiveType type, llvm::Value* value) {
  switch (type) {
    case PrimitiveType::kF16:
      return b_->CreateBitCast(b_->CreateFPTrunc(value, llvm::Type::getHalfTy(b_->getContext())),
                               b_->getInt16Ty());
    case PrimitiveType::kBF16: return FloatToBF16Bits(value);
    case PrimitiveType::kF32: case PrimitiveType::kF64: return value;
    case PrimitiveType::kPred: return b_->CreateZExt(value, StorageType(type));
    default:
      if (BitWidth(type) == 8 * ByteWidth(type)) return value;
      // Sub-byte integers are stored one per byte, sign-extended when signed.
      return IsSignedInteger(type) ? b_->CreateSExt(value, StorageType(type))
                                   : b_->CreateZExt(value, StorageType(type));
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitElement(const Instruction& instruction,
                                                           const IrIndex& index) {
  if (instruction.shape().IsTuple()) {
    return NotSupported(instruction, " as an element: it is tuple-shaped");
  }
  ASSIGN_OR_RETURN(std::vector<llvm::Value*> values, EmitElements(instruction, index));
  return values.at(0);
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitElements(
    const Instruction& instruction, const IrIndex& index) {
  CacheKey key{&instruction, index};
  for (auto scope = cache_.rbegin(); scope != cache_.rend(); ++scope) {
    auto it = scope->values.find(key);
    if (it != scope->values.end()) return it->second;
    if (scope->isolated) break;
  }
  if (instruction.opcode() == Opcode::kReduce && HoistInvariantReductions()) {
    // Cached by EmitHoistedReduce in the scope it is hoisted to.
    ASSIGN_OR_RETURN(std::optional<std::vector<llvm::Value*>> hoisted,
                     EmitHoistedReduce(instruction, index));
    if (hoisted) return *std::move(hoisted);
  }
  ASSIGN_OR_RETURN(std::vector<llvm::Value*> values, EmitUncached(instruction, index));
  cache_.back().values.emplace(std::move(key), values);
  return values;
}

absl::StatusOr<llvm::Value*> ElementalEmitter::Operand(const Instruction& user, int64_t i,
                                                       const IrIndex& index) {
  const Instruction& operand = *user.operand(i);
  // Elementwise ops take scalar operands as broadcasts (select's predicate,
  // clamp's bounds).
  const IrIndex& at = operand.shape().rank() == 0 ? IrIndex{} : index;
  if (&user == unfused_) {
    ASSIGN_OR_RETURN(llvm::Value * stored, unfused_reader_(i, at));
    return FromStorage(operand.shape().element_type(), stored);
  }
  return EmitElement(operand, operand.shape().rank() == 0 ? IrIndex{} : index);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitParameter(const Instruction& parameter,
                                                             const IrIndex& index) {
  const Computation* computation = parameter.parent();
  auto args = scalar_args_.find(computation);
  if (args != scalar_args_.end()) return args->second.at(parameter.parameter_number());
  auto reader = readers_.find(computation);
  if (reader == readers_.end()) {
    return absl::InternalError(absl::StrCat("no parameter reader bound for ", parameter.name()));
  }
  ASSIGN_OR_RETURN(llvm::Value * stored, reader->second(parameter.parameter_number(), index));
  return FromStorage(parameter.shape().element_type(), stored);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitConstant(const Instruction& constant,
                                                            const IrIndex& index) {
  const Literal& literal = constant.literal();
  const PrimitiveType type = literal.shape().element_type();
  llvm::Type* storage = StorageType(type);
  const int64_t width = ByteWidth(type);
  auto element = [&](int64_t i) -> llvm::Constant* {
    uint64_t bits = 0;
    std::memcpy(&bits, literal.raw_data() + i * width, width);
    llvm::Constant* as_int = llvm::ConstantInt::get(b_->getIntNTy(8 * width), bits);
    return llvm::ConstantExpr::getBitCast(as_int, storage);
  };
  if (literal.element_count() == 1) return FromStorage(type, element(0));
  std::vector<llvm::Constant*> elements;
  elements.reserve(literal.element_count());
  for (int64_t i = 0; i < literal.element_count(); ++i) elements.push_back(element(i));
  llvm::ArrayType* array_type = llvm::ArrayType::get(storage, elements.size());
  auto* global = new llvm::GlobalVariable(*module_, array_type, /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage,
                                          llvm::ConstantArray::get(array_type, elements),
                                          absl::StrCat("constant_", constant.unique_id()));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  llvm::Value* linear = Linearize(constant.shape().dims(), index);
  llvm::Value* address = b_->CreateInBoundsGEP(array_type, global, {b_->getInt64(0), linear});
  return FromStorage(type, b_->CreateLoad(storage, address));
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitUncached(
    const Instruction& instruction, const IrIndex& index) {
  const Opcode op = instruction.opcode();
  auto one = [](llvm::Value* v) { return std::vector<llvm::Value*>{v}; };
  switch (op) {
    case Opcode::kParameter: {
      ASSIGN_OR_RETURN(llvm::Value * v, EmitParameter(instruction, index));
      return one(v);
    }
    case Opcode::kConstant: {
      ASSIGN_OR_RETURN(llvm::Value * v, EmitConstant(instruction, index));
      return one(v);
    }
    case Opcode::kReduce: return EmitReduce(instruction, index);
    case Opcode::kReduceWindow: return EmitReduceWindow(instruction, index);
    case Opcode::kConvolution: return EmitConvolution(instruction, index);
    case Opcode::kTuple: {
      std::vector<llvm::Value*> values;
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        ASSIGN_OR_RETURN(llvm::Value * v, Operand(instruction, i, index));
        values.push_back(v);
      }
      return values;
    }
    case Opcode::kGetTupleElement: {
      ASSIGN_OR_RETURN(std::vector<llvm::Value*> values,
                       EmitElements(*instruction.operand(0), index));
      return one(values.at(instruction.tuple_index()));
    }
    case Opcode::kSelect: {
      ASSIGN_OR_RETURN(llvm::Value * p, Operand(instruction, 0, index));
      ASSIGN_OR_RETURN(llvm::Value * t, Operand(instruction, 1, index));
      ASSIGN_OR_RETURN(llvm::Value * f, Operand(instruction, 2, index));
      return one(b_->CreateSelect(p, t, f));
    }
    case Opcode::kClamp: {
      ASSIGN_OR_RETURN(llvm::Value * lo, Operand(instruction, 0, index));
      ASSIGN_OR_RETURN(llvm::Value * x, Operand(instruction, 1, index));
      ASSIGN_OR_RETURN(llvm::Value * hi, Operand(instruction, 2, index));
      const PrimitiveType t = instruction.shape().element_type();
      llvm::Value* m;
      if (IsFloat(t)) {
        ASSIGN_OR_RETURN(m, EmitFloatBinary(Opcode::kMaximum, t, x, lo));
        ASSIGN_OR_RETURN(m, EmitFloatBinary(Opcode::kMinimum, t, m, hi));
      } else {
        ASSIGN_OR_RETURN(m, EmitIntBinary(Opcode::kMaximum, t, x, lo));
        ASSIGN_OR_RETURN(m, EmitIntBinary(Opcode::kMinimum, t, m, hi));
      }
      return one(m);
    }
    default:
      break;
  }
  if (IsElementwiseUnary(op) && op != Opcode::kReducePrecision) {
    ASSIGN_OR_RETURN(llvm::Value * x, Operand(instruction, 0, index));
    ASSIGN_OR_RETURN(llvm::Value * v, EmitUnary(instruction, x));
    return one(v);
  }
  if (IsElementwiseBinary(op)) {
    ASSIGN_OR_RETURN(llvm::Value * x, Operand(instruction, 0, index));
    ASSIGN_OR_RETURN(llvm::Value * y, Operand(instruction, 1, index));
    ASSIGN_OR_RETURN(llvm::Value * v, EmitBinary(instruction, x, y));
    return one(v);
  }
  return EmitDataMovement(instruction, index);
}

absl::Status ElementalEmitter::EmitLoopsOver(const Shape& shape, absl::Span<const int64_t> dims,
                                             absl::string_view name_prefix, IrIndex& index,
                                             const std::function<absl::Status()>& body) {
  if (dims.empty()) return body();
  const int64_t d = dims.front();
  return EmitLoop(IndexConst(shape.dim(d)), absl::StrCat(name_prefix, d),
                  [&](llvm::Value* iv) -> absl::Status {
                    index[d] = iv;
                    return EmitLoopsOver(shape, dims.subspan(1), name_prefix, index, body);
                  });
}

absl::Status ElementalEmitter::EmitLoopsOver(const Shape& shape, absl::Span<const int64_t> dims,
                                             absl::string_view name_prefix, IrIndex& index,
                                             absl::Span<const int64_t> breakpoints,
                                             const std::function<absl::Status()>& body) {
  if (dims.empty() || breakpoints.empty()) {
    return EmitLoopsOver(shape, dims, name_prefix, index, body);
  }
  return EmitLoopsOver(
      shape, dims.first(dims.size() - 1), name_prefix, index, [&]() -> absl::Status {
        const int64_t d = dims.back();
        std::vector<int64_t> starts = {0};
        starts.insert(starts.end(), breakpoints.begin(), breakpoints.end());
        starts.push_back(shape.dim(d));
        for (size_t s = 0; s + 1 < starts.size(); ++s) {
          RETURN_IF_ERROR(EmitLoop(IndexConst(starts[s + 1] - starts[s]),
                                   absl::StrCat(name_prefix, d, ".s", s),
                                   [&](llvm::Value* iv) -> absl::Status {
                                     index[d] = IndexAdd(iv, starts[s]);
                                     return body();
                                   }));
        }
        return absl::OkStatus();
      });
}

void ElementalEmitter::SetIndexRange(llvm::Value* v, int64_t lo, int64_t hi) {
  if (llvm::isa<llvm::Constant>(v)) return;
  index_ranges_[v] = {lo, hi};
}

absl::Status ElementalEmitter::EmitLoop(llvm::Value* trip_count, absl::string_view name,
                                        const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b_->getContext();
  const std::string n(name);
  llvm::BasicBlock* preheader = b_->GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx, n + ".header", function);
  auto* body_block = llvm::BasicBlock::Create(ctx, n + ".body", function);
  auto* exit = llvm::BasicBlock::Create(ctx, n + ".exit", function);
  b_->CreateBr(header);
  b_->SetInsertPoint(header);
  llvm::PHINode* iv = b_->CreatePHI(b_->getInt64Ty(), 2, n + ".iv");
  iv->addIncoming(b_->getInt64(0), preheader);
  if (auto* count = llvm::dyn_cast<llvm::ConstantInt>(trip_count);
      count != nullptr && count->getSExtValue() > 0) {
    SetIndexRange(iv, 0, count->getSExtValue() - 1);
  }
  b_->CreateCondBr(b_->CreateICmpSLT(iv, trip_count), body_block, exit);
  b_->SetInsertPoint(body_block);
  cache_.emplace_back();
  cache_.back().preheader = preheader;
  cache_.back().header = header;
  absl::Status status = body(iv);
  cache_.pop_back();
  RETURN_IF_ERROR(status);
  llvm::Value* next = b_->CreateAdd(iv, b_->getInt64(1), n + ".next", /*HasNUW=*/true,
                                    /*HasNSW=*/true);
  iv->addIncoming(next, b_->GetInsertBlock());
  b_->CreateBr(header);
  b_->SetInsertPoint(exit);
  return absl::OkStatus();
}

llvm::Value* ElementalEmitter::EmitMathCall(absl::string_view name,
                                            absl::Span<llvm::Value* const> args,
                                            llvm::Type* type) {
  std::string symbol(name);
  if (type->isFloatTy()) symbol += "f";
  std::vector<llvm::Type*> params(args.size(), type);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(
      symbol, llvm::FunctionType::get(type, params, /*isVarArg=*/false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Pure, as with -fno-math-errno: lets LLVM hoist and merge the calls.
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  return b_->CreateCall(callee, std::vector<llvm::Value*>(args.begin(), args.end()));
}

llvm::Value* ElementalEmitter::EntryAlloca(llvm::Type* type, absl::string_view name) {
  llvm::Function* function = b_->GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  return entry.CreateAlloca(type, nullptr, std::string(name));
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitScalarComputation(
    const Computation& computation, absl::Span<llvm::Value* const> args) {
  if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " takes ",
                                                   computation.parameter_count(),
                                                   " arguments, given ", args.size()));
  }
  auto saved = scalar_args_.find(&computation);
  std::optional<std::vector<llvm::Value*>> previous;
  if (saved != scalar_args_.end()) previous = saved->second;
  scalar_args_[&computation] = std::vector<llvm::Value*>(args.begin(), args.end());
  cache_.emplace_back();
  cache_.back().isolated = true;
  absl::StatusOr<std::vector<llvm::Value*>> result = EmitElements(*computation.root(), {});
  cache_.pop_back();
  if (previous) {
    scalar_args_[&computation] = *previous;
  } else {
    scalar_args_.erase(&computation);
  }
  return result;
}

}  // namespace hlogym

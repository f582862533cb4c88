#include "core/ir/instruction.h"

#include <algorithm>
#include <new>

#include "core/ir/block_pool.h"
#include "core/ir/computation.h"

namespace hlogym {

void* Instruction::operator new(size_t size) {
  return TakeBlock(BlockKind::kInstruction, size, sizeof(Instruction));
}

void Instruction::operator delete(void* block, size_t size) {
  GiveBackBlock(BlockKind::kInstruction, block, size, sizeof(Instruction));
}

void OpAttrsDelete::operator()(OpAttrs* attrs) const {
  attrs->~OpAttrs();
  GiveBackBlock(BlockKind::kOpAttrs, attrs, sizeof(OpAttrs), sizeof(OpAttrs));
}

OpAttrsPtr NewOpAttrs(const OpAttrs& attrs) {
  void* block = TakeBlock(BlockKind::kOpAttrs, sizeof(OpAttrs), sizeof(OpAttrs));
  return OpAttrsPtr(new (block) OpAttrs(attrs));
}

OpAttrsPtr NewOpAttrs(OpAttrs&& attrs) {
  void* block = TakeBlock(BlockKind::kOpAttrs, sizeof(OpAttrs), sizeof(OpAttrs));
  return OpAttrsPtr(new (block) OpAttrs(std::move(attrs)));
}

std::unique_ptr<Instruction> Instruction::Create(
    Opcode opcode, Shape shape, absl::Span<Instruction* const> operands) {
  std::unique_ptr<Instruction> inst(new Instruction(opcode, std::move(shape)));
  inst->InitOperands(operands);
  return inst;
}

void Instruction::InitOperands(absl::Span<Instruction* const> operands) {
  // Most fit inline: asked first, as reserve() was an out-of-line call for
  // each of the ~25,000 instructions an env step makes (~1.3% of it).
  if (operands.size() > operands_.capacity()) operands_.reserve(operands.size());
  // AppendOperand per operand, with its search for a repeat made in the
  // span (a plain array) rather than in operands_ (an InlinedVector, which
  // asks where its storage is at each access), and inline: the call and the
  // search were ~3% of an env step, which makes ~22,000 instructions.
  for (size_t i = 0; i < operands.size(); ++i) {
    Instruction* operand = operands[i];
    operands_.push_back(operand);
    const auto seen = operands.begin() + static_cast<ptrdiff_t>(i);
    if (std::find(operands.begin(), seen, operand) == seen) {
      operand->users_.push_back(this);
      operand->NoteLinksEdited();
    }
  }
}

std::unique_ptr<Instruction> Instruction::CreateParameter(int64_t number,
                                                          Shape shape,
                                                          std::string name) {
  auto inst = Create(Opcode::kParameter, std::move(shape));
  inst->index_ = number;
  inst->name_ = std::move(name);
  return inst;
}

std::unique_ptr<Instruction> Instruction::CreateConstant(Literal literal) {
  auto inst = Create(Opcode::kConstant, literal.shape());
  inst->attrs_ = NewOpAttrs(ConstantAttrs{std::move(literal)});
  return inst;
}

Instruction::~Instruction() {
  // Keep the graph consistent if an instruction dies while still linked.
  for (Instruction* operand : operands_) {
    if (operand) operand->RemoveUser(this);
  }
  // Asked first: most have no control edges, and a computation unlinks all
  // of its instructions before they die (the call was ~0.8% of an env step,
  // tearing down the last module).
  if (extras_ != nullptr) DropAllControlDependencies();
}

std::unique_ptr<Instruction> Instruction::CloneWithNewOperands(
    Shape shape, absl::Span<Instruction* const> operands) const {
  return CloneWithNewOperands(std::move(shape), operands, name_);
}

std::unique_ptr<Instruction> Instruction::CloneWithNewOperands(
    Shape shape, absl::Span<Instruction* const> operands, std::string name) const {
  std::unique_ptr<Instruction> clone(new Instruction(*this, std::move(shape), std::move(name)));
  clone->InitOperands(operands);
  return clone;
}

Instruction::Instruction(const Instruction& source, Shape&& shape, std::string&& name)
    : opcode_(source.opcode_),
      called_computations_(source.called_computations_),
      index_(source.index_),
      attrs_(source.attrs_ ? NewOpAttrs(*source.attrs_) : nullptr),
      shape_(std::move(shape)),
      name_(std::move(name)),
      dimensions_(source.dimensions_) {
  if (source.extras_ != nullptr && !source.extras_->raw_attrs.empty()) {
    extras().raw_attrs = source.extras_->raw_attrs;
  }
}

const OpAttrs& Instruction::op_attrs() const {
  static const OpAttrs* const kNone = new OpAttrs();
  return attrs_ ? *attrs_ : *kNone;
}

void Instruction::set_op_attrs(OpAttrs attrs) {
  attrs_ = NewOpAttrs(std::move(attrs));
}

bool Instruction::IsRoot() const {
  return parent_ != nullptr && parent_->root() == this;
}

void Instruction::AddUser(Instruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) {
    users_.push_back(user);
    NoteLinksEdited();
  }
}

void Instruction::RemoveUser(Instruction* user) {
  auto it = std::find(users_.begin(), users_.end(), user);
  if (it != users_.end()) {
    users_.erase(it);
    NoteLinksEdited();
  }
}

void Instruction::NoteDependenciesEdited() {
  if (parent_ != nullptr) parent_->stored_in_order_ = false;
}

void Instruction::NoteLinksEdited() {
  if (parent_ != nullptr) parent_->linked_as_cloned_ = false;
}

void Instruction::AppendOperand(Instruction* operand) {
  // This instruction is among `operand`'s users exactly when it reads
  // `operand` already, which its own short operand list tells: AddUser's
  // search of a user list grew with the fan-out of a dry pass's shared
  // operands (~2% of an env step).
  const bool reads = std::find(operands_.begin(), operands_.end(), operand) != operands_.end();
  NoteDependenciesEdited();
  operands_.push_back(operand);
  if (!reads) {
    operand->users_.push_back(this);
    operand->NoteLinksEdited();
  }
}

void Instruction::ReplaceOperandWith(int64_t i, Instruction* new_operand) {
  Instruction* old_operand = operands_[i];
  if (old_operand == new_operand) return;
  NoteDependenciesEdited();
  operands_[i] = new_operand;
  new_operand->AddUser(this);
  if (std::find(operands_.begin(), operands_.end(), old_operand) ==
      operands_.end()) {
    old_operand->RemoveUser(this);
  }
}

void Instruction::ReplaceOperandWith(Instruction* old_operand,
                                     Instruction* new_operand) {
  if (old_operand == new_operand) return;
  bool found = false;
  for (Instruction*& operand : operands_) {
    if (operand == old_operand) {
      operand = new_operand;
      found = true;
    }
  }
  if (!found) return;
  NoteDependenciesEdited();
  old_operand->RemoveUser(this);
  new_operand->AddUser(this);
}

void Instruction::DetachOperands() {
  for (Instruction* operand : operands_) operand->RemoveUser(this);
  operands_.clear();
}

void Instruction::ReplaceAllUsesWith(Instruction* other) {
  if (other == this) return;
  // Copy: ReplaceOperandWith edits users_.
  const Links users = users_;
  for (Instruction* user : users) {
    if (user != other) user->ReplaceOperandWith(this, other);
  }
  if (IsRoot()) parent_->set_root(other);
}

void Instruction::ReplaceUseWith(Instruction* user, Instruction* other) {
  user->ReplaceOperandWith(this, other);
}

Instruction::Extras& Instruction::extras() {
  if (extras_ == nullptr) extras_ = std::make_unique<Extras>();
  return *extras_;
}

const std::vector<RawAttribute>& Instruction::NoRawAttributes() {
  static const auto* const kNone = new std::vector<RawAttribute>();
  return *kNone;
}

void Instruction::AddControlDependencyTo(Instruction* successor) {
  Links& successors = extras().control_successors;
  if (std::find(successors.begin(), successors.end(), successor) != successors.end()) return;
  successors.push_back(successor);
  NoteLinksEdited();
  successor->extras().control_predecessors.push_back(this);
  successor->NoteDependenciesEdited();
}

void Instruction::DropAllControlDependencies() {
  if (extras_ == nullptr) return;
  for (Instruction* successor : extras_->control_successors) {
    auto& preds = successor->extras_->control_predecessors;
    preds.erase(std::remove(preds.begin(), preds.end(), this), preds.end());
  }
  for (Instruction* predecessor : extras_->control_predecessors) {
    auto& succs = predecessor->extras_->control_successors;
    succs.erase(std::remove(succs.begin(), succs.end(), this), succs.end());
    predecessor->NoteLinksEdited();
  }
  if (!extras_->control_successors.empty()) NoteLinksEdited();
  extras_->control_successors.clear();
  extras_->control_predecessors.clear();
}

const std::string* Instruction::FindRawAttribute(std::string_view name) const {
  for (const RawAttribute& attr : raw_attributes()) {
    if (attr.name == name) return &attr.value;
  }
  return nullptr;
}

}  // namespace hlogym

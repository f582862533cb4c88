// Instruction: one HLO operation. It knows its opcode, result shape, operands,
// users, called computations, typed attributes, raw (unmodeled) attributes,
// a name and an id that is unique and stable within its module.
//
// Graph edits keep operand and user lists consistent. Passes should make their
// edits through the Rewriter (core/rewrite) so that dry mode can record them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/attributes.h"
#include "core/ir/opcode.h"
#include "core/ir/shape.h"

namespace hlogym {

class Computation;

// An instruction's attribute family, out of line. Its blocks come from a
// per-thread free list, as instructions' do (core/ir/block_pool.cc).
struct OpAttrsDelete {
  void operator()(OpAttrs* attrs) const;
};
using OpAttrsPtr = std::unique_ptr<OpAttrs, OpAttrsDelete>;
OpAttrsPtr NewOpAttrs(const OpAttrs& attrs);
OpAttrsPtr NewOpAttrs(OpAttrs&& attrs);

class Instruction {
 public:
  // A new, detached instruction. Operands gain it as a user immediately.
  static std::unique_ptr<Instruction> Create(
      Opcode opcode, Shape shape, absl::Span<Instruction* const> operands = {});
  static std::unique_ptr<Instruction> CreateParameter(int64_t number,
                                                      Shape shape,
                                                      std::string name);
  static std::unique_ptr<Instruction> CreateConstant(Literal literal);

  ~Instruction();
  // Blocks come from a per-thread free list (core/ir/instruction.cc).
  static void* operator new(size_t size);
  static void operator delete(void* block, size_t size);
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  // A copy with new operands and shape: same opcode, attributes, called
  // computations, raw attributes and name (the caller renames it if needed).
  // Control dependencies are not copied.
  std::unique_ptr<Instruction> CloneWithNewOperands(
      Shape shape, absl::Span<Instruction* const> operands) const;
  // The same, named `name`: for a copy renamed at once (a fusion candidate's
  // body), which then never copies the original's name only to drop it.
  std::unique_ptr<Instruction> CloneWithNewOperands(
      Shape shape, absl::Span<Instruction* const> operands, std::string name) const;

  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Unique within the module; assigned when added to a computation.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  Computation* parent() const { return parent_; }
  void set_parent(Computation* parent) { parent_ = parent; }
  bool IsRoot() const;

  // ---- Operands and users ----
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  absl::Span<Instruction* const> operands() const { return operands_; }
  void AppendOperand(Instruction* operand);
  // Replaces operand i; keeps both user lists right.
  void ReplaceOperandWith(int64_t i, Instruction* new_operand);
  // Replaces every occurrence of `old_operand` among the operands.
  void ReplaceOperandWith(Instruction* old_operand, Instruction* new_operand);
  // Drops every operand (used before deleting an instruction).
  void DetachOperands();

  // Each user appears once, in the order it started using this instruction.
  absl::Span<Instruction* const> users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  // Makes every user (and the computation root, if this is it) use `other`.
  void ReplaceAllUsesWith(Instruction* other);
  // Makes one user use `other` in place of this instruction.
  void ReplaceUseWith(Instruction* user, Instruction* other);

  // ---- Control dependencies ----
  absl::Span<Instruction* const> control_predecessors() const {
    return extras_ ? absl::Span<Instruction* const>(extras_->control_predecessors)
                    : absl::Span<Instruction* const>();
  }
  absl::Span<Instruction* const> control_successors() const {
    return extras_ ? absl::Span<Instruction* const>(extras_->control_successors)
                    : absl::Span<Instruction* const>();
  }
  // Makes `successor` run after this instruction.
  void AddControlDependencyTo(Instruction* successor);
  void DropAllControlDependencies();

  // ---- Called computations ----
  // By opcode: to_apply (reduce, reduce-window, scatter, sort, map, call,
  // scan, all-reduce, reduce-scatter, custom-call to_apply); calls (fusion,
  // async-start); {condition, body} (while); {select, scatter}
  // (select-and-scatter); branches (conditional: {true, false} when the
  // predicate is pred, else branch_computations); custom-call
  // called_computations.
  absl::Span<Computation* const> called_computations() const {
    return called_computations_;
  }
  void set_called_computations(const std::vector<Computation*>& computations) {
    called_computations_.assign(computations.begin(), computations.end());
  }
  void set_called_computation(int64_t i, Computation* c) {
    called_computations_[i] = c;
  }
  Computation* to_apply() const { return called_computations_.at(0); }
  Computation* fused_computation() const { return called_computations_.at(0); }
  Computation* while_condition() const { return called_computations_.at(0); }
  Computation* while_body() const { return called_computations_.at(1); }

  // ---- Attributes ----
  // dimensions={...}: broadcast, transpose, reverse, reduce, concatenate,
  // sort, map, scan, all-gather, reduce-scatter, get/set-dimension-size.
  absl::Span<const int64_t> dimensions() const { return dimensions_; }
  int64_t dimension(int64_t i) const { return dimensions_[i]; }
  // Inline up to rank 4 (reduce, broadcast and transpose lists mostly fit):
  // a heap list was a malloc and a free per such instruction copied, and an
  // env step copies thousands (fusion candidates' bodies, the module).
  using DimensionList = absl::InlinedVector<int64_t, 4>;
  DimensionList& mutable_dimensions() { return dimensions_; }

  // One integer that parameter, get-tuple-element and iota carry.
  int64_t parameter_number() const { return index_; }
  int64_t tuple_index() const { return index_; }
  int64_t iota_dimension() const { return index_; }
  void set_index(int64_t index) { index_ = index; }

  // Family attributes: attrs<DotAttrs>() on a dot, and so on. Asking for a
  // family the instruction does not hold is a programming error.
  template <typename T>
  const T& attrs() const {
    return std::get<T>(op_attrs());
  }
  template <typename T>
  T& mutable_attrs() {
    if (!attrs_) attrs_ = NewOpAttrs(OpAttrs());
    if (!std::holds_alternative<T>(*attrs_)) *attrs_ = T{};
    return std::get<T>(*attrs_);
  }
  template <typename T>
  bool has_attrs() const {
    return attrs_ != nullptr && std::holds_alternative<T>(*attrs_);
  }
  const OpAttrs& op_attrs() const;
  void set_op_attrs(OpAttrs attrs);

  // Shorthands for the common families.
  const Literal& literal() const { return attrs<ConstantAttrs>().literal; }
  ComparisonDirection comparison_direction() const {
    return attrs<CompareAttrs>().direction;
  }
  FusionKind fusion_kind() const { return attrs<FusionAttrs>().kind; }
  const std::string& custom_call_target() const {
    return attrs<CustomCallAttrs>().target;
  }

  // Attributes kept verbatim, in text order (metadata, sharding, ...).
  const std::vector<RawAttribute>& raw_attributes() const {
    return extras_ ? extras_->raw_attrs : NoRawAttributes();
  }
  std::vector<RawAttribute>& mutable_raw_attributes() { return extras().raw_attrs; }
  // The raw attribute's value, or nullptr.
  const std::string* FindRawAttribute(std::string_view name) const;

  // Operand i of a fusion maps to parameter i of the fused computation.
  bool IsFusion() const { return opcode_ == Opcode::kFusion; }

 private:
  friend class Computation;  // unlinks instructions wholesale on destruction
  Instruction(Opcode opcode, Shape shape) : opcode_(opcode), shape_(std::move(shape)) {}
  // CloneWithNewOperands' copy, before its operands: `source`'s opcode,
  // attributes and callees, not its links. Built member by member, as
  // assigning the lists to an empty instruction took InlinedVector's general
  // Assign (out of line, even for the usual empty list) and the shape was
  // moved twice more through Create (~1.5% of an env step, which copies
  // ~15,000 instructions). By reference, so that each is moved once (a
  // short name's move is a memcpy).
  Instruction(const Instruction& source, Shape&& shape, std::string&& name);
  // Gives a new instruction (no operands yet) `operands`, as AppendOperand
  // of each in turn does.
  void InitOperands(absl::Span<Instruction* const> operands);
  void AddUser(Instruction* user);
  void RemoveUser(Instruction* user);
  // Tells the parent computation its storage may no longer be in
  // dependency order (Computation::stored_in_order_).
  void NoteDependenciesEdited();
  // Tells the parent computation a user or control-successor list of this
  // instruction changed (Computation::linked_as_cloned_).
  void NoteLinksEdited();

  // Inline up to two: most instructions have at most two operands and users
  // and one callee, and a module is copied every environment step, so each
  // heap block saved here is one malloc and one free per instruction per step
  // (the same size as a std::vector).
  using Links = absl::InlinedVector<Instruction*, 2>;
  // Control edges and raw attributes: none on most instructions, so out of
  // line. An env step makes and frees ~22,000 instructions and is bound by
  // their cache misses; inline these were 64 bytes more of each, and
  // took an instruction's block from the allocator's 320-byte class to the
  // 448-byte one.
  struct Extras {
    Links control_predecessors;
    Links control_successors;
    std::vector<RawAttribute> raw_attrs;
  };
  // Ensures `extras_` exists.
  Extras& extras();
  static const std::vector<RawAttribute>& NoRawAttributes();

  // The fields the graph walks read (post orders, fingerprints, the
  // observation's counts, teardown) come first, together in the first two
  // cache lines: a step's walks touch every instruction of a module whose
  // instructions are mostly cold.
  Opcode opcode_;
  int64_t unique_id_ = -1;
  Computation* parent_ = nullptr;
  Links operands_;
  Links users_;
  std::unique_ptr<Extras> extras_;
  absl::InlinedVector<Computation*, 2> called_computations_;
  int64_t index_ = 0;
  // Out of line: most instructions have none, and the variant is large.
  OpAttrsPtr attrs_;
  Shape shape_;
  std::string name_;
  DimensionList dimensions_;
};

}  // namespace hlogym

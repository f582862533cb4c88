// Computation: a function in a module, its instructions, parameters and root.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/instruction.h"

namespace hlogym {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  ~Computation();
  // Blocks come from a per-thread free list (core/ir/block_pool.cc).
  static void* operator new(size_t size);
  static void operator delete(void* block, size_t size);
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }
  void set_parent(Module* module) { parent_ = module; }

  // Instructions in storage order. Not necessarily def-before-use after
  // rewrites: use MakePostOrder() for that.
  const std::vector<std::unique_ptr<Instruction>>& instructions() const {
    return instructions_;
  }
  int64_t instruction_count() const {
    return static_cast<int64_t>(instructions_.size());
  }

  // Takes ownership; gives it a module-unique id, and a unique name when it
  // has none. A parameter instruction is registered as parameter
  // parameter_number(). Works before the computation joins a module too (ids
  // are then assigned when it joins).
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Room for `n` instructions: a builder that knows its size grows the
  // storage once.
  void ReserveInstructions(size_t n) { instructions_.reserve(n); }
  // Removes an instruction that has no users and is not the root.
  absl::Status RemoveInstruction(Instruction* instruction);
  // Removes every instruction for which `dead` is true in one sweep; they must
  // have no users outside the removed set and none may be the root.
  void RemoveInstructionsIf(const std::function<bool(const Instruction*)>& dead);

  absl::Span<Instruction* const> parameters() const { return parameters_; }
  Instruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t parameter_count() const { return static_cast<int64_t>(parameters_.size()); }
  // Removes parameter i (it must have no users) and renumbers the later ones.
  absl::Status RemoveParameter(int64_t i);
  // Makes parameter order[k] parameter k, for every k: the same objects,
  // stored where they are, with the same uses, so the storage order stays a
  // post-order (a fusion builder numbers its parameters once the body is
  // built). `order` must be a permutation of [0, parameter_count()); else an
  // error that changes nothing.
  absl::Status RenumberParameters(absl::Span<const int64_t> order);

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }

  // Def-before-use order: operands (and control predecessors) before users,
  // deterministic, starting from storage order; every instruction included.
  std::vector<Instruction*> MakePostOrder() const;
  // The same into `order` (cleared first): a caller that keeps the vector
  // saves a malloc and a free per post-order (an env step takes ~5,000).
  void MakePostOrder(std::vector<Instruction*>& order) const;
  // Stores the instructions as a copy would (Module::Clone): in
  // MakePostOrder, each user list in its users' storage order and each
  // control-successor list in its successors' storage order. A computation
  // edited in place is then the same as its copy, order for order.
  void StoreAsCloned();
  // Whether the storage order is known to be MakePostOrder's already (see
  // stored_in_order_; false only means it is not known).
  bool stored_in_post_order() const { return stored_in_order_; }
  // Stores the instructions in `order`, which must hold each of them once
  // (one of another computation, or a count that differs, is an error that
  // changes nothing; a repeat is not looked for). Links are left as they are.
  absl::Status StoreInOrder(absl::Span<Instruction* const> order);

  // The fusion instruction whose fused computation this is, if any.
  Instruction* fusion_instruction() const { return fusion_instruction_; }
  void set_fusion_instruction(Instruction* fusion) { fusion_instruction_ = fusion; }
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }
  bool IsEntry() const;

  // `, execution_thread="..."`; empty means the default "main".
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

 private:
  std::string name_;
  Module* parent_ = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  Instruction* fusion_instruction_ = nullptr;
  std::string execution_thread_;
  // Module::RemoveUnreachableComputations' mark, false between its calls.
  friend class Module;
  bool reached_ = false;
  // True while every instruction is stored after what it depends on here
  // (operands, control predecessors), so that the storage order is
  // MakePostOrder's and needs no walk: clones and fused computations are
  // built so, and a gpt2 env step took ~2,700 post-orders of them, reading
  // every instruction of each (~1% of its instructions; the cache misses
  // the walk took fall to whoever reads those instructions next).
  // AddInstruction keeps it; an edit of an instruction's operands or control
  // edges clears it (a conservative flag: false only costs the walk).
  friend class Instruction;
  bool stored_in_order_ = true;
  // True while StoreAsCloned would change nothing: set by it, cleared by any
  // change to the storage or to a user or control-successor list here
  // (Instruction::NoteLinksEdited). Most of a module's computations are
  // fused ones no step touches; relinking each of them every step was ~2% of
  // an env step.
  bool linked_as_cloned_ = false;
};

}  // namespace hlogym

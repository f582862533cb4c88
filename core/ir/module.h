// Module: an HLO module, its computations (callees before callers), its entry
// computation and header attributes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "core/ir/computation.h"
#include "core/ir/name_registry.h"

namespace hlogym {

// entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}
struct ComputationLayout {
  std::vector<Shape> parameters;
  Shape result;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in order: every computation after the ones it calls.
  const std::vector<std::unique_ptr<Computation>>& computations() const {
    return computations_;
  }
  int64_t computation_count() const {
    return static_cast<int64_t>(computations_.size());
  }
  // Takes ownership and appends (callers must add callees first).
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Adds before `before`, keeping callees-before-callers order for a new
  // callee (a fused computation made by a pass, for example).
  // `names_reserved`: every instruction was named by this module's
  // UniqueInstructionName (the fusion builder's), so the names are not noted
  // again (that was ~4% of an env step).
  Computation* AddComputationBefore(std::unique_ptr<Computation> computation,
                                    const Computation* before, bool names_reserved = false);
  // Removes computations that nothing reachable from the entry calls.
  void RemoveUnreachableComputations();
  Computation* FindComputation(std::string_view name) const;

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  const std::optional<ComputationLayout>& entry_computation_layout() const {
    return entry_layout_;
  }
  void set_entry_computation_layout(std::optional<ComputationLayout> layout) {
    entry_layout_ = std::move(layout);
  }
  // Other header attributes (is_scheduled, input_output_alias, ...), verbatim.
  const std::vector<RawAttribute>& raw_attributes() const { return raw_attrs_; }
  std::vector<RawAttribute>& mutable_raw_attributes() { return raw_attrs_; }
  // The stack frame index that XLA dumps print after the header (from
  // "FileNames" to the last "StackFrames" entry), verbatim; empty when absent.
  // Instruction metadata refers to it by stack_frame_id.
  const std::string& stack_frame_index() const { return stack_frame_index_; }
  void set_stack_frame_index(std::string text) {
    stack_frame_index_ = std::move(text);
  }

  int64_t instruction_count() const;  // all computations

  // Ids and names for new instructions and computations.
  int64_t NextUniqueId() { return next_id_++; }
  // The id the next new instruction gets: every instruction made from now
  // on has an id at least this.
  int64_t next_unique_id() const { return next_id_; }
  // `prefix` if unused in the module, else prefix.N for the first free N.
  std::string UniqueInstructionName(std::string_view prefix);
  std::string UniqueComputationName(std::string_view prefix);
  // Tells the name registry (if built) that `name` is in use.
  void NoteInstructionName(std::string_view name);

  // A deep copy: new instructions with the same names and ids.
  std::unique_ptr<Module> Clone() const;
  // Makes this module what Clone() would make of it, in place: every
  // computation stored as cloned (Computation::StoreAsCloned) and the name
  // registries dropped, as a copy starts without them. Passes depend on
  // storage and user order, so a module stepped in place and then stored
  // so steps on exactly as its copy (a fork) does.
  void StoreAsCloned();

  // What CloneParts copies. An empty function keeps everything.
  struct ClonePart {
    // Computations to copy; the callees of a kept instruction must be kept.
    std::function<bool(const Computation&)> computation;
    // Instructions to copy (of kept computations); the operands of a kept
    // instruction must be kept.
    std::function<bool(const Instruction&)> instruction;
    // The operands a kept instruction's copy gets, in place of its own.
    std::function<absl::Span<Instruction* const>(const Instruction&)> operands;
    // `ordered`->MakePostOrder(), when the caller has it: copied in that
    // order instead of walking the computation again (an env step's entry,
    // ordered when its alternatives were found, was walked again to copy it).
    // Ignored unless it holds as many instructions as the computation.
    const Computation* ordered = nullptr;
    absl::Span<Instruction* const> order;
  };
  // A deep copy of part of the module, made as Clone() makes the whole:
  // every copy keeps its name and id, and the copies are stored and linked in
  // the order Clone() gives them, less what is left out (control edges to
  // left-out instructions are dropped; a computation whose fusion
  // instruction is left out gets none). So the part equals what Clone()
  // followed by removing the left-out instructions would leave, without
  // copying them first.
  std::unique_ptr<Module> CloneParts(const ClonePart& part) const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  std::optional<ComputationLayout> entry_layout_;
  std::vector<RawAttribute> raw_attrs_;
  std::string stack_frame_index_;
  int64_t next_id_ = 0;
  // Built on first use of UniqueInstructionName, so parsing pays nothing.
  // StoreAsCloned drops them, as a copy starts without them, by marking
  // them unbuilt: the next build clears and refills the same registry, whose
  // storage an env step would otherwise free and allocate again.
  NameRegistry instruction_names_;
  NameRegistry computation_names_;
  bool instruction_names_built_ = false;
  bool computation_names_built_ = false;
};

}  // namespace hlogym

// What the fusion passes know about an instruction as a possible member of a
// fusion (FusibleInfo, cached per pass run by FusionAnalysis), and XLA's
// per-op facts the rules use: IsExpensive, IsPhysicallyTransposing,
// ReusesOperandElements.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "core/ir/module.h"

namespace hlogym {

// XLA:GPU's IsExpensive: transcendental and unusual ops; f32/f16 divide,
// sqrt, rsqrt and exp count as cheap on the GPU; integer division is cheap
// only by a constant. A fusion is expensive if any op inside is.
bool IsExpensive(const Instruction& instruction);

// A transpose (or a fusion holding one) that moves data: its permutation of
// the non-1 dimensions is not the identity.
bool IsPhysicallyTransposing(const Instruction& instruction);

// Whether `consumer` reads some element of its operand `operand_index` more
// than once (XLA's ReusesOperandElements; looks inside fusions).
bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index);

// What the passes need to know about an instruction as a fusion member.
struct FusibleInfo {
  bool fusible = false;      // may be a member at all (producer or consumer)
  bool is_fusion = false;    // an existing kLoop/kInput fusion
  bool has_reduce = false;   // would make (or is) a kInput fusion
  bool multi_output = false; // tuple-shaped: read through get-tuple-element
  bool expensive = false;
  bool has_in_place = false;    // a dynamic-update-slice inside
  bool transposing = false;     // moves data by a transpose
  bool simple_epilogue = false; // only convert/bitcast/reshape/copy ops
  int64_t size = 0;             // instructions computed (parameters excluded)
  // Reduction outputs, and the shared memory their kernel needs (XLA's
  // FusionFitsInBudget: a row reduction 32 elements, a column one 2*32*33).
  int64_t reduction_outputs = 0;
  int64_t reduction_shared_bytes = 0;
  // Loop iteration space: output elements (kLoop) or reduce input elements.
  int64_t iteration_elements = 0;
  // Reduce heroes' input dimensions and reduced dimensions (kInput).
  const Shape* hero_input = nullptr;
  std::vector<int64_t> hero_dims;
};

// FusibleInfo per instruction, computed once and cached for one pass run.
// Instructions the pass adds are analysed when first asked about. In dry
// mode it also tells original instructions from the candidates the pass has
// added (which read originals, but must not count as their users).
class FusionAnalysis {
 public:
  // `dry`: the pass runs in dry mode on `module`; every instruction added
  // from now on is a candidate. Call before the pass adds anything.
  FusionAnalysis(Module& module, bool dry);

  const FusibleInfo& Info(const Instruction* instruction);
  // Forgets an instruction (after it was replaced).
  void Forget(const Instruction* instruction) { cache_.erase(instruction); }

  // Whether `instruction` existed when the pass started.
  bool IsOriginal(const Instruction& instruction) const {
    return instruction.unique_id() < first_new_id_;
  }
  // The distinct users that existed when the pass started.
  std::vector<Instruction*> Users(const Instruction& instruction) const;
  int64_t UserCount(const Instruction& instruction) const;

  // Dry mode: whether each producer asked about could be fused into all of
  // its users (fusion legality's FusibleIntoAllUsers), kept for the pass.
  // The originals and their original users do not change while a dry pass
  // runs, and the question comes once per consumer of the producer. Null in
  // apply mode, where the module changes under the pass.
  absl::flat_hash_map<const Instruction*, bool>* fusible_into_all_users() {
    return dry_ ? &fusible_into_all_users_ : nullptr;
  }

 private:
  bool dry_;
  int64_t first_new_id_;
  absl::flat_hash_map<const Instruction*, bool> fusible_into_all_users_;
  // Node-based: Info() hands out references that callers hold across further
  // Info() calls, and a flat map's rehash would move the entries under them.
  absl::node_hash_map<const Instruction*, FusibleInfo> cache_;
};

// The computations where fusion passes make fusions: every non-fusion
// computation except those run as kernels' inner functions (reducers,
// comparators, map and scan bodies), in module order.
std::vector<Computation*> FusibleComputations(const Module& module);

}  // namespace hlogym

// CostAfterChoices: the cost model's estimate of a module with alternatives
// (a dry pass's offers) as choosing would leave it, computed on the module as
// it stands. CloneWithChoices then Prune then EstimateCost gives the same
// number to the femtosecond (both add ExactSeconds); here each choice costs a
// walk over the graph it leaves live instead of a copy of the module and its
// teardown. The greedy agent's lookahead tries every move alone on one state:
// hundreds of copies of a jax.random module a step (94% of its time there).
//
// The pruning is DCE; of other passes run after the choices only CSE is
// seen, so callers use this only where the post-passes are CSE and DCE. CSE
// merges inside a candidate's fused body where the producer's copy repeats
// what the consumer computes: such kernels are costed as CSE leaves them,
// each alone in a module of its own (a choice keeping one that could not be
// costed so gets no estimate; the caller copies). Across kernels CSE merges
// a candidate into an instruction computing the same from the same operands
// (a flax GRU computes a gate twice): a choice keeping a candidate that CSE
// could take for another instruction it leaves live in the same computation
// (same operands, and equal by CSE's own test, core/passes/cse.h's
// SameButOperands) gets no estimate either. The tests check the numbers
// against copies over the corpus and the dataset.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "backend/cost_model.h"
#include "core/ir/module.h"
#include "core/rewrite/decisions.h"

namespace hlogym {

class CostAfterChoices {
 public:
  // `alternatives`: FindAlternatives(module); `cse_after`: whether CSE runs
  // after the choices (then DCE, as the pruning). "not supported" when an
  // alternatives node sits where the cost model does not walk (inside a fused
  // computation, where it would change a kernel's own cost) or is missing
  // from `alternatives`. The module must outlive this and stay unchanged.
  static absl::StatusOr<CostAfterChoices> Create(const Module& module,
                                                 absl::Span<const AlternativeNode> alternatives,
                                                 const DeviceSpec& device, bool cse_after);

  // The estimate in seconds after `choices` (one per alternative, as
  // CloneWithChoices takes them; the same errors for a bad one), or nullopt
  // where a kernel they keep is one CSE would change and the view could not
  // cost (see above). Thread-safe.
  absl::StatusOr<std::optional<double>> Seconds(absl::Span<const int64_t> choices) const;

 private:
  enum class Kind : uint8_t { kFree, kKernel, kWhile, kCall, kConditional, kAlternatives };
  struct Node {
    const Instruction* inst;
    ExactSeconds cost = 0;     // kKernel
    int32_t first_operand = 0;  // into operands_
    int32_t operand_count = 0;
    int32_t first_called = 0;  // into called_ (computation ids)
    int32_t called_count = 0;
    int32_t alternative = -1;  // kAlternatives: index in the choices
    Kind kind = Kind::kFree;
    bool cse_changes = false;   // kKernel: CSE would merge inside its fused body
    // kKernel candidate: the instructions CSE would merge it with where both
    // are live (partners_[first_partner, +partner_count)).
    int32_t first_partner = 0;
    int32_t partner_count = 0;
  };
  struct Comp {
    int32_t root = -1;
    std::vector<int32_t> kept;  // what pruning never removes (side effects, parameters)
  };
  struct Walk;

  CostAfterChoices() = default;
  // Finds each candidate's partners: instructions CSE may merge it with.
  void FindCandidatePartners();
  // Costs the kernels whose fused body CSE would change as it leaves them.
  absl::Status CostAfterCse(const DeviceSpec& device);
  int32_t Resolve(int32_t node, absl::Span<const int64_t> choices) const;
  ExactSeconds Total(int32_t comp, int64_t repeat, absl::Span<const int64_t> choices,
                     Walk& walk) const;

  std::vector<Node> nodes_;
  std::vector<int32_t> operands_;  // node ids
  std::vector<int32_t> called_;    // computation ids
  std::vector<Comp> comps_;        // comps_[0]: the entry
  absl::flat_hash_map<const Instruction*, int32_t> node_of_;
  absl::flat_hash_map<const Computation*, int32_t> comp_of_;
  std::vector<int32_t> alternative_nodes_;  // node id of each alternative
  std::vector<int32_t> partners_;           // node ids (Node::first_partner)
  std::vector<AlternativeNode> alternatives_;  // for CheckChoices
};

}  // namespace hlogym

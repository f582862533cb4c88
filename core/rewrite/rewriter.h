// Rewriter: the one way passes change a module. In apply mode each rewrite
// happens at once; in dry mode it is recorded, and when the pass ends each
// rewritten use becomes an `alternatives` instruction whose operand 0 is the
// original and operands 1..k the candidate replacements, as HloEnv's dry mode.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlogym {

enum class RewriteMode { kApply, kDry };

// What a dry pass's candidate reads, as the pass that offers it knows. Finish
// drops a candidate whose choice would make its user depend on itself. A
// candidate computed only from values its original already depends on cannot
// do that: a path from the user to one of its inputs would lead on to the
// original, which the user reads (a cycle in the module). Such candidates
// skip the check, which was most of the cost of finishing a dry fusion pass.
enum class CandidateReads { kAnything, kOriginalsDependencies };

class Rewriter {
 public:
  Rewriter(Module* module, RewriteMode mode) : module_(module), mode_(mode) {}
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  Module* module() const { return module_; }
  RewriteMode mode() const { return mode_; }
  bool dry() const { return mode_ == RewriteMode::kDry; }

  // Adds a new instruction (a replacement or part of one). It is really
  // added in both modes; in dry mode it stays unused until the alternatives
  // are built, and candidates nobody chooses are pruned after the decisions.
  Instruction* Add(Computation* computation, std::unique_ptr<Instruction> instruction);
  // Adds a new computation (a fused computation, for example) just before
  // `user`, keeping callees before callers. `names_reserved`: as
  // Module::AddComputationBefore's.
  Computation* AddComputation(std::unique_ptr<Computation> computation,
                              const Computation* user, bool names_reserved = false);

  // Every use of `original`, and the root position if it is a root, should
  // use `replacement` (same computation, compatible shape).
  absl::Status Replace(Instruction* original, Instruction* replacement);
  // Only `user`'s uses of `original` should use `replacement`. `reads`:
  // see CandidateReads (dry mode; a promise the caller must keep).
  absl::Status ReplaceUse(Instruction* original, Instruction* user,
                          Instruction* replacement,
                          CandidateReads reads = CandidateReads::kAnything);

  // Apply mode: instructions left without users by a rewrite are unlinked at
  // once (so user counts stay true for the rest of the pass) and freed by
  // Finish(). Passes holding pointers from a snapshot skip removed ones.
  bool IsRemoved(const Instruction* instruction) const {
    return removed_.contains(instruction);
  }

  // Removes dead code (apply mode; a dry pass has nothing to offer here, since
  // deleting unused instructions changes no use). Returns instructions removed.
  int64_t PruneDeadCode();

  // Rewrites made (apply mode) or uses recorded (dry mode) so far.
  int64_t rewrite_count() const { return rewrite_count_; }

  // Ends the pass. Apply mode: frees removed instructions and computations
  // that became unreachable. Dry mode: builds the alternatives and returns
  // how many it made; a candidate that would create a cycle is dropped.
  absl::StatusOr<int64_t> Finish();

 private:
  // A use of an instruction: operand uses by `user`, or the root position of
  // the computation when `user` is null.
  struct Use {
    Instruction* original;
    Instruction* user;
    bool operator==(const Use&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Use& u) {
      return H::combine(std::move(h), u.original, u.user);
    }
  };

  absl::Status CheckReplacement(const Instruction* original,
                                const Instruction* replacement) const;
  // A candidate and whether Finish checks it for cycles.
  struct Candidate {
    Instruction* replacement;
    bool check_cycle;
  };
  void RecordCandidate(Use use, Instruction* replacement, CandidateReads reads);
  // Unlinks `instruction` and any operands that it leaves unused.
  void RemoveIfDead(Instruction* instruction);
  absl::StatusOr<int64_t> MaterializeAlternatives();

  Module* module_;
  RewriteMode mode_;
  int64_t rewrite_count_ = 0;
  absl::flat_hash_set<const Instruction*> removed_;
  // Dry mode: each use rewritten, in the order first recorded, with its
  // candidates in the order they were recorded. Inline: most uses get one
  // or two, and a vector per use was a malloc and a free each.
  struct UseCandidates {
    Use use;
    absl::InlinedVector<Candidate, 2> candidates;
  };
  std::vector<UseCandidates> uses_;
  absl::flat_hash_map<Use, size_t> use_index_;  // position in uses_
  // Candidates recorded with a cycle check; without any, Finish keeps no
  // dependency levels at all.
  int64_t cycle_checks_ = 0;
};

}  // namespace hlogym

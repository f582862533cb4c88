#include "core/rewrite/rewriter.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/dependency_levels.h"
#include "core/rewrite/prune.h"

namespace hlogym {
namespace {

// Frees the instructions in `removed` (unlinked, each still in its
// computation) and clears it. Only computations holding one are swept:
// sweeping every computation of the module, each instruction through a
// std::function and a hash lookup, was most of finishing an apply pass.
void FreeRemoved(Module& module, absl::flat_hash_set<const Instruction*>& removed) {
  if (removed.empty()) return;
  absl::flat_hash_set<const Computation*> holding;
  for (const Instruction* inst : removed) holding.insert(inst->parent());
  for (const auto& computation : module.computations()) {
    if (!holding.contains(computation.get())) continue;
    computation->RemoveInstructionsIf(
        [&](const Instruction* inst) { return removed.contains(inst); });
  }
  removed.clear();
}

}  // namespace

Instruction* Rewriter::Add(Computation* computation,
                           std::unique_ptr<Instruction> instruction) {
  return computation->AddInstruction(std::move(instruction));
}

Computation* Rewriter::AddComputation(std::unique_ptr<Computation> computation,
                                      const Computation* user, bool names_reserved) {
  return module_->AddComputationBefore(std::move(computation), user, names_reserved);
}

absl::Status Rewriter::CheckReplacement(const Instruction* original,
                                        const Instruction* replacement) const {
  if (replacement == nullptr || original == nullptr) {
    return absl::InvalidArgumentError("rewrite with a null instruction");
  }
  if (replacement->parent() != original->parent()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rewrite of `", original->name(), "` by `", replacement->name(),
        "`: they are in different computations"));
  }
  if (!original->shape().Compatible(replacement->shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rewrite of `", original->name(), "` (", original->shape().ToString(),
        ") by `", replacement->name(), "` (", replacement->shape().ToString(),
        "): the shapes differ"));
  }
  return absl::OkStatus();
}

absl::Status Rewriter::Replace(Instruction* original, Instruction* replacement) {
  if (original == replacement) return absl::OkStatus();
  if (absl::Status s = CheckReplacement(original, replacement); !s.ok()) return s;
  ++rewrite_count_;
  if (!dry()) {
    original->ReplaceAllUsesWith(replacement);
    RemoveIfDead(original);
    return absl::OkStatus();
  }
  for (Instruction* user : original->users()) {
    if (user != replacement) {
      RecordCandidate({original, user}, replacement, CandidateReads::kAnything);
    }
  }
  if (original->IsRoot()) {
    RecordCandidate({original, nullptr}, replacement, CandidateReads::kAnything);
  }
  return absl::OkStatus();
}

absl::Status Rewriter::ReplaceUse(Instruction* original, Instruction* user,
                                  Instruction* replacement, CandidateReads reads) {
  if (original == replacement) return absl::OkStatus();
  if (absl::Status s = CheckReplacement(original, replacement); !s.ok()) return s;
  if (std::find(user->operands().begin(), user->operands().end(), original) ==
      user->operands().end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`", user->name(), "` does not use `", original->name(), "`"));
  }
  ++rewrite_count_;
  if (!dry()) {
    user->ReplaceOperandWith(original, replacement);
    RemoveIfDead(original);
    return absl::OkStatus();
  }
  RecordCandidate({original, user}, replacement, reads);
  return absl::OkStatus();
}

void Rewriter::RecordCandidate(Use use, Instruction* replacement, CandidateReads reads) {
  auto [it, inserted] = use_index_.try_emplace(use, uses_.size());
  if (inserted) uses_.push_back({use, {}});
  absl::InlinedVector<Candidate, 2>& list = uses_[it->second].candidates;
  // The root position has no user to depend on.
  const bool check = use.user != nullptr && reads == CandidateReads::kAnything;
  auto found = std::find_if(list.begin(), list.end(),
                            [&](const Candidate& c) { return c.replacement == replacement; });
  if (found == list.end()) {
    list.push_back({replacement, check});
    cycle_checks_ += check;
  } else if (check && !found->check_cycle) {
    found->check_cycle = true;  // offered again without the promise
    ++cycle_checks_;
  }
}

void Rewriter::RemoveIfDead(Instruction* instruction) {
  std::vector<Instruction*> worklist = {instruction};
  while (!worklist.empty()) {
    Instruction* inst = worklist.back();
    worklist.pop_back();
    if (inst->user_count() != 0 || !IsRemovableWhenDead(*inst) ||
        !inst->control_successors().empty() || removed_.contains(inst)) {
      continue;
    }
    std::vector<Instruction*> operands(inst->operands().begin(),
                                       inst->operands().end());
    inst->DetachOperands();
    inst->DropAllControlDependencies();
    removed_.insert(inst);
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
}

int64_t Rewriter::PruneDeadCode() {
  if (dry()) return 0;
  // Free what this pass already unlinked before the module-wide sweep.
  FreeRemoved(*module_, removed_);
  const int64_t removed = Prune(*module_);
  rewrite_count_ += removed;
  return removed;
}

absl::StatusOr<int64_t> Rewriter::Finish() {
  if (dry()) return MaterializeAlternatives();
  FreeRemoved(*module_, removed_);
  if (rewrite_count_ > 0) module_->RemoveUnreachableComputations();
  return rewrite_count_;
}

absl::StatusOr<int64_t> Rewriter::MaterializeAlternatives() {
  int64_t created = 0;
  // Levels bound each cycle check's walk; a full walk per candidate made
  // this quadratic in the computation's size. They follow the edges added
  // here only while some candidate is to be checked.
  const bool checks = cycle_checks_ > 0;
  DependencyLevels levels;
  for (const auto& [use, candidates] : uses_) {
    Instruction* original = use.original;
    // The original, then the candidates kept (inline: one list per use).
    absl::InlinedVector<Instruction*, 8> operands = {original};
    for (const Candidate& candidate : candidates) {
      // Choosing this candidate would make the user depend on itself.
      if (candidate.check_cycle && levels.DependsOn(candidate.replacement, use.user)) continue;
      operands.push_back(candidate.replacement);
    }
    if (operands.size() == 1) continue;
    // Left unnamed: AddInstruction names it after its opcode ("alternatives",
    // the same name from the same registry), where naming it here made
    // AddInstruction note the name again (~0.3% of an env step).
    auto alt = Instruction::Create(Opcode::kAlternatives, original->shape(), operands);
    Instruction* node = original->parent()->AddInstruction(std::move(alt));
    if (checks) levels.Added(node);
    if (use.user == nullptr) {
      original->parent()->set_root(node);
    } else {
      use.user->ReplaceOperandWith(original, node);
      if (checks) levels.AddedEdge(node, use.user);
    }
    ++created;
  }
  uses_.clear();
  use_index_.clear();
  cycle_checks_ = 0;
  return created;
}

}  // namespace hlogym

// Building fusion instructions: the one place that creates and merges fused
// computations, shared by every fusion pass (producer-consumer, multi-output,
// horizontal). A new fusion is built from "members": outer instructions,
// plain ones or existing fusions whose bodies are inlined. Values passed
// between members stay inside; every other operand becomes a parameter
// (operand i of the fusion <-> parameter i of the fused computation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "core/passes/fusion_legality.h"
#include "core/rewrite/rewriter.h"

namespace hlogym {

// A value a member computes: its whole result (index -1), or element `index`
// of a tuple-shaped member (a multi-output fusion or a variadic reduce).
struct FusedValue {
  Instruction* member = nullptr;
  int64_t index = -1;
};

struct FusionSpec {
  // Same computation, operands before users.
  std::vector<Instruction*> members;
  // What the fusion returns: one value (the root), or several as a tuple
  // root. Only a single output may be a whole tuple-shaped member.
  std::vector<FusedValue> outputs;
};

// Member fusions' body post-orders, kept for one dry pass: a dry pass adds
// candidates but changes no original, and each body is inlined into every
// candidate its fusion is a member of (a consumer's once per producer
// offered to it, a producer's once per consumer). Not for apply mode, where
// bodies change under the pass. One per pass run: not shared by threads.
class FusedBodyOrders {
 public:
  // `body`'s MakePostOrder(), made on first use; valid while this lives.
  const std::vector<Instruction*>& Of(const Computation& body);

 private:
  // Node-based: a reference handed out stays valid as entries are added.
  absl::node_hash_map<const Computation*, std::vector<Instruction*>> orders_;
};

// Builds the fusion for `spec` and adds it (and its fused computation, just
// before the caller's computation) through the rewriter; it replaces
// nothing: the caller states the rewrites. When the result would not be
// emittable it adds nothing and returns FailedPrecondition with
// CheckEmittableFusion's message (passes skip such candidates); other errors
// mean a malformed spec. The kind follows from the contents: kInput with a reduce inside,
// else kLoop.
// The fused computation's parameters are numbered in the order a walk from
// its root (depth first, operands in order) first reaches them, and the
// fusion's operands follow, so that a fusion does not depend on the order
// its members were merged in. The body is stored in post-order (each
// parameter where it was first needed) and known to be
// (Computation::stored_in_post_order), so ordering it walks nothing. With
// `output_order`, several outputs are put in a canonical order too (by
// ValueFingerprints; ties keep spec's order) and `*output_order` receives
// them in the fusion's order; without it they keep spec's order. With
// `orders`, member bodies' post-orders come from it.
absl::StatusOr<Instruction*> BuildFusion(Rewriter& rewriter, const FusionSpec& spec,
                                         std::vector<FusedValue>* output_order = nullptr,
                                         FusedBodyOrders* orders = nullptr);

// The array values a member's users read: the member itself, or the
// elements of a tuple-shaped member that some get-tuple-element (existing
// when the pass started) reads, in index order. Unread elements are dropped
// from the merged fusion rather than carried along.
std::vector<FusedValue> MemberOutputs(Instruction* member, const FusionAnalysis& analysis);

// Adds get-tuple-element(tuple_valued, index) in tuple_valued's computation.
Instruction* AddGetTupleElement(Rewriter& rewriter, Instruction* tuple_valued, int64_t index);

// One stated rewrite: `replacement` takes `original`'s users.
struct OutputReplacement {
  Instruction* original;
  Instruction* replacement;
};

// States that `replacement` takes over `original`'s uses: Replace in apply
// mode; in dry mode only the uses by instructions that existed when the pass
// started (candidates already added that read `original` keep reading it),
// each offered with `reads` (Rewriter::ReplaceUse's).
absl::Status ReplaceOriginal(Rewriter& rewriter, const FusionAnalysis& analysis,
                             Instruction* original, Instruction* replacement,
                             CandidateReads reads = CandidateReads::kAnything);

// States that `fusion`, built with `outputs`, takes over `member`'s users:
// `member` is replaced by gte(fusion, i) where outputs[i] is {member, -1}
// (by the fusion itself when it has one output); a tuple-shaped member's
// get-tuple-element(member, k) users by gte(fusion, i) where outputs[i] is
// {member, k}. Returns the rewrites stated.
absl::StatusOr<std::vector<OutputReplacement>> ReplaceMemberByOutputs(
    Rewriter& rewriter, const FusionAnalysis& analysis, Instruction* member,
    Instruction* fusion, const std::vector<FusedValue>& outputs);

}  // namespace hlogym

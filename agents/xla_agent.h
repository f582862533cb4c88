// XlaAgent: XLA's default heuristics as decisions. XLA's passes apply every
// rewrite they find legal, so the agent takes a rewrite (candidate 1) for
// every choice group. For producer-consumer fusion it follows XLA's order
// too: XLA visits consumers from the root up, each absorbing its latest
// operand in post-order first. So a consumer that some user could still
// absorb waits (keeps the original), and the others pick, of their
// candidates (one per fusible producer), the one fusing the latest producer.
// A consumer that a fusion taken in the same step starts to read waits too:
// XLA fuses it after that fusion, which then reads the result. Of the
// multi-output fusions offered it takes those whose members all go into one
// fusion when the pass runs once in apply mode on the module its round
// began on (env.RoundStartModule(); the pass reports each merge it makes, as
// a member whose readers all join another fusion leaves no trace in the
// result), as the pipeline runs it once per round: from the partly merged
// module of a later step a run merges more (a sibling into a fusion made in
// this round), which the pipeline leaves to its next round. A sibling joins
// the fusion just made before others pair up, each member into one; of the
// horizontal fusions, the first offered whose members are free. A
// multi-output or horizontal fusion that reads a member of another taken in
// the same step waits a step, as apply mode makes it read that merge.
// A fusion made in the current round of the producer-consumer pass (the
// steps in a row it is offered, env.round_first_id()) is not copied into a
// consumer while it has other readers: one apply-mode run visits consumers
// from the root up and never fuses what it made, and the pipeline's next
// round comes after multi-output fusion, which may merge it (as a second
// output) instead. E.g. gelu's tanh: the steps make a tanh fusion (no user
// may copy the expensive tanh), which the forward and the backward fusions
// then both copied, where the pipeline makes it a second output of the
// forward one. A round-made fusion with one reader may still join it: the
// steps let a consumer fuse its producers as soon as no user can absorb it
// now, while the run plans the reader's whole fusion, which takes the
// consumer's ops once all their readers are in.
// On xla-v0, which offers the default pipeline's fusion stages, an episode
// ends on the default pipeline's module on all 24 small twins, all 25
// full-size corpus modules and, with xla-v0's limits raised 4x, 123 of the
// 126 dataset modules; the other 3 (random_beta, _dirichlet and _gamma)
// outgrow 4x's limits and match too with 8x. A multi-output round ends on
// one run's module (after the env's CSE and DCE; checked round by round on
// random_gamma and adam), and the env asks a pass again after its round
// changed something, so a second multi-output run merges what the first
// made possible (random_gamma's and adam's second runs), as the pipeline's
// fixed-point loop. Once the agent took a second run's merges in the first
// round, from a partly merged module (flax_rnn_gru and _lstm merged more
// than the pipeline; the random samplers' log fusions got other outputs).
// The pipeline's
// apply-mode run plans a consumer's whole fusion; a member it copies (it
// stays outside for its other users) counts as a reader of the member's
// producers, so an expensive producer (log, gather) read by such a member is
// not copied in too, as XLA's InstructionFusion and as the steps. On
// fusion-v0 it retraces fusion(mode=xla) only, one producer per consumer per
// step.
#pragma once

#include <string>
#include <vector>

#include "agents/agent.h"

namespace hlogym {

class XlaAgent : public Agent {
 public:
  std::string name() const override { return "xla"; }
  // Stateless and thread-safe.
  absl::StatusOr<std::vector<int64_t>> Act(const HloRewriteEnv& env) override;
};

}  // namespace hlogym

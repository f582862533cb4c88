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
// fusion when the pass runs in apply mode on the current module (a sibling
// joins the fusion just made before others pair up), each member into one;
// of the horizontal fusions, the first offered whose members are free. A
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
// full-size corpus modules and 121 of the 126 dataset modules. The pipeline's
// apply-mode run plans a consumer's whole fusion; a member it copies (it
// stays outside for its other users) counts as a reader of the member's
// producers, so an expensive producer (log, gather) read by such a member is
// not copied in too, as XLA's InstructionFusion and as the steps. Left:
// flax_rnn_gru_train and flax_rnn_lstm_train, where the producer-consumer
// round ends on exactly one run's module but the multi-output round merges
// more than one run does (the run's result is no fixed point of the pass:
// a second run merges a reduce fusion into a five-output sibling fusion,
// which the pipeline only does after its next producer-consumer round); and
// random_beta, _dirichlet and _gamma (which need limits 8x xla-v0's to fit),
// whose log fusions end with other outputs than the pipeline's. On
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

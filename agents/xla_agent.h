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
// On xla-v0, which offers the default pipeline's fusion stages, an episode
// ends on the default pipeline's module on all 24 small twins and 24 of the
// 25 full-size corpus modules; on fusion-v0 it retraces fusion(mode=xla)
// only, one producer per consumer per step. Its producer-consumer steps
// do not always retrace fusion(mode=xla)'s apply-mode run (cause not found
// yet): on full-size gpt2 the run leaves 39 copies of the embedding gather
// and the episode 2; on random_gamma the run copies two logs into the three
// fusions that read them, the episode does not. Those episodes, and
// random_beta's and _dirichlet's, end off the default pipeline's module.
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

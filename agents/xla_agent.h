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
// cannot always retrace fusion(mode=xla)'s apply-mode run, because the run
// plans a consumer's whole fusion and counts a producer's users outside that
// plan only: a producer whose one user is a member copied into the plan (that
// member stays, for its other users) joins with no duplication check, so an
// expensive op (log, gather) is copied, which XLA's InstructionFusion refuses
// and a step cannot do. E.g. l = log(p); a = add(l, p), read by n1 and n2:
// the run gives two fusions, each computing its own log; a step copies `a`
// into both, and then `l`, an expensive op with two users, stays outside
// (XLA's result). The other order, `a` absorbing `l` first, makes `a` a
// fusion that FusionMerger copies only if that moves fewer bytes: so the
// small gpt2 twin ends on the run's module, but on full-size gpt2 the copied
// fusion would read the 8 MiB embedding table 38 times and the step is not
// offered (the run copies the gather into the 38 fusions reading the
// embedding; the episode keeps one gather fusion that they read). On
// random_gamma (and _beta, _dirichlet) the run copies two logs into three of
// the four fusions reading them, the fourth (a broadcast reusing elements)
// reads them outside: no order of legal steps copies a log that stays read
// outside. Those episodes end off the default pipeline's module.
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

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
// of the horizontal fusions, the first offered whose members are free.
// An episode thus retraces fusion(mode=xla) one producer per consumer per
// step; it needs more steps than fusion-v0's 32 on large modules. It does not
// reach the default pipeline exactly: that pipeline also runs multi-output
// and horizontal fusion, which fusion-v0 does not offer, and a consumer grown
// step by step is checked pairwise, where XLA checks the whole group.
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

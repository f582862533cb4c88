#include "backend/cost_after_choices.h"

#include <algorithm>
#include <deque>
#include <memory>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/passes/cse.h"
#include "core/passes/dce.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/prune.h"

namespace hlogym {

namespace {

// Copies `source` and what it calls into `module` (callees first), once.
Computation* CopyInto(const Computation& source, Module& module,
                      absl::flat_hash_map<const Computation*, Computation*>& copies) {
  if (auto it = copies.find(&source); it != copies.end()) return it->second;
  auto copy = std::make_unique<Computation>(source.name());
  absl::flat_hash_map<const Instruction*, Instruction*> copied;
  std::vector<Instruction*> operands;
  for (const Instruction* inst : source.MakePostOrder()) {
    operands.clear();
    for (const Instruction* operand : inst->operands()) operands.push_back(copied.at(operand));
    Instruction* added =
        copy->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
    for (int64_t i = 0; i < static_cast<int64_t>(inst->called_computations().size()); ++i) {
      if (const Computation* callee = inst->called_computations()[i]) {
        Computation* callee_copy = CopyInto(*callee, module, copies);
        added->set_called_computation(i, callee_copy);
        if (callee->fusion_instruction() == inst) callee_copy->set_fusion_instruction(added);
      }
    }
    copied[inst] = added;
  }
  copy->set_root(copied.at(source.root()));
  return copies[&source] = module.AddComputation(std::move(copy));
}

// A module whose entry is `fusion` alone, reading parameters of its
// operands' shapes, with copies of the computations it calls.
std::unique_ptr<Module> FusionAlone(const Instruction& fusion) {
  auto module = std::make_unique<Module>("fusion_alone");
  absl::flat_hash_map<const Computation*, Computation*> copies;
  std::vector<Computation*> callees;
  for (const Computation* c : fusion.called_computations()) {
    callees.push_back(c == nullptr ? nullptr : CopyInto(*c, *module, copies));
  }
  auto entry = std::make_unique<Computation>("entry");
  std::vector<Instruction*> parameters;
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    parameters.push_back(entry->AddInstruction(Instruction::CreateParameter(
        i, fusion.operand(i)->shape(), absl::StrCat("p", i))));
  }
  Instruction* copy =
      entry->AddInstruction(fusion.CloneWithNewOperands(fusion.shape(), parameters));
  copy->set_called_computations(callees);
  for (Computation* c : callees) {
    if (c != nullptr) c->set_fusion_instruction(copy);
  }
  entry->set_root(copy);
  module->set_entry(module->AddComputation(std::move(entry)));
  return module;
}

}  // namespace

// A walk's marks and stack, per thread and kept between walks: a node is
// seen in a walk when its mark is the walk's stamp, so nothing is cleared
// (64-bit stamps do not wrap, so a nested walk never erases the marks of the
// walk around it).
struct CostAfterChoices::Walk {
  std::vector<uint64_t> seen;
  uint64_t stamp = 0;
  std::vector<int32_t> stack;
  std::vector<int32_t> alike_reached;  // kernels reached that have partners
  bool cse_changes = false;  // a kernel reached has cse_changes, or a partner beside it

  uint64_t Begin(size_t nodes) {
    if (seen.size() < nodes) seen.resize(nodes, 0);
    return ++stamp;
  }
};

absl::StatusOr<CostAfterChoices> CostAfterChoices::Create(
    const Module& module, absl::Span<const AlternativeNode> alternatives,
    const DeviceSpec& device, bool cse_after) {
  CostAfterChoices view;
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  view.alternatives_.assign(alternatives.begin(), alternatives.end());
  // The computations EstimateCost walks: the entry and what its while
  // loops, calls and conditionals run, found breadth first.
  std::deque<const Computation*> queue = {module.entry()};
  view.comp_of_[module.entry()] = 0;
  view.comps_.emplace_back();
  while (!queue.empty()) {
    const Computation* computation = queue.front();
    queue.pop_front();
    const int32_t id = view.comp_of_.at(computation);
    for (const auto& inst : computation->instructions()) {
      view.node_of_[inst.get()] = static_cast<int32_t>(view.nodes_.size());
      view.nodes_.push_back({inst.get()});
    }
    for (const auto& inst : computation->instructions()) {
      Node& node = view.nodes_[static_cast<size_t>(view.node_of_.at(inst.get()))];
      node.first_operand = static_cast<int32_t>(view.operands_.size());
      for (const Instruction* operand : inst->operands()) {
        auto it = view.node_of_.find(operand);
        if (it == view.node_of_.end()) {
          return absl::InternalError(absl::StrCat("`", inst->name(), "` reads `",
                                                  operand->name(), "` of another computation"));
        }
        view.operands_.push_back(it->second);
      }
      node.operand_count = static_cast<int32_t>(inst->operand_count());
      std::vector<const Computation*> called;
      switch (inst->opcode()) {
        case Opcode::kAlternatives:
          node.kind = Kind::kAlternatives;
          break;
        case Opcode::kWhile:
          node.kind = Kind::kWhile;
          for (const Computation* c : {inst->while_condition(), inst->while_body()}) {
            if (c != nullptr) called.push_back(c);
          }
          break;
        case Opcode::kCall:
          node.kind = inst->called_computations().empty() ? Kind::kFree : Kind::kCall;
          if (!inst->called_computations().empty()) called.push_back(inst->to_apply());
          break;
        case Opcode::kConditional:
          node.kind = Kind::kConditional;
          called.assign(inst->called_computations().begin(), inst->called_computations().end());
          break;
        default:
          if (!IsCostFree(*inst)) {
            node.kind = Kind::kKernel;
            node.cost = ToExactSeconds(EstimateKernel(*inst, device).seconds);
            node.cse_changes = cse_after && inst->opcode() == Opcode::kFusion &&
                               inst->fused_computation() != nullptr &&
                               HasDuplicates(*inst->fused_computation());
          }
      }
      // EstimateCost skips free instructions before looking at the opcode.
      if (node.kind != Kind::kAlternatives && IsCostFree(*inst)) {
        node.kind = Kind::kFree;
        called.clear();
      }
      node.first_called = static_cast<int32_t>(view.called_.size());
      node.called_count = static_cast<int32_t>(called.size());
      for (const Computation* c : called) {
        auto [it, inserted] = view.comp_of_.try_emplace(c, static_cast<int32_t>(view.comps_.size()));
        if (inserted) {
          view.comps_.emplace_back();
          queue.push_back(c);
        }
        view.called_.push_back(it->second);
      }
      if (!IsRemovableWhenDead(*inst)) view.comps_[id].kept.push_back(view.node_of_.at(inst.get()));
    }
    view.comps_[id].root = view.node_of_.at(computation->root());
  }
  view.alternative_nodes_.reserve(alternatives.size());
  for (size_t i = 0; i < alternatives.size(); ++i) {
    auto it = view.node_of_.find(alternatives[i].node);
    if (it == view.node_of_.end()) {
      return absl::UnimplementedError(absl::StrCat(
          "not supported: a cost estimate after choices with the alternatives node `",
          alternatives[i].node->name(), "` in computation `",
          alternatives[i].node->parent()->name(),
          "`, which the cost model does not walk (a fused or applied computation)"));
    }
    view.nodes_[static_cast<size_t>(it->second)].alternative = static_cast<int32_t>(i);
    view.alternative_nodes_.push_back(it->second);
  }
  for (const Node& node : view.nodes_) {
    if (node.kind == Kind::kAlternatives && node.alternative < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the alternatives node `", node.inst->name(), "` is not among the alternatives given"));
    }
  }
  if (cse_after) {
    view.FindCandidatePartners();
    RETURN_IF_ERROR(view.CostAfterCse(device));
  }
  return view;
}

void CostAfterChoices::FindCandidatePartners() {
  // CSE merges a chosen candidate into an instruction that computes the same
  // from the same operands (a flax GRU's fused gate, computed again
  // elsewhere). Such a pair shares opcode, shape and operands, as the
  // originals they read (a choice of 0 leaves the original): those are a
  // candidate's partners, and a choice leaving one live beside it is left
  // to the copies (Total).
  auto original = [&](int32_t id) {
    const Node& n = nodes_[static_cast<size_t>(id)];
    return n.kind == Kind::kAlternatives ? operands_[static_cast<size_t>(n.first_operand)] : id;
  };
  auto key = [&](int32_t id) {
    const Node& n = nodes_[static_cast<size_t>(id)];
    std::vector<int32_t> reads;
    for (int32_t i = 0; i < n.operand_count; ++i) {
      reads.push_back(original(operands_[static_cast<size_t>(n.first_operand + i)]));
    }
    // In order, as CSE compares operands, but for commutative ops.
    if (IsCommutative(n.inst->opcode())) std::sort(reads.begin(), reads.end());
    const Shape& shape = n.inst->shape();
    return absl::HashOf(static_cast<int>(n.inst->opcode()), static_cast<int>(shape.element_type()),
                        shape.IsArray() ? shape.dims() : absl::Span<const int64_t>(), reads);
  };
  // Only where both of a pair are live can CSE merge them: on random_beta,
  // whose threefry chains offer many candidates of one shape reading the
  // same values, copying every move keeping a candidate with any partner
  // sent 23% of greedy's lookaheads to copies. And only a pair CSE's own
  // test (SameButOperands) takes for identical: on random_gamma, fusions
  // of one shape reading the same values but computing different things
  // still sent greedy to a copy for 7,007 of its moves in 147 steps.
  // (Telling partners apart by their fused computations' fingerprints
  // instead missed a pair CSE merged, on loss_l2_512x100: the view then
  // differed from the copy.) The first merge CSE makes after a move needs
  // a live candidate: the module before it is CSE's fixed point; merges it
  // enables are left to the copy that the first one sends the move to.
  std::vector<size_t> keys(nodes_.size());
  absl::flat_hash_map<size_t, std::vector<int32_t>> alike;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].kind != Kind::kKernel) continue;
    keys[i] = key(static_cast<int32_t>(i));
    alike[keys[i]].push_back(static_cast<int32_t>(i));
  }
  for (int32_t alt : alternative_nodes_) {
    const Node& a = nodes_[static_cast<size_t>(alt)];
    for (int32_t k = 1; k < a.operand_count; ++k) {
      int32_t candidate = operands_[static_cast<size_t>(a.first_operand + k)];
      if (nodes_[static_cast<size_t>(candidate)].inst->opcode() == Opcode::kGetTupleElement) {
        candidate = operands_[static_cast<size_t>(nodes_[static_cast<size_t>(candidate)].first_operand)];
      }
      Node& c = nodes_[static_cast<size_t>(candidate)];
      if (c.kind != Kind::kKernel || c.partner_count > 0) continue;
      c.first_partner = static_cast<int32_t>(partners_.size());
      for (int32_t other : alike[keys[static_cast<size_t>(candidate)]]) {
        const Node& o = nodes_[static_cast<size_t>(other)];
        // CSE compares a body as it leaves it, not known yet for one it
        // will shrink (cse_changes, as built: CostAfterCse comes next): such
        // a pair keeps the key alone (loss_l2_512x100's multi-output
        // candidate repeats a subtract; CSE merges it, then the fusion into
        // its twin).
        if (other != candidate &&
            (c.cse_changes || o.cse_changes || SameButOperands(*c.inst, *o.inst))) {
          partners_.push_back(other);
        }
      }
      c.partner_count = static_cast<int32_t>(partners_.size()) - c.first_partner;
    }
  }
}

absl::Status CostAfterChoices::CostAfterCse(const DeviceSpec& device) {
  // Each such kernel is costed on a module of its own (FusionAlone), where
  // CSE and DCE leave its body as they would in the whole module. Merging
  // inside a body leaves its parameters read (a merged pair reads the same
  // ones), so the operands are the view's; where DCE drops one, the kernel
  // stays uncosted. (Copies of the whole module choosing the candidates
  // took a round per link of a chain of them, and were a third of greedy's
  // time on random_beta.)
  for (Node& node : nodes_) {
    if (!node.cse_changes) continue;
    std::unique_ptr<Module> alone = FusionAlone(*node.inst);
    CsePass cse;
    DcePass dce;
    RETURN_IF_ERROR(RunPass(cse, *alone).status());
    RETURN_IF_ERROR(RunPass(dce, *alone).status());
    const Instruction& fusion = *alone->entry()->root();
    if (fusion.operand_count() == node.operand_count &&
        !HasDuplicates(*fusion.fused_computation())) {
      node.cost = ToExactSeconds(EstimateKernel(fusion, device).seconds);
      node.cse_changes = false;
    }
  }
  return absl::OkStatus();
}

int32_t CostAfterChoices::Resolve(int32_t node, absl::Span<const int64_t> choices) const {
  while (nodes_[static_cast<size_t>(node)].kind == Kind::kAlternatives) {
    const Node& alt = nodes_[static_cast<size_t>(node)];
    node = operands_[static_cast<size_t>(alt.first_operand + choices[static_cast<size_t>(alt.alternative)])];
  }
  return node;
}

ExactSeconds CostAfterChoices::Total(int32_t comp, int64_t repeat,
                                     absl::Span<const int64_t> choices, Walk& walk) const {
  // What pruning keeps: everything the root and the unremovable
  // instructions read, through the chosen operands. Each kept kernel counts
  // once, in any order (exact sums).
  const uint64_t stamp = walk.Begin(nodes_.size());
  const size_t base = walk.stack.size();
  const size_t alike_base = walk.alike_reached.size();
  const Comp& c = comps_[static_cast<size_t>(comp)];
  walk.stack.push_back(Resolve(c.root, choices));
  for (int32_t kept : c.kept) walk.stack.push_back(Resolve(kept, choices));
  ExactSeconds total = 0;
  while (walk.stack.size() > base) {
    const int32_t id = walk.stack.back();
    walk.stack.pop_back();
    if (walk.seen[static_cast<size_t>(id)] == stamp) continue;
    walk.seen[static_cast<size_t>(id)] = stamp;
    const Node& node = nodes_[static_cast<size_t>(id)];
    for (int32_t i = 0; i < node.operand_count; ++i) {
      walk.stack.push_back(Resolve(operands_[static_cast<size_t>(node.first_operand + i)], choices));
    }
    const int32_t* called = called_.data() + node.first_called;
    switch (node.kind) {
      case Kind::kKernel:
        walk.cse_changes |= node.cse_changes;
        if (node.partner_count > 0) walk.alike_reached.push_back(id);
        total += node.cost * repeat;
        break;
      case Kind::kWhile: {
        const double trips = TripCount(*node.inst, [&](const Instruction* inst) {
          auto it = node_of_.find(inst);
          return it == node_of_.end() ? inst : nodes_[static_cast<size_t>(Resolve(it->second, choices))].inst;
        });
        const int64_t times = RepeatTimes(repeat, trips);
        // A nested walk pushes above this one's stack and uses its own stamp
        // on another computation's nodes.
        for (int32_t k = 0; k < node.called_count; ++k) total += Total(called[k], times, choices, walk);
        break;
      }
      case Kind::kCall:
        total += Total(called[0], repeat, choices, walk);
        break;
      case Kind::kConditional: {
        ExactSeconds worst = 0;
        for (int32_t k = 0; k < node.called_count; ++k) {
          worst = std::max(worst, Total(called[k], 1, choices, walk));
        }
        total += worst * repeat;
        break;
      }
      case Kind::kFree:
      case Kind::kAlternatives:
        break;
    }
  }
  // CSE merges a pair only where both are live in this computation.
  for (size_t i = alike_base; i < walk.alike_reached.size(); ++i) {
    const Node& node = nodes_[static_cast<size_t>(walk.alike_reached[i])];
    for (int32_t k = 0; k < node.partner_count; ++k) {
      const int32_t partner = partners_[static_cast<size_t>(node.first_partner + k)];
      walk.cse_changes |= walk.seen[static_cast<size_t>(partner)] == stamp;
    }
  }
  walk.alike_reached.resize(alike_base);
  return total;
}

absl::StatusOr<std::optional<double>> CostAfterChoices::Seconds(
    absl::Span<const int64_t> choices) const {
  RETURN_IF_ERROR(CheckChoices(alternatives_, choices));
  thread_local Walk walk;
  walk.stack.clear();
  walk.alike_reached.clear();
  walk.cse_changes = false;
  const ExactSeconds total = Total(0, 1, choices, walk);
  if (walk.cse_changes) return std::nullopt;
  return FromExactSeconds(total);
}

}  // namespace hlogym

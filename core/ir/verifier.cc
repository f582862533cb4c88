// The module verifier: structure (roots, parameters, names, operand/user
// links, called computations, fusion back-pointers, acyclicity), then each
// instruction's declared shape against shape inference. Errors name the
// computation and instruction and say what was expected and found.
#include "core/ir/verifier.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/cord.h"
#include "absl/types/optional.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/shape_inference.h"
#include "core/ir/shape_inference_internal.h"

namespace hlogym {
namespace {

using shape_inference_internal::AV;

absl::Status AtComputation(const Computation& c, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("computation `", c.name(), "`: ", what));
}

// Every Verify error carries this payload: "<computation>\n<instruction>"
// naming the instruction at fault (names never hold a newline), or empty.
constexpr absl::string_view kVerifyErrorUrl = "hlogym/verify";

absl::Status At(const Computation& c, const Instruction& inst, absl::string_view what) {
  absl::Status status = absl::InvalidArgumentError(
      absl::StrCat("computation `", c.name(), "`, instruction `", inst.name(), "`: ", what));
  status.SetPayload(kVerifyErrorUrl, absl::Cord(absl::StrCat(c.name(), "\n", inst.name())));
  return status;
}

// Opcodes that move or reinterpret data without recomputing it: under
// layout_sensitive their layouts must equal the inferred ones (XLA's list).
bool KeepsLayout(Opcode op) {
  switch (op) {
    case Opcode::kCall: case Opcode::kConditional: case Opcode::kConstant:
    case Opcode::kCopyDone: case Opcode::kCopyStart: case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier: case Opcode::kParameter: case Opcode::kTuple:
    case Opcode::kWhile: case Opcode::kAlternatives: case Opcode::kDynamicUpdateSlice:
    case Opcode::kAddDependency: case Opcode::kDomain:
      return true;
    default:
      return false;
  }
}

// How many computations an opcode calls; -1 when it varies (conditional
// branches, custom-call's optional ones).
int CalleeCount(Opcode op) {
  switch (op) {
    case Opcode::kFusion: case Opcode::kCall: case Opcode::kReduce: case Opcode::kReduceWindow:
    case Opcode::kScatter: case Opcode::kSort: case Opcode::kMap: case Opcode::kScan:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kReduceScatter:
    case Opcode::kAsyncStart:
      return 1;
    case Opcode::kWhile: case Opcode::kSelectAndScatter:
      return 2;
    case Opcode::kConditional: case Opcode::kCustomCall:
      return -1;
    default:
      return 0;
  }
}

// Shapes agree in type and dims (dynamism ignored, as XLA's Compatible) and,
// when `layouts`, in the layout of every array where both have one.
bool ShapesMatch(const Shape& a, const Shape& b, bool layouts) {
  if (!shape_inference_internal::Compatible(a, b)) return false;
  if (!layouts) return true;
  if (a.IsTuple()) {
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      if (!ShapesMatch(a.tuple_shape(i), b.tuple_shape(i), true)) return false;
    }
    return true;
  }
  if (!a.IsArray() || a.rank() == 0 || !a.has_layout() || !b.has_layout()) return true;
  return a.layout() == b.layout();
}

std::string ShapeText(const Shape& shape, bool layouts) { return shape.ToString(layouts); }

// Membership in the operand, user and control lists of an instruction. Most
// lists are short and scanned; long ones (a parameter with thousands of
// users, a large tuple) get a hash set built once, so checking every edge
// stays linear.
class EdgeLookup {
 public:
  enum List { kOperands, kUsers, kControlPredecessors, kControlSuccessors, kNumLists };

  bool Contains(const Instruction& owner, List list, const Instruction* x) {
    const absl::Span<Instruction* const> items = Items(owner, list);
    if (items.size() <= kScanLimit) {
      for (const Instruction* y : items) {
        if (y == x) return true;
      }
      return false;
    }
    auto [it, inserted] = sets_[list].try_emplace(&owner);
    if (inserted) it->second.insert(items.begin(), items.end());
    return it->second.contains(x);
  }

 private:
  static absl::Span<Instruction* const> Items(const Instruction& owner, List list) {
    switch (list) {
      case kOperands: return owner.operands();
      case kUsers: return owner.users();
      case kControlPredecessors: return owner.control_predecessors();
      default: return owner.control_successors();
    }
  }

  static constexpr size_t kScanLimit = 16;
  absl::flat_hash_map<const Instruction*, absl::flat_hash_set<const Instruction*>> sets_[kNumLists];
};

class Verifier {
 public:
  Verifier(const Module& module, const VerifyOptions& options)
      : module_(module), options_(options) {}

  absl::Status Run() {
    if (module_.entry() == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("module `", module_.name(), "` has no entry computation"));
    }
    absl::flat_hash_set<std::string_view> names;
    for (size_t i = 0; i < module_.computations().size(); ++i) {
      const Computation* c = module_.computations()[i].get();
      if (c == nullptr) return absl::InvalidArgumentError("the module holds a null computation");
      position_[c] = static_cast<int64_t>(i);
      if (!names.insert(c->name()).second) {
        return AtComputation(*c, "the name is used by two computations");
      }
    }
    if (!position_.contains(module_.entry())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the entry computation `", module_.entry()->name(), "` is not in the module"));
    }
    for (const auto& c : module_.computations()) RETURN_IF_ERROR(VerifyComputation(*c));
    return VerifyEntryLayout();
  }

 private:
  absl::Status VerifyComputation(const Computation& c) {
    if (c.root() == nullptr) return AtComputation(c, "has no root");
    if (c.root()->parent() != &c) {
      return AtComputation(c, absl::StrCat("its root `", c.root()->name(), "` belongs to another computation"));
    }
    RETURN_IF_ERROR(VerifyParameters(c));
    RETURN_IF_ERROR(VerifyFusionBackPointer(c));
    caller_position_ = position_.at(&c);
    names_.clear();
    names_.reserve(c.instructions().size());
    for (const auto& owned : c.instructions()) {
      const Instruction& inst = *owned;
      RETURN_IF_ERROR(VerifyStructure(c, inst));
      RETURN_IF_ERROR(VerifyShape(c, inst));
    }
    return VerifyAcyclic(c);
  }

  absl::Status VerifyParameters(const Computation& c) {
    for (int64_t i = 0; i < c.parameter_count(); ++i) {
      const Instruction* p = c.parameter(i);
      if (p == nullptr) {
        return AtComputation(c, absl::StrCat("has no parameter ", i, " but ", c.parameter_count(),
                                             " parameters (they must be numbered 0..n-1)"));
      }
      if (p->opcode() != Opcode::kParameter || p->parameter_number() != i || p->parent() != &c) {
        return At(c, *p, absl::StrCat("is registered as parameter ", i, " but is not parameter(",
                                      i, ") of this computation"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyFusionBackPointer(const Computation& c) {
    const Instruction* fusion = c.fusion_instruction();
    if (fusion == nullptr) return absl::OkStatus();
    if (fusion->opcode() != Opcode::kFusion || fusion->called_computations().empty() ||
        fusion->called_computations()[0] != &c) {
      return AtComputation(c, absl::StrCat("names `", fusion->name(),
                                           "` as its fusion instruction, which does not call it"));
    }
    if (fusion->parent() == nullptr || !position_.contains(fusion->parent())) {
      return AtComputation(c, absl::StrCat("its fusion instruction `", fusion->name(),
                                           "` is not in the module"));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyStructure(const Computation& c, const Instruction& inst) {
    if (inst.parent() != &c) return At(c, inst, "its parent is another computation");
    if (inst.name().empty()) return AtComputation(c, "holds an instruction without a name");
    if (!names_.insert(inst.name()).second) {
      return At(c, inst, "the name is used by two instructions of the computation");
    }
    if (inst.opcode() == Opcode::kParameter) {
      const int64_t n = inst.parameter_number();
      if (n < 0 || n >= c.parameter_count() || c.parameter(n) != &inst) {
        return At(c, inst, absl::StrCat("parameter(", n, ") is not registered as parameter ", n,
                                        " (is the number used twice?)"));
      }
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const Instruction* o = inst.operand(i);
      if (o == nullptr) return At(c, inst, absl::StrCat("operand ", i, " is null"));
      if (o->parent() != &c) {
        return At(c, inst, absl::StrCat("operand ", i, " `", o->name(), "` is in another computation"));
      }
      if (!edges_.Contains(*o, EdgeLookup::kUsers, &inst)) {
        return At(c, inst, absl::StrCat("uses `", o->name(), "`, which does not list it as a user"));
      }
    }
    for (const Instruction* u : inst.users()) {
      if (u == nullptr) return At(c, inst, "lists a null user");
      if (u->parent() != &c) {
        return At(c, inst, absl::StrCat("lists user `", u->name(), "` from another computation"));
      }
      if (!edges_.Contains(*u, EdgeLookup::kOperands, &inst)) {
        return At(c, inst, absl::StrCat("lists `", u->name(), "` as a user, but it is not an operand of it"));
      }
    }
    for (const Instruction* p : inst.control_predecessors()) {
      if (p == nullptr || p->parent() != &c) {
        return At(c, inst, "has a control predecessor outside the computation");
      }
      if (!edges_.Contains(*p, EdgeLookup::kControlSuccessors, &inst)) {
        return At(c, inst, absl::StrCat("has control predecessor `", p->name(),
                                        "`, which does not list it as a successor"));
      }
    }
    for (const Instruction* s : inst.control_successors()) {
      if (s == nullptr || s->parent() != &c) {
        return At(c, inst, "has a control successor outside the computation");
      }
      if (!edges_.Contains(*s, EdgeLookup::kControlPredecessors, &inst)) {
        return At(c, inst, absl::StrCat("has control successor `", s->name(),
                                        "`, which does not list it as a predecessor"));
      }
    }
    const int expected_callees = CalleeCount(inst.opcode());
    const int64_t callees = static_cast<int64_t>(inst.called_computations().size());
    if (expected_callees >= 0 && callees != expected_callees) {
      return At(c, inst, absl::StrCat(AV(OpcodeName(inst.opcode())), " calls ", expected_callees,
                                      " computation", expected_callees == 1 ? "" : "s", ", got ",
                                      callees));
    }
    for (const Computation* callee : inst.called_computations()) {
      if (callee == nullptr) return At(c, inst, "calls a null computation");
      auto it = position_.find(callee);
      if (it == position_.end()) {
        return At(c, inst, absl::StrCat("calls `", callee->name(), "`, which is not in the module"));
      }
      if (it->second >= caller_position_) {
        return At(c, inst, absl::StrCat("calls `", callee->name(),
                                        "`, which does not come before its caller in the module ",
                                        "(callees come first; recursion is not allowed)"));
      }
    }
    if (inst.opcode() == Opcode::kFusion && !inst.called_computations().empty() &&
        inst.called_computations()[0]->fusion_instruction() != &inst) {
      return At(c, inst, absl::StrCat("its fused computation `", inst.called_computations()[0]->name(),
                                      "` does not name it as its fusion instruction"));
    }
    return absl::OkStatus();
  }

  absl::Status VerifyShape(const Computation& c, const Instruction& inst) {
    absl::StatusOr<Shape> inferred = InferShape(inst);
    if (!inferred.ok()) return At(c, inst, inferred.status().message());
    const bool layouts = options_.layout_sensitive && KeepsLayout(inst.opcode());
    if (ShapesMatch(*inferred, inst.shape(), layouts)) return absl::OkStatus();
    return At(c, inst, absl::StrCat(AV(OpcodeName(inst.opcode())),
                                    "'s shape does not match its operands and attributes (expected ",
                                    ShapeText(*inferred, layouts), ", got ",
                                    ShapeText(inst.shape(), layouts), ")"));
  }

  // Depth-first search over operands and control predecessors; an edge to
  // an instruction still on the stack closes a cycle, which is reported.
  absl::Status VerifyAcyclic(const Computation& c) {
    enum : uint8_t { kNew = 0, kOnStack = 1, kDone = 2 };
    absl::flat_hash_map<const Instruction*, uint8_t>& state = dfs_state_;
    state.clear();
    state.reserve(c.instructions().size());
    std::vector<DfsFrame>& stack = dfs_stack_;
    stack.clear();
    for (const auto& owned : c.instructions()) {
      if (state[owned.get()] != kNew) continue;
      stack.push_back({owned.get(), 0});
      state[owned.get()] = kOnStack;
      while (!stack.empty()) {
        DfsFrame& f = stack.back();
        const int64_t operands = f.inst->operand_count();
        const int64_t total = operands + static_cast<int64_t>(f.inst->control_predecessors().size());
        if (f.next == total) {
          state[f.inst] = kDone;
          stack.pop_back();
          continue;
        }
        const Instruction* next = f.next < operands ? f.inst->operand(f.next)
                                                    : f.inst->control_predecessors()[f.next - operands];
        ++f.next;
        uint8_t& s = state[next];
        if (s == kDone) continue;
        if (s == kOnStack) {
          std::vector<std::string> path;
          bool in_cycle = false;
          for (const DfsFrame& g : stack) {
            in_cycle = in_cycle || g.inst == next;
            if (in_cycle) path.push_back(g.inst->name());
          }
          path.push_back(next->name());
          return At(c, *next, absl::StrCat("is part of a cycle of operands or control ",
                                           "predecessors: ", absl::StrJoin(path, " -> ")));
        }
        s = kOnStack;
        stack.push_back({next, 0});
      }
    }
    return absl::OkStatus();
  }

  absl::Status VerifyEntryLayout() {
    const auto& layout = module_.entry_computation_layout();
    if (!layout) return absl::OkStatus();
    const Computation& entry = *module_.entry();
    const bool layouts = options_.layout_sensitive;
    auto fail = [&](const auto&... what) {
      return absl::InvalidArgumentError(absl::StrCat("entry_computation_layout of module `",
                                                     module_.name(), "`: ", what...));
    };
    if (static_cast<int64_t>(layout->parameters.size()) != entry.parameter_count()) {
      return fail("lists ", layout->parameters.size(), " parameters but `", entry.name(), "` takes ",
                  entry.parameter_count());
    }
    for (int64_t i = 0; i < entry.parameter_count(); ++i) {
      const Shape& expected = entry.parameter(i)->shape();
      if (!ShapesMatch(layout->parameters[i], expected, layouts)) {
        return fail("parameter ", i, " does not match `", entry.name(), "` (expected ",
                    ShapeText(expected, layouts), ", got ", ShapeText(layout->parameters[i], layouts),
                    ")");
      }
    }
    const Shape& result = entry.root()->shape();
    if (!ShapesMatch(layout->result, result, layouts)) {
      return fail("the result does not match the root of `", entry.name(), "` (expected ",
                  ShapeText(result, layouts), ", got ", ShapeText(layout->result, layouts), ")");
    }
    return absl::OkStatus();
  }

  struct DfsFrame {
    const Instruction* inst;
    int64_t next;  // operands first, then control predecessors
  };

  const Module& module_;
  const VerifyOptions& options_;
  // Scratch reused across computations.
  absl::flat_hash_map<const Instruction*, uint8_t> dfs_state_;
  std::vector<DfsFrame> dfs_stack_;
  absl::flat_hash_map<const Computation*, int64_t> position_;
  int64_t caller_position_ = 0;  // of the computation being verified
  absl::flat_hash_set<std::string_view> names_;
  EdgeLookup edges_;
};

}  // namespace

absl::Status Verify(const Module& module, const VerifyOptions& options) {
  absl::Status status = Verifier(module, options).Run();
  if (!status.ok() && !IsVerifyError(status)) status.SetPayload(kVerifyErrorUrl, absl::Cord());
  return status;
}

bool IsVerifyError(const absl::Status& status) {
  return status.GetPayload(kVerifyErrorUrl).has_value();
}

const Instruction* FindFailingInstruction(const absl::Status& status, const Module& module) {
  absl::optional<absl::Cord> payload = status.GetPayload(kVerifyErrorUrl);
  if (!payload.has_value()) return nullptr;
  const std::string names(*payload);
  const size_t newline = names.find('\n');
  if (newline == std::string::npos) return nullptr;
  const Computation* c = module.FindComputation(std::string_view(names).substr(0, newline));
  if (c == nullptr) return nullptr;
  const std::string_view name = std::string_view(names).substr(newline + 1);
  for (const auto& inst : c->instructions()) {
    if (inst->name() == name) return inst.get();
  }
  return nullptr;
}

}  // namespace hlogym

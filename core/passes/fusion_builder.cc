#include "core/passes/fusion_builder.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/ir/instruction_table.h"
#include "core/ir/module.h"
#include "core/passes/fusion_emittable.h"

namespace hlogym {
namespace {

// What an inlined member computes inside the new computation.
struct Inlined {
  Instruction* whole = nullptr;        // null for a tuple-rooted fusion until asked
  std::vector<Instruction*> elements;  // tuple-shaped members: one per element
};

// "param_<n>": a table for the common numbers, as a StrCat per parameter of
// every dry-pass candidate showed in profiles.
// `scratch` holds the name past the table.
std::string_view ParamName(int64_t n, std::string& scratch) {
  static const auto* const kNames = [] {
    auto* names = new std::vector<std::string>;
    for (int64_t i = 0; i < 64; ++i) names->push_back(absl::StrCat("param_", i));
    return names;
  }();
  if (n >= 0 && n < static_cast<int64_t>(kNames->size())) return (*kNames)[n];
  scratch = absl::StrCat("param_", n);
  return scratch;
}

// What each instruction of a member's body became in the new computation.
class BodyMap {
 public:
  explicit BodyMap(const Computation& body) : copies_(&body) {}
  void Set(const Instruction* inst, Instruction* copy) { copies_.Set(inst, copy); }
  // The copy of `inst`, or null when it was not copied.
  Instruction* Find(const Instruction* inst) const {
    Instruction* const* copy = copies_.Find(inst);
    return copy != nullptr ? *copy : nullptr;
  }

 private:
  InstructionTable<Instruction*> copies_;
};

// A map from outer instructions, searched in place while small (a
// producer-consumer candidate has two members and a few operands) and
// indexed by a hash map past that: two hash maps per candidate were two
// mallocs and a hash per lookup.
template <typename V>
class SmallInstructionMap {
 public:
  V* Find(const Instruction* key) {
    if (!index_.empty()) {
      auto it = index_.find(key);
      return it == index_.end() ? nullptr : &entries_[it->second].second;
    }
    for (auto& [k, v] : entries_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  // `key` must not be in the map.
  void Insert(const Instruction* key, V value) {
    entries_.emplace_back(key, std::move(value));
    if (!index_.empty()) {
      index_[key] = entries_.size() - 1;
    } else if (entries_.size() > kSearched) {
      for (size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].first] = i;
    }
  }

 private:
  static constexpr size_t kSearched = 16;
  absl::InlinedVector<std::pair<const Instruction*, V>, 4> entries_;
  absl::flat_hash_map<const Instruction*, size_t> index_;
};

// NumberParametersFromRoot's working storage.
struct NumberingScratch {
  std::vector<int64_t> order;  // old parameter numbers, in the new order
  std::vector<char> reached;   // by old number
  std::vector<char> visited;   // by storage position
  std::vector<Instruction*> stack;
  std::vector<Instruction*> operands;
};

class FusedComputationBuilder {
 public:
  FusedComputationBuilder(Module* module, absl::Span<Instruction* const> members,
                          FusedBodyOrders* orders)
      : module_(module),
        orders_(orders),
        computation_(std::make_unique<Computation>(
            module->UniqueComputationName("fused_computation"))) {
    // Sized once: growing storage entry by entry was several mallocs per
    // candidate of a dry pass. At most every member's body, a parameter per
    // member operand and a root tuple.
    size_t most = 1;
    size_t most_operands = 0;  // each parameter stands for a member's operand
    for (const Instruction* member : members) {
      most += member->operand_count() +
              (member->opcode() == Opcode::kFusion ? member->fused_computation()->instruction_count()
                                                   : 1);
      most_operands += member->operand_count();
    }
    computation_->ReserveInstructions(most);
    operands_.reserve(most_operands);
  }

  // Copies `member` in. For a fusion whose root is a tuple, `needed` says
  // which root elements are wanted (null: all); only what they need is
  // copied, so outputs nobody reads are not carried into the new fusion.
  absl::Status Inline(Instruction* member, const std::vector<bool>* needed) {
    if (inlined_.Find(member) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("`", member->name(), "` is listed twice as a fusion member"));
    }
    Inlined result;
    if (member->opcode() != Opcode::kFusion) {
      absl::InlinedVector<Instruction*, 4> operands;
      for (Instruction* operand : member->operands()) {
        ASSIGN_OR_RETURN(Instruction * inner, Resolve(operand));
        operands.push_back(inner);
      }
      result.whole = Clone(*member, operands);
      if (member->shape().IsTuple()) {
        result.elements.assign(member->shape().tuple_size(), nullptr);  // made on demand
      }
      inlined_.Insert(member, std::move(result));
      return absl::OkStatus();
    }
    const Computation* body = member->fused_computation();
    if (body->parameter_count() != member->operand_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fusion `", member->name(), "` has ", member->operand_count(), " operands for ",
          body->parameter_count(), " parameters"));
    }
    const Instruction* root = body->root();
    const bool tuple_root = root->opcode() == Opcode::kTuple;
    // What the wanted outputs depend on.
    bool all_needed = true;
    if (tuple_root && needed != nullptr) {
      for (int64_t k = 0; k < root->operand_count(); ++k) {
        all_needed &= k < static_cast<int64_t>(needed->size()) && (*needed)[k];
      }
    }
    // When every output is wanted and everything but the root has a user
    // (in a graph without cycles: everything reaches the root), all of the
    // body but a tuple root is live; the common case, found without a set.
    bool all_live = all_needed;
    for (const auto& inst : body->instructions()) {
      if (!all_live) break;
      all_live = inst.get() == root || inst->user_count() > 0;
    }
    absl::flat_hash_set<const Instruction*> live;
    if (!all_live) {
      std::vector<const Instruction*> stack;
      if (tuple_root) {
        for (int64_t k = 0; k < root->operand_count(); ++k) {
          if (needed == nullptr || (k < static_cast<int64_t>(needed->size()) && (*needed)[k])) {
            stack.push_back(root->operand(k));
          }
        }
      } else {
        stack.push_back(root);
      }
      while (!stack.empty()) {
        const Instruction* inst = stack.back();
        stack.pop_back();
        if (!live.insert(inst).second) continue;
        for (const Instruction* operand : inst->operands()) stack.push_back(operand);
      }
    }
    auto is_live = [&](const Instruction* inst) {
      return all_live ? !(tuple_root && inst == root) : live.contains(inst);
    };
    BodyMap local(*body);
    // Reused per thread (members are inlined one at a time): a fresh vector
    // per member was a malloc and a free for each of a dry pass's candidates.
    thread_local std::vector<Instruction*> scratch;
    const std::vector<Instruction*>* order = &scratch;
    if (orders_ != nullptr) {
      order = &orders_->Of(*body);
    } else {
      body->MakePostOrder(scratch);
    }
    for (Instruction* inst : *order) {
      if (!is_live(inst)) continue;
      if (inst->opcode() == Opcode::kParameter) {
        const int64_t i = inst->parameter_number();
        if (i < 0 || i >= member->operand_count()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "fusion `", member->name(), "` has no operand for parameter ", i));
        }
        ASSIGN_OR_RETURN(Instruction * param, Resolve(member->operand(i)));
        local.Set(inst, param);
        continue;
      }
      absl::InlinedVector<Instruction*, 4> operands;
      for (Instruction* operand : inst->operands()) {
        Instruction* copy = local.Find(operand);
        if (copy == nullptr) {
          return absl::InternalError(absl::StrCat("`", operand->name(), "` in the body of `",
                                                  member->name(), "` is used before it is made"));
        }
        operands.push_back(copy);
      }
      local.Set(inst, Clone(*inst, operands));
    }
    if (tuple_root) {
      for (Instruction* operand : root->operands()) result.elements.push_back(local.Find(operand));
    } else {
      result.whole = local.Find(root);
      if (result.whole == nullptr) {
        return absl::InternalError(absl::StrCat("the root of `", member->name(), "` was not copied"));
      }
      if (root->shape().IsTuple()) result.elements.assign(root->shape().tuple_size(), nullptr);
    }
    inlined_.Insert(member, std::move(result));
    return absl::OkStatus();
  }

  // The inner value of `value` (a member's result or element).
  absl::StatusOr<Instruction*> Value(const FusedValue& value) {
    Inlined* found = inlined_.Find(value.member);
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "`", value.member->name(), "` is an output but not a fusion member"));
    }
    Inlined& in = *found;
    if (value.index < 0) {
      if (in.whole == nullptr) {  // a tuple-rooted fusion exported whole
        std::vector<Shape> shapes;
        for (Instruction* e : in.elements) {
          if (e == nullptr) return absl::InternalError("a tuple element was not carried");
          shapes.push_back(e->shape());
        }
        in.whole = Add(Instruction::Create(Opcode::kTuple, Shape::Tuple(shapes), in.elements),
                       "tuple");
      }
      return in.whole;
    }
    if (value.index >= static_cast<int64_t>(in.elements.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "`", value.member->name(), "` has no output ", value.index));
    }
    Instruction*& element = in.elements[value.index];
    if (element == nullptr && in.whole == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", value.index, " of `", value.member->name(), "` was not carried"));
    }
    if (element == nullptr) {  // an element of a tuple-shaped op: read it
      auto gte = Instruction::Create(Opcode::kGetTupleElement,
                                     in.whole->shape().tuple_shape(value.index), {in.whole});
      gte->set_index(value.index);
      element = Add(std::move(gte), "get-tuple-element");
    }
    return element;
  }

  // Numbers the parameters in the order a depth-first walk from `root`
  // (operands in order) first reaches them, the operands following, then
  // names them param_<number>. Each parameter object keeps its place and its
  // uses and takes its new number: Resolve made it before its first use, so
  // the storage stays a post-order and nobody walks this body to order it
  // again (re-pointing the uses at the object of the new number instead
  // moved uses before their parameter, and each such candidate's post-order
  // was then a walk over cold instructions: ~4% of an env step).
  absl::Status NumberParametersFromRoot(Instruction* root) {
    const int64_t n = static_cast<int64_t>(operands_.size());
    if (n >= 2) RETURN_IF_ERROR(OrderParametersFromRoot(root));
    std::string scratch;
    for (int64_t k = 0; k < n; ++k) {
      computation_->parameter(k)->set_name(
          module_->UniqueInstructionName(ParamName(k, scratch)));
    }
    return absl::OkStatus();
  }

  // NumberParametersFromRoot's numbering, for two or more parameters.
  absl::Status OrderParametersFromRoot(Instruction* root) {
    const int64_t n = static_cast<int64_t>(operands_.size());
    // Reused per thread (candidates are built one at a time): this runs
    // once per dry-pass candidate, where heap containers were a third of a
    // dry pass's mallocs and inline ones cost more in bookkeeping than the
    // walk itself.
    thread_local NumberingScratch scratch;
    std::vector<int64_t>& order = scratch.order;  // old numbers, in the new order
    order.clear();
    std::vector<char>& reached = scratch.reached;
    reached.assign(n, 0);
    // Visited marks by storage position, the position kept in the unique id
    // for the walk: the computation is not in a module yet, so no id is
    // handed out (all are -1) and each goes back to -1 after. A hash set
    // here was most of this function's cost: clearing one past 127 slots
    // frees its storage, so every large fusion regrew it.
    const auto& stored = computation_->instructions();
    std::vector<char>& visited = scratch.visited;
    visited.assign(stored.size(), 0);
    for (size_t k = 0; k < stored.size(); ++k) stored[k]->set_unique_id(static_cast<int64_t>(k));
    std::vector<Instruction*>& stack = scratch.stack;
    stack.assign(1, root);
    while (!stack.empty() && static_cast<int64_t>(order.size()) < n) {
      Instruction* inst = stack.back();
      stack.pop_back();
      char& seen = visited[static_cast<size_t>(inst->unique_id())];
      if (seen) continue;
      seen = 1;
      if (inst->opcode() == Opcode::kParameter) {
        const int64_t i = inst->parameter_number();
        if (!reached[i]) {
          reached[i] = 1;
          order.push_back(i);
        }
        continue;
      }
      for (auto it = inst->operands().rbegin(); it != inst->operands().rend(); ++it) {
        if (!visited[static_cast<size_t>((*it)->unique_id())]) stack.push_back(*it);
      }
    }
    for (const auto& inst : stored) inst->set_unique_id(-1);
    for (int64_t i = 0; i < n; ++i) {
      if (!reached[i]) order.push_back(i);  // unreached: after, as they were
    }
    bool identity = true;
    for (int64_t k = 0; k < n; ++k) identity &= order[k] == k;
    if (identity) return absl::OkStatus();
    RETURN_IF_ERROR(computation_->RenumberParameters(order));
    std::vector<Instruction*>& operands = scratch.operands;
    operands.assign(operands_.begin(), operands_.end());
    for (int64_t k = 0; k < n; ++k) operands_[k] = operands[order[k]];
    return absl::OkStatus();
  }

  // Ends the computation with `root`; returns it with the fusion's operands.
  std::unique_ptr<Computation> Finish(Instruction* root) {
    computation_->set_root(root);
    return std::move(computation_);
  }
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* AddTuple(const std::vector<Instruction*>& elements) {
    std::vector<Shape> shapes;
    for (Instruction* e : elements) shapes.push_back(e->shape());
    return Add(Instruction::Create(Opcode::kTuple, Shape::Tuple(shapes), elements), "tuple");
  }

 private:
  // The inner value standing for outer instruction `operand`: a member's
  // result, an element of a tuple-shaped member, or a parameter.
  absl::StatusOr<Instruction*> Resolve(Instruction* operand) {
    if (Inlined* member = inlined_.Find(operand); member != nullptr) {
      if (operand->shape().IsTuple()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "not supported: fusing `", operand->name(),
            "` (tuple-shaped) into a user that reads it whole"));
      }
      return member->whole;
    }
    if (operand->opcode() == Opcode::kGetTupleElement &&
        inlined_.Find(operand->operand(0)) != nullptr) {
      return Value({operand->operand(0), operand->tuple_index()});
    }
    if (Instruction** param = params_.Find(operand); param != nullptr) return *param;
    if (!operand->shape().IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not supported: `", operand->name(), "` (", operand->shape().ToString(false),
          ") as a fusion operand: fusion operands are arrays"));
    }
    const int64_t n = static_cast<int64_t>(operands_.size());
    // Named by NumberParametersFromRoot, once numbered.
    Instruction* param =
        computation_->AddInstruction(Instruction::CreateParameter(n, operand->shape(), ""));
    operands_.push_back(operand);
    params_.Insert(operand, param);
    return param;
  }

  Instruction* Clone(const Instruction& inst, absl::Span<Instruction* const> operands) {
    return computation_->AddInstruction(inst.CloneWithNewOperands(
        inst.shape(), operands, module_->UniqueInstructionName(inst.name())));
  }

  Instruction* Add(std::unique_ptr<Instruction> inst, std::string_view name) {
    inst->set_name(module_->UniqueInstructionName(name));
    return computation_->AddInstruction(std::move(inst));
  }

  Module* module_;
  FusedBodyOrders* orders_;  // may be null
  std::unique_ptr<Computation> computation_;
  SmallInstructionMap<Inlined> inlined_;
  SmallInstructionMap<Instruction*> params_;
  std::vector<Instruction*> operands_;
};

}  // namespace

const std::vector<Instruction*>& FusedBodyOrders::Of(const Computation& body) {
  auto [it, inserted] = orders_.try_emplace(&body);
  if (inserted) body.MakePostOrder(it->second);
  return it->second;
}

std::vector<FusedValue> MemberOutputs(Instruction* member, const FusionAnalysis& analysis) {
  if (!member->shape().IsTuple()) return {{member, -1}};
  std::vector<bool> read(member->shape().tuple_size(), false);
  for (const Instruction* user : analysis.Users(*member)) {
    if (user->opcode() == Opcode::kGetTupleElement && user->tuple_index() >= 0 &&
        user->tuple_index() < static_cast<int64_t>(read.size())) {
      read[user->tuple_index()] = true;
    }
  }
  std::vector<FusedValue> values;
  for (int64_t k = 0; k < static_cast<int64_t>(read.size()); ++k) {
    if (read[k]) values.push_back({member, k});
  }
  return values;
}

absl::StatusOr<Instruction*> BuildFusion(Rewriter& rewriter, const FusionSpec& spec,
                                         std::vector<FusedValue>* output_order,
                                         FusedBodyOrders* orders) {
  if (spec.members.empty() || spec.outputs.empty()) {
    return absl::InvalidArgumentError("a fusion needs members and outputs");
  }
  Computation* outer = spec.members.front()->parent();
  for (const Instruction* member : spec.members) {
    if (member->parent() != outer) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fusion members `", spec.members.front()->name(), "` and `", member->name(),
          "` are in different computations"));
    }
  }
  Module* module = rewriter.module();
  FusedComputationBuilder builder(module, spec.members, orders);
  // The elements wanted of each tuple-shaped member: listed as outputs, or
  // read by another member through get-tuple-element.
  absl::flat_hash_map<const Instruction*, std::vector<bool>> needed;
  for (Instruction* member : spec.members) {
    if (member->shape().IsTuple()) {
      needed[member].assign(member->shape().tuple_size(), false);
    }
  }
  auto want = [&](const Instruction* member, int64_t index) {
    auto it = needed.find(member);
    if (it == needed.end()) return;
    if (index < 0) {
      it->second.assign(it->second.size(), true);
    } else if (index < static_cast<int64_t>(it->second.size())) {
      it->second[index] = true;
    }
  };
  // Without tuple-shaped members (most candidates) nothing is asked: a
  // lookup per output and member operand in the empty map was ~0.5% of an
  // env step.
  if (!needed.empty()) {
    for (const FusedValue& value : spec.outputs) want(value.member, value.index);
    for (const Instruction* member : spec.members) {
      for (const Instruction* operand : member->operands()) {
        want(operand, -1);
        if (operand->opcode() == Opcode::kGetTupleElement) {
          want(operand->operand(0), operand->tuple_index());
        }
      }
    }
  }
  for (Instruction* member : spec.members) {
    auto it = needed.empty() ? needed.end() : needed.find(member);
    RETURN_IF_ERROR(builder.Inline(member, it == needed.end() ? nullptr : &it->second));
  }
  Instruction* root = nullptr;
  // The outputs in the fusion's order, kept only for `output_order` (a copy
  // per candidate of a dry pass was a malloc each).
  std::vector<FusedValue> outputs;
  if (output_order != nullptr) outputs = spec.outputs;
  if (spec.outputs.size() == 1) {
    ASSIGN_OR_RETURN(root, builder.Value(spec.outputs.front()));
  } else {
    std::vector<Instruction*> elements;
    for (const FusedValue& value : spec.outputs) {
      ASSIGN_OR_RETURN(Instruction * element, builder.Value(value));
      if (element->shape().IsTuple()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "output `", value.member->name(), "` is a tuple; list its elements instead"));
      }
      elements.push_back(element);
    }
    if (output_order != nullptr) {
      // Merging a with b then c, or b with c then a, lists the outputs in
      // other orders: what each computes orders them instead.
      const std::vector<uint64_t> keys = ValueFingerprints(elements);
      std::vector<size_t> order(elements.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return keys[a] < keys[b]; });
      std::vector<Instruction*> sorted;
      sorted.reserve(order.size());
      outputs.clear();
      for (size_t i : order) {
        sorted.push_back(elements[i]);
        outputs.push_back(spec.outputs[i]);
      }
      elements = std::move(sorted);
    }
    root = builder.AddTuple(elements);
  }
  RETURN_IF_ERROR(builder.NumberParametersFromRoot(root));
  const std::vector<Instruction*>& operands = builder.operands();
  std::unique_ptr<Computation> body = builder.Finish(root);
  // The builder adds every instruction after its operands, so the storage
  // order is the post-order.
  absl::InlinedVector<Instruction*, 32> order;
  order.reserve(body->instructions().size());
  for (const auto& inst : body->instructions()) order.push_back(inst.get());
  absl::StatusOr<FusionKind> kind_or = CheckEmittableFusion(*body, order);
  if (!kind_or.ok()) return absl::FailedPreconditionError(kind_or.status().message());
  const FusionKind kind = *kind_or;

  // The builder named every instruction through the module.
  Computation* fused = rewriter.AddComputation(std::move(body), outer, /*names_reserved=*/true);
  auto fusion = Instruction::Create(Opcode::kFusion, root->shape(), operands);
  fusion->mutable_attrs<FusionAttrs>().kind = kind;
  // Through a reused one-element list: a temporary vector per candidate
  // was a malloc each.
  thread_local std::vector<Computation*> callee(1);
  callee[0] = fused;
  fusion->set_called_computations(callee);
  fusion->set_name(
      module->UniqueInstructionName(kind == FusionKind::kInput ? "input_fusion" : "loop_fusion"));
  // Keep the source location of the last member (the consumer), as XLA does.
  if (const std::string* metadata = spec.members.back()->FindRawAttribute("metadata")) {
    fusion->mutable_raw_attributes().push_back({"metadata", *metadata});
  }
  Instruction* added = rewriter.Add(outer, std::move(fusion));
  fused->set_fusion_instruction(added);
  if (output_order != nullptr) *output_order = std::move(outputs);
  return added;
}

Instruction* AddGetTupleElement(Rewriter& rewriter, Instruction* tuple_valued, int64_t index) {
  auto gte = Instruction::Create(Opcode::kGetTupleElement,
                                 tuple_valued->shape().tuple_shape(index), {tuple_valued});
  gte->set_index(index);
  return rewriter.Add(tuple_valued->parent(), std::move(gte));
}

absl::Status ReplaceOriginal(Rewriter& rewriter, const FusionAnalysis& analysis,
                             Instruction* original, Instruction* replacement,
                             CandidateReads reads) {
  if (!rewriter.dry() || original->IsRoot()) return rewriter.Replace(original, replacement);
  // A dry ReplaceUse records the use and changes no user list, so the list is
  // walked in place (analysis.Users copied it, a malloc per candidate).
  for (Instruction* user : original->users()) {
    if (!analysis.IsOriginal(*user)) continue;
    RETURN_IF_ERROR(rewriter.ReplaceUse(original, user, replacement, reads));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputReplacement>> ReplaceMemberByOutputs(
    Rewriter& rewriter, const FusionAnalysis& analysis, Instruction* member,
    Instruction* fusion, const std::vector<FusedValue>& outputs) {
  auto output_of = [&](int64_t index) -> int64_t {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].member == member && outputs[i].index == index) return i;
    }
    return -1;
  };
  if (!member->shape().IsTuple()) {
    const int64_t i = output_of(-1);
    if (i < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("`", member->name(), "` is not an output of `", fusion->name(), "`"));
    }
    Instruction* value =
        fusion->shape().IsTuple() ? AddGetTupleElement(rewriter, fusion, i) : fusion;
    RETURN_IF_ERROR(ReplaceOriginal(rewriter, analysis, member, value));
    return std::vector<OutputReplacement>{{member, value}};
  }
  if (member->IsRoot()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not supported: replacing `", member->name(), "`, a tuple-shaped root, by outputs"));
  }
  absl::flat_hash_map<int64_t, Instruction*> gtes;
  std::vector<OutputReplacement> done;
  for (Instruction* user : analysis.Users(*member)) {
    if (user->opcode() != Opcode::kGetTupleElement) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not supported: `", user->name(), "` reads tuple-shaped `", member->name(),
          "` whole"));
    }
    const int64_t i = output_of(user->tuple_index());
    if (i < 0) {
      return absl::InvalidArgumentError(absl::StrCat("element ", user->tuple_index(), " of `",
                                                     member->name(), "` is not an output"));
    }
    Instruction*& gte = gtes[i];
    if (gte == nullptr) gte = AddGetTupleElement(rewriter, fusion, i);
    RETURN_IF_ERROR(ReplaceOriginal(rewriter, analysis, user, gte));
    done.push_back({user, gte});
  }
  return done;
}

}  // namespace hlogym

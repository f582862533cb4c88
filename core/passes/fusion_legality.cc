#include "core/passes/fusion_legality.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "core/ir/computation.h"
#include "core/passes/fusion_emittable.h"

namespace hlogym {
namespace {

// One kernel launch is worth this many bytes of memory traffic (about 1 us
// at 3 TB/s): the byte model that decides whether duplicating a fusion into
// all of its users beats running it once (XLA's FusionMerger asks its GPU
// performance model the same question).
constexpr double kLaunchOverheadBytes = 3e6;

// Elements in an array or all leaves of a tuple.
int64_t Elements(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += Elements(s);
    return n;
  }
  return shape.IsArray() ? shape.element_count() : 0;
}

int64_t TrueRank(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t r = 0;
    for (const Shape& s : shape.tuple_shapes()) r = std::max(r, TrueRank(s));
    return r;
  }
  return std::count_if(shape.dims().begin(), shape.dims().end(), [](int64_t d) { return d > 1; });
}

// At most one "large" operand (XLA's IsEffectivelyUnary): duplicating the
// op reads no more distinct inputs than running it once.
bool EffectivelyAtMostUnary(const Instruction& inst) {
  if (inst.operand_count() <= 1) return true;
  const int64_t rank = TrueRank(inst.shape());
  int64_t large = 0;
  for (const Instruction* operand : inst.operands()) {
    if (operand->opcode() == Opcode::kBroadcast || operand->opcode() == Opcode::kIota) continue;
    if (operand->opcode() == Opcode::kConstant && IsEffectiveScalar(operand->shape())) continue;
    large += TrueRank(operand->shape()) >= rank;
  }
  return large <= 1;
}

// Calls f on each user of `inst` that existed when the pass started (what
// FusionAnalysis::Users lists, without building the list).
template <typename F>
void ForEachOriginalUser(const Instruction& inst, const FusionAnalysis& analysis, F f) {
  for (Instruction* user : inst.users()) {
    if (analysis.IsOriginal(*user)) f(user);
  }
}

std::vector<const Instruction*> UniqueOperands(const Instruction& inst) {
  std::vector<const Instruction*> unique;
  for (const Instruction* operand : inst.operands()) {
    if (std::find(unique.begin(), unique.end(), operand) == unique.end()) unique.push_back(operand);
  }
  return unique;
}

int64_t OutputCount(const Instruction& inst) {
  return inst.shape().IsTuple() ? inst.shape().tuple_size() : 1;
}

// Distinct operands of the union of `a` and `b`, leaving out `skip`.
int64_t MergedOperandCount(const Instruction& a, const Instruction& b, const Instruction* skip) {
  absl::InlinedVector<const Instruction*, 16> seen;
  auto add = [&](const Instruction* op) {
    if (std::find(seen.begin(), seen.end(), op) == seen.end()) seen.push_back(op);
  };
  for (const Instruction* op : a.operands()) {
    if (op != skip && op != &b) add(op);
  }
  for (const Instruction* op : b.operands()) {
    if (op != skip && op != &a) add(op);
  }
  return static_cast<int64_t>(seen.size());
}

// XLA's reduction budget for a fusion merging `a` and `b` (xla mode).
bool ReductionsFit(const FusibleInfo& a, const FusibleInfo& b, const FusionOptions& options) {
  if (!options.xla()) return true;
  return a.reduction_outputs + b.reduction_outputs <= kMaxReductionOutputs &&
         a.reduction_shared_bytes + b.reduction_shared_bytes <= kMaxSharedMemoryBytes;
}

int64_t OperandLimit(const FusionOptions& options) {
  return options.xla() ? kMaxFusionOperands : kMaxKernelBuffers;
}

// Whether a tuple-shaped member can hand its outputs over: every user reads
// one element, and it is not the root.
bool OutputsReplaceable(const Instruction& inst, const FusionAnalysis& analysis) {
  if (!inst.shape().IsTuple()) return true;
  if (inst.IsRoot()) return false;
  bool all_gte = true;
  ForEachOriginalUser(inst, analysis, [&](const Instruction* user) {
    all_gte &= user->opcode() == Opcode::kGetTupleElement;
  });
  return all_gte;
}

// Whether two members share one loop: equal iteration spaces, and equal
// reductions when both reduce.
bool IterationCompatible(const FusibleInfo& a, const FusibleInfo& b) {
  if (a.has_reduce && b.has_reduce) {
    return a.hero_input->SameDimensions(*b.hero_input) && a.hero_dims == b.hero_dims;
  }
  return a.iteration_elements == b.iteration_elements;
}

// What the checks read of a FusionGroup. A lone consumer's view is made
// without building a group (no copied analysis, no member set): the checks
// of every producer-consumer pair in a dry fusion pass were ~10% of a gpt2
// env step, most of it building and freeing one-member groups.
struct GroupRef {
  const Instruction* consumer;
  absl::Span<Instruction* const> operands;
  const FusibleInfo& info;
  const FusionGroup* group;  // null for a lone consumer

  bool Contains(const Instruction* inst) const {
    return group != nullptr ? group->Contains(inst) : inst == consumer;
  }
  bool KnownInsideOnly(const Instruction* member) const {
    return group != nullptr && group->KnownInsideOnly(member);
  }
  void NoteInsideOnly(const Instruction* member) const {
    if (group != nullptr) group->NoteInsideOnly(member);
  }
  int64_t outputs() const { return OutputCount(*consumer); }
};

GroupRef RefOf(const FusionGroup& group) {
  return {group.consumer(), group.operands(), group.info(), &group};
}

GroupRef RefOf(const LoneConsumer& consumer) {
  return {consumer.consumer(), consumer.operands(), consumer.info(), nullptr};
}

// Whether some element of `producer` is read twice inside the group: along
// the members that carry its value, one reuses its operand's elements.
bool GroupReusesProducer(const Instruction& producer, const GroupRef& group) {
  std::vector<const Instruction*> stack = {&producer};
  absl::flat_hash_set<const Instruction*> visited;
  while (!stack.empty()) {
    const Instruction* value = stack.back();
    stack.pop_back();
    if (!visited.insert(value).second) continue;
    for (const Instruction* user : value->users()) {
      if (!group.Contains(user)) continue;
      for (int64_t j = 0; j < user->operand_count(); ++j) {
        if (user->operand(j) == value && ReusesOperandElements(*user, j)) return true;
      }
      stack.push_back(user);
    }
  }
  return false;
}

// The checks that do not depend on the producer's other users.
FusionDecision BasicIntoGroup(const Instruction& producer, const GroupRef& group,
                              const FusionOptions& options, FusionAnalysis& analysis) {
  const Instruction& consumer = *group.consumer;
  if (group.Contains(&producer)) return FusionDecision::Forbid("producer is the consumer");
  if (producer.parent() != consumer.parent()) {
    return FusionDecision::Forbid("different computations");
  }
  const FusibleInfo& ci = group.info;
  if (!ci.fusible) return FusionDecision::Forbid("consumer is not fusible");
  const FusibleInfo& pi = analysis.Info(&producer);
  if (!pi.fusible) return FusionDecision::Forbid("producer is not fusible");
  if (pi.multi_output) return FusionDecision::Forbid("producer has several outputs");
  if (producer.opcode() == Opcode::kConstant && options.xla() && !ci.is_fusion) {
    return FusionDecision::Forbid("xla: constants are fused only into fusions");
  }
  if (pi.has_reduce) {
    if (ci.has_reduce) return FusionDecision::Forbid("reduction into a reduction");
    if (ci.multi_output) return FusionDecision::Forbid("reduction into a multi-output consumer");
    if (!ci.is_fusion && !IsEpilogueOp(consumer)) {
      return FusionDecision::Forbid("reduction into a consumer that is no epilogue op");
    }
    if (options.xla() && !ci.simple_epilogue) {
      return FusionDecision::Forbid("xla: reduction only into a convert/bitcast epilogue");
    }
  }
  if (options.xla()) {
    if (pi.transposing && ci.has_reduce) {
      return FusionDecision::Forbid("xla: transposing producer into a reduction");
    }
    if (pi.expensive && GroupReusesProducer(producer, group)) {
      return FusionDecision::Forbid(
          "xla: expensive producer into a consumer that reuses its elements");
    }
    if (pi.is_fusion) {
      bool bitcast_user = false;
      ForEachOriginalUser(producer, analysis, [&](const Instruction* user) {
        bitcast_user |= user->opcode() == Opcode::kBitcast;
      });
      if (bitcast_user) return FusionDecision::Forbid("xla: fusion merger: a user is a bitcast");
    }
  }
  return FusionDecision::Allow();
}

FusionDecision BasicProducerConsumer(const Instruction& producer, Instruction& consumer,
                                     const FusionOptions& options, FusionAnalysis& analysis) {
  return BasicIntoGroup(producer, RefOf(LoneConsumer(&consumer, analysis)), options, analysis);
}

// Whether `producer` could be fused into every one of its users.
bool FusibleIntoAllUsers(const Instruction& producer, const FusionOptions& options,
                         FusionAnalysis& analysis) {
  if (producer.IsRoot()) return false;
  absl::flat_hash_map<const Instruction*, bool>* known = analysis.fusible_into_all_users();
  if (known != nullptr) {
    if (auto it = known->find(&producer); it != known->end()) return it->second;
  }
  bool all = true;
  for (Instruction* user : producer.users()) {
    if (!analysis.IsOriginal(*user)) continue;
    if (!BasicProducerConsumer(producer, *user, options, analysis)) {
      all = false;
      break;
    }
  }
  if (known != nullptr) (*known)[&producer] = all;
  return all;
}

// XLA's rules for copying a producer that keeps other users.
FusionDecision XlaDuplication(const Instruction& producer, int64_t users_after,
                              const FusionOptions& options, FusionAnalysis& analysis) {
  const FusibleInfo& pi = analysis.Info(&producer);
  if (pi.has_reduce) return FusionDecision::Forbid("xla: a reduction is not duplicated");
  if (pi.is_fusion) {
    // FusionMerger: copy a loop fusion into all its users, if that moves
    // fewer bytes than running it once.
    if (!FusibleIntoAllUsers(producer, options, analysis)) {
      return FusionDecision::Forbid("xla: fusion merger: not fusible into every user");
    }
    double in_bytes = 0;
    for (const Instruction* operand : UniqueOperands(producer)) {
      in_bytes += static_cast<double>(operand->shape().byte_size());
    }
    const double out_bytes = static_cast<double>(producer.shape().byte_size());
    const double users = static_cast<double>(users_after);
    const double unfused = in_bytes + out_bytes * (1 + users) + kLaunchOverheadBytes;
    if (users * in_bytes > unfused) {
      return FusionDecision::Forbid("xla: fusion merger: duplication moves more bytes");
    }
    return FusionDecision::Allow();
  }
  if (pi.expensive) return FusionDecision::Forbid("xla: an expensive producer is not duplicated");
  // ComputeGloballyUnfusible: a producer reading more elements than it
  // writes, with several large inputs, is duplicated only when it can go
  // into all of its users.
  if (!EffectivelyAtMostUnary(producer)) {
    int64_t in = 0;
    for (const Instruction* operand : UniqueOperands(producer)) in += Elements(operand->shape());
    if (in > Elements(producer.shape()) && !FusibleIntoAllUsers(producer, options, analysis)) {
      return FusionDecision::Forbid("xla: globally unfusible producer is not duplicated");
    }
  }
  return FusionDecision::Allow();
}

}  // namespace

FusionGroup::FusionGroup(Instruction* consumer, FusionAnalysis& analysis)
    : members_{consumer}, member_set_{consumer}, info_(analysis.Info(consumer)) {
  for (Instruction* operand : consumer->operands()) {
    if (std::find(operands_.begin(), operands_.end(), operand) == operands_.end()) {
      operands_.push_back(operand);
    }
  }
}

int64_t FusionGroup::outputs() const { return OutputCount(*consumer()); }

void FusionGroup::Add(Instruction* producer, FusionAnalysis& analysis) {
  const FusibleInfo& pi = analysis.Info(producer);
  members_.push_back(producer);
  member_set_.insert(producer);
  operands_.erase(std::remove(operands_.begin(), operands_.end(), producer), operands_.end());
  for (Instruction* operand : producer->operands()) {
    if (!member_set_.contains(operand) &&
        std::find(operands_.begin(), operands_.end(), operand) == operands_.end()) {
      operands_.push_back(operand);
    }
  }
  // The merged analysis, as Analyze would find it on the built fusion.
  FusibleInfo& g = info_;
  g.fusible &= pi.fusible;
  g.is_fusion = true;
  if (pi.has_reduce && !g.has_reduce) {
    g.hero_input = pi.hero_input;
    g.hero_dims = pi.hero_dims;
    g.iteration_elements = pi.iteration_elements;
  }
  g.has_reduce |= pi.has_reduce;
  g.expensive |= pi.expensive;
  g.has_in_place |= pi.has_in_place;
  g.transposing |= pi.transposing;
  g.simple_epilogue &= pi.simple_epilogue;
  g.size += pi.size;
  g.reduction_outputs += pi.reduction_outputs;
  g.reduction_shared_bytes += pi.reduction_shared_bytes;
}

namespace {

// Whether `member` of `group` (not its consumer) is still computed outside
// the fusion the group becomes: it is the root, has a user outside the
// group, or feeds a member that stays outside. Such a member is copied into
// the fusion, and its operands keep it as a reader outside. Iterative, over
// the members between `member` and the consumer: a chain of members as long
// as the module must not overflow the stack (a 200,000-deep chain did).
bool StaysOutside(const Instruction* member, const GroupRef& group,
                  const FusionAnalysis& analysis,
                  absl::flat_hash_map<const Instruction*, bool>& known) {
  if (group.KnownInsideOnly(member)) return false;
  if (auto it = known.find(member); it != known.end()) return it->second;
  struct Frame {
    const Instruction* member;
    size_t next_user;
    bool stays;
  };
  std::vector<Frame> stack = {{member, 0, member->IsRoot()}};
  known[member] = false;  // the group is acyclic; this only bounds the walk
  while (!stack.empty()) {
    Frame& top = stack.back();
    const auto& users = top.member->users();
    if (!top.stays && top.next_user < users.size()) {
      const Instruction* user = users[top.next_user++];
      if (!analysis.IsOriginal(*user) || user == group.consumer) continue;
      if (!group.Contains(user)) {
        top.stays = true;
      } else if (auto it = known.find(user); it != known.end()) {
        top.stays = it->second;
      } else if (!group.KnownInsideOnly(user)) {
        known[user] = false;
        stack.push_back({user, 0, user->IsRoot()});  // `top` is invalid from here
      }
      continue;
    }
    const Frame done = top;
    stack.pop_back();
    known[done.member] = done.stays;
    if (!done.stays) group.NoteInsideOnly(done.member);
    if (done.stays && !stack.empty()) stack.back().stays = true;
  }
  return known[member];
}

// The readers `producer` keeps outside the fusion if fused into `group`:
// its users outside the group, and members reading it that stay outside
// (XLA fuses such a member as a copy, after which the producer has both it
// and the fusion as users, so fusing the producer too duplicates it).
int64_t ReadersLeftOutside(const Instruction& producer, const GroupRef& group,
                           const FusionAnalysis& analysis) {
  int64_t outside = 0;
  absl::flat_hash_map<const Instruction*, bool> known;
  ForEachOriginalUser(producer, analysis, [&](const Instruction* user) {
    if (!group.Contains(user)) {
      ++outside;
    } else if (user != group.consumer && StaysOutside(user, group, analysis, known)) {
      ++outside;
    }
  });
  return outside;
}

FusionDecision CanFuseInto(const Instruction& producer, const GroupRef& group,
                           const FusionOptions& options, FusionAnalysis& analysis) {
  if (std::find(group.operands.begin(), group.operands.end(), &producer) ==
      group.operands.end()) {
    return FusionDecision::Forbid("producer is not an operand of the consumer");
  }
  if (options.xla() && producer.IsRoot()) return FusionDecision::Forbid("xla: producer is the root");
  if (FusionDecision d = BasicIntoGroup(producer, group, options, analysis); !d) return d;
  const int64_t outside = ReadersLeftOutside(producer, group, analysis);
  if (outside > 0 || producer.IsRoot()) {
    if (!options.may_duplicate) {
      return FusionDecision::Forbid("producer has other users (may_duplicate=false)");
    }
    if (options.xla()) {
      if (FusionDecision d = XlaDuplication(producer, outside + 1, options, analysis); !d) {
        return d;
      }
    }
  }
  // The merged fusion's distinct operands: the group's (distinct, holding
  // the producer) without the producer, and the producer's from outside.
  int64_t operands = static_cast<int64_t>(group.operands.size()) - 1;
  const auto& producer_operands = producer.operands();
  for (size_t i = 0; i < producer_operands.size(); ++i) {
    const Instruction* operand = producer_operands[i];
    if (group.Contains(operand) ||
        std::find(group.operands.begin(), group.operands.end(), operand) !=
            group.operands.end() ||
        std::find(producer_operands.begin(), producer_operands.begin() + i, operand) !=
            producer_operands.begin() + i) {
      continue;
    }
    ++operands;
  }
  if (operands + group.outputs() > OperandLimit(options)) {
    return FusionDecision::Forbid("too many operands and outputs");
  }
  return FusionDecision::Allow();
}

}  // namespace

FusionDecision CanFuseIntoGroup(const Instruction& producer, const FusionGroup& group,
                                const FusionOptions& options, FusionAnalysis& analysis) {
  return CanFuseInto(producer, RefOf(group), options, analysis);
}

LoneConsumer::LoneConsumer(Instruction* consumer, FusionAnalysis& analysis)
    : consumer_(consumer), info_(analysis.Info(consumer)) {
  for (Instruction* operand : consumer->operands()) {
    if (std::find(operands_.begin(), operands_.end(), operand) == operands_.end()) {
      operands_.push_back(operand);
    }
  }
}

FusionDecision CanFuseProducerConsumer(const Instruction& producer, Instruction& consumer,
                                       const FusionOptions& options, FusionAnalysis& analysis) {
  return CanFuseInto(producer, RefOf(LoneConsumer(&consumer, analysis)), options, analysis);
}

FusionDecision CanFuseProducerConsumer(const Instruction& producer, const LoneConsumer& consumer,
                                       const FusionOptions& options, FusionAnalysis& analysis) {
  return CanFuseInto(producer, RefOf(consumer), options, analysis);
}

FusionDecision CanFuseSiblings(const Instruction& a, const Instruction& b,
                               const FusionOptions& options, FusionAnalysis& analysis) {
  if (&a == &b) return FusionDecision::Forbid("a sibling of itself");
  if (a.parent() != b.parent()) return FusionDecision::Forbid("different computations");
  const FusibleInfo& ai = analysis.Info(&a);
  const FusibleInfo& bi = analysis.Info(&b);
  if (!ai.fusible || !bi.fusible) return FusionDecision::Forbid("a sibling is not fusible");
  if (!OutputsReplaceable(a, analysis) || !OutputsReplaceable(b, analysis)) {
    return FusionDecision::Forbid("a multi-output sibling is read other than by get-tuple-element");
  }
  if (a.opcode() == Opcode::kConstant || b.opcode() == Opcode::kConstant) {
    return FusionDecision::Forbid("a sibling is a constant");
  }
  if (!IterationCompatible(ai, bi)) {
    return FusionDecision::Forbid("siblings iterate over different shapes");
  }
  if (options.xla() && (ai.has_in_place || bi.has_in_place)) {
    return FusionDecision::Forbid("xla: a sibling updates in place");
  }
  if (!ReductionsFit(ai, bi, options)) {
    return FusionDecision::Forbid("xla: too many reductions for one kernel");
  }
  if (MergedOperandCount(a, b, nullptr) + OutputCount(a) + OutputCount(b) >
      OperandLimit(options)) {
    return FusionDecision::Forbid("too many operands and outputs");
  }
  return FusionDecision::Allow();
}

FusionDecision CanFuseProducerConsumerMultiOutput(const Instruction& producer,
                                                  Instruction& consumer,
                                                  const FusionOptions& options,
                                                  FusionAnalysis& analysis) {
  if (std::find(consumer.operands().begin(), consumer.operands().end(), &producer) ==
      consumer.operands().end()) {
    return FusionDecision::Forbid("producer is not an operand of the consumer");
  }
  if (analysis.UserCount(producer) < 2) {
    return FusionDecision::Forbid("producer has no other users");
  }
  if (producer.IsRoot()) return FusionDecision::Forbid("not supported: a root producer");
  if (FusionDecision d = BasicProducerConsumer(producer, consumer, options, analysis); !d) return d;
  const FusibleInfo& pi = analysis.Info(&producer);
  const FusibleInfo& ci = analysis.Info(&consumer);
  if (!OutputsReplaceable(consumer, analysis)) {
    return FusionDecision::Forbid("a multi-output consumer is read other than by get-tuple-element");
  }
  if (options.xla()) {
    if (pi.has_reduce) return FusionDecision::Forbid("xla: producer is a reduction");
    if (pi.has_in_place) return FusionDecision::Forbid("xla: producer updates in place");
    if (pi.transposing) return FusionDecision::Forbid("xla: producer transposes");
  }
  if (!pi.has_reduce && !IterationCompatible(pi, ci)) {
    return FusionDecision::Forbid("producer and consumer iterate over different shapes");
  }
  if (!ReductionsFit(pi, ci, options)) {
    return FusionDecision::Forbid("xla: too many reductions for one kernel");
  }
  if (MergedOperandCount(producer, consumer, &producer) + OutputCount(consumer) + 1 >
      OperandLimit(options)) {
    return FusionDecision::Forbid("too many operands and outputs");
  }
  return FusionDecision::Allow();
}

bool IsProfitableSharedOperand(const Instruction& operand) {
  if (!operand.shape().IsArray() || IsEffectiveScalar(operand.shape())) return false;
  if (operand.opcode() == Opcode::kConstant) return false;
  if (operand.opcode() == Opcode::kBroadcast &&
      IsEffectiveScalar(operand.operand(0)->shape())) {
    return false;
  }
  return true;
}

bool IsHorizontalCandidate(const Instruction& inst, const FusionOptions& options,
                           FusionAnalysis& analysis) {
  const FusibleInfo& info = analysis.Info(&inst);
  if (!info.fusible || info.has_reduce || info.multi_output) return false;
  if (!info.is_fusion) {
    if (inst.operand_count() == 0) return false;
    if (options.xla() && !IsElementwise(inst.opcode())) return false;
  }
  if (options.xla()) {
    // XLA's IsProfitableFusionCandidate: horizontal fusion is for small kernels.
    constexpr int64_t kMaxElements = int64_t{8192} * 8192;
    constexpr int64_t kMaxInstructions = 128;
    if (info.iteration_elements > kMaxElements || info.size > kMaxInstructions) return false;
  }
  return true;
}

}  // namespace hlogym

#include "core/ir/fingerprint.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/ir/unique_id_index.h"

namespace hlogym {
namespace {

// FNV-1a 64 over a canonical byte stream: fixed, so equal across runs and
// machines (abseil's hash is seeded per process and is not).
class Hasher {
 public:
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= kPrime;
    }
  }
  // The same as Bytes(&v, 8). A zero byte only multiplies, so the high zero
  // bytes of a small value (most are: counts, dimensions, opcodes) are one
  // multiply by a power of the prime instead of one each (the byte loop was
  // most of a fingerprint, itself ~9% of an env step).
  void Int(int64_t v) {
    if constexpr (std::endian::native != std::endian::little) {
      Bytes(&v, sizeof(v));
    } else {
      const uint64_t u = static_cast<uint64_t>(v);
      // The commonest cases first, each the same arithmetic as the loop
      // below written out: one byte (opcodes, ranks, flags, small dims),
      // two bytes (most dims), and all eight (the hashes of operands and
      // callees). Int was about a third of a fingerprint, most of it the
      // loop's byte count and trip.
      if (u < 0x100) {
        h_ = (h_ ^ u) * kPrimePowers[8];
        return;
      }
      if (u < 0x10000) {
        h_ = (((h_ ^ (u & 0xff)) * kPrime) ^ (u >> 8)) * kPrimePowers[7];
        return;
      }
      if (u >> 56 != 0) {
        for (int i = 0; i < 8; ++i) {
          h_ ^= (u >> (8 * i)) & 0xff;
          h_ *= kPrime;
        }
        return;
      }
      const int low = 8 - __builtin_clzll(u) / 8;  // bytes up to the last non-zero
      for (int i = 0; i < low; ++i) {
        h_ ^= (u >> (8 * i)) & 0xff;
        h_ *= kPrime;
      }
      h_ *= kPrimePowers[8 - low];
    }
  }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  void Ints(absl::Span<const int64_t> v) {
    Int(static_cast<int64_t>(v.size()));
    for (int64_t x : v) Int(x);
  }
  uint64_t value() const { return h_; }

 private:
  static constexpr uint64_t kPrime = 1099511628211ull;
  // kPrimePowers[k] = kPrime^k (mod 2^64).
  static constexpr std::array<uint64_t, 9> kPrimePowers = [] {
    std::array<uint64_t, 9> powers{};
    powers[0] = 1;
    for (size_t k = 1; k < powers.size(); ++k) powers[k] = powers[k - 1] * kPrime;
    return powers;
  }();
  uint64_t h_ = 1469598103934665603ull;
};

void HashShape(Hasher& h, const Shape& s) {
  h.Int(static_cast<int64_t>(s.element_type()));
  if (s.IsTuple()) {
    h.Int(s.tuple_size());
    for (const Shape& e : s.tuple_shapes()) HashShape(h, e);
    return;
  }
  h.Ints(s.dims());
  for (int64_t i = 0; i < s.rank(); ++i) h.Int(s.is_dynamic_dim(i));
  if (s.has_layout() && s.rank() > 0) {
    h.Ints(s.layout().minor_to_major);
    if (const auto& e = s.layout().extras) {
      for (const auto& t : e->tiles) h.Ints(t);
      h.Int(e->element_size_bits);
      h.Int(e->memory_space);
      h.Str(e->other);
    }
  }
}

void HashWindow(Hasher& h, const Window& w) {
  h.Int(static_cast<int64_t>(w.size()));
  for (const WindowDimension& d : w) {
    for (int64_t v : {d.size, d.stride, d.padding_low, d.padding_high, d.lhs_dilation,
                      d.rhs_dilation, int64_t{d.reversal}}) {
      h.Int(v);
    }
  }
}

// The printer omits an all-default precision list, so {} and {default,
// default} must hash alike for print and re-parse to keep the fingerprint.
void HashPrecision(Hasher& h, const std::vector<Precision>& precision) {
  const bool all_default = std::all_of(precision.begin(), precision.end(),
                                       [](Precision p) { return p == Precision::kDefault; });
  if (all_default) {
    h.Int(0);
    return;
  }
  h.Int(static_cast<int64_t>(precision.size()));
  for (Precision p : precision) h.Int(static_cast<int64_t>(p));
}

void HashLiteral(Hasher& h, const Literal& l) {
  HashShape(h, l.shape());
  h.Int(l.is_elided());
  if (l.is_tuple()) {
    for (const Literal& e : l.tuple_elements()) HashLiteral(h, e);
  } else {
    h.Bytes(l.raw_data(), l.raw_size());
  }
}

// Every typed attribute family, field by field.
void HashAttrs(Hasher& h, const OpAttrs& attrs) {
  h.Int(static_cast<int64_t>(attrs.index()));
  std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, ConstantAttrs>) {
          HashLiteral(h, a.literal);
        } else if constexpr (std::is_same_v<T, SliceAttrs>) {
          // Missing strides mean 1, as the printer writes them.
          h.Ints(a.starts); h.Ints(a.limits);
          for (size_t i = 0; i < a.starts.size(); ++i) h.Int(i < a.strides.size() ? a.strides[i] : 1);
        } else if constexpr (std::is_same_v<T, DynamicSliceAttrs>) {
          h.Ints(a.sizes);
        } else if constexpr (std::is_same_v<T, PadAttrs>) {
          for (const auto& p : a.padding) { h.Int(p.low); h.Int(p.high); h.Int(p.interior); }
        } else if constexpr (std::is_same_v<T, CompareAttrs>) {
          h.Int(static_cast<int64_t>(a.direction)); h.Int(static_cast<int64_t>(a.type));
        } else if constexpr (std::is_same_v<T, DotAttrs>) {
          h.Ints(a.dims.lhs_batch); h.Ints(a.dims.lhs_contracting);
          h.Ints(a.dims.rhs_batch); h.Ints(a.dims.rhs_contracting);
          HashPrecision(h, a.precision);
          h.Str(a.algorithm);
        } else if constexpr (std::is_same_v<T, ConvolutionAttrs>) {
          HashWindow(h, a.window);
          const auto& d = a.dims;
          for (int64_t v : {d.input_batch, d.input_feature, d.kernel_input_feature,
                            d.kernel_output_feature, d.output_batch, d.output_feature}) h.Int(v);
          h.Ints(d.input_spatial); h.Ints(d.kernel_spatial); h.Ints(d.output_spatial);
          h.Int(a.feature_group_count); h.Int(a.batch_group_count);
          HashPrecision(h, a.precision);
        } else if constexpr (std::is_same_v<T, WindowAttrs>) {
          HashWindow(h, a.window);
        } else if constexpr (std::is_same_v<T, GatherAttrs>) {
          h.Ints(a.dims.offset_dims); h.Ints(a.dims.collapsed_slice_dims);
          h.Ints(a.dims.start_index_map); h.Int(a.dims.index_vector_dim);
          h.Ints(a.dims.operand_batching_dims); h.Ints(a.dims.start_indices_batching_dims);
          h.Ints(a.slice_sizes); h.Int(a.indices_are_sorted);
        } else if constexpr (std::is_same_v<T, ScatterAttrs>) {
          h.Ints(a.dims.update_window_dims); h.Ints(a.dims.inserted_window_dims);
          h.Ints(a.dims.scatter_dims_to_operand_dims); h.Int(a.dims.index_vector_dim);
          h.Ints(a.dims.input_batching_dims); h.Ints(a.dims.scatter_indices_batching_dims);
          h.Int(a.indices_are_sorted); h.Int(a.unique_indices);
        } else if constexpr (std::is_same_v<T, SortAttrs>) {
          h.Int(a.is_stable);
        } else if constexpr (std::is_same_v<T, TopKAttrs>) {
          h.Int(a.k); h.Int(a.largest);
        } else if constexpr (std::is_same_v<T, FusionAttrs>) {
          h.Int(static_cast<int64_t>(a.kind));
        } else if constexpr (std::is_same_v<T, CustomCallAttrs>) {
          h.Str(a.target);
        } else if constexpr (std::is_same_v<T, RngAttrs>) {
          h.Int(static_cast<int64_t>(a.distribution));
        } else if constexpr (std::is_same_v<T, RngBitGeneratorAttrs>) {
          h.Int(static_cast<int64_t>(a.algorithm));
        } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
          h.Bytes(&a.epsilon, sizeof(a.epsilon)); h.Int(a.feature_index);
        } else if constexpr (std::is_same_v<T, FftAttrs>) {
          h.Int(static_cast<int64_t>(a.type)); h.Ints(a.length);
        } else if constexpr (std::is_same_v<T, ReducePrecisionAttrs>) {
          h.Int(a.exponent_bits); h.Int(a.mantissa_bits);
        } else if constexpr (std::is_same_v<T, ScanAttrs>) {
          h.Int(a.num_carries); h.Int(a.is_reverse); h.Int(a.is_associative);
        }
      },
      attrs);
}

// Fingerprinter's memo of instruction hashes. For a whole module whose
// instructions have distinct ids spanning at most kMaxSpread, a per-thread
// table indexed by unique id, its slots tagged with a generation so that a
// fingerprint neither clears nor allocates it (one table per thread: one
// fingerprint at a time per thread); otherwise, and for an instruction of
// another module, a hash map by address. Both give the same hashes. The
// map's lookups, three per edge, cost ~5% of a gpt2 env step's fingerprint
// more than the table does.
class InstructionHashes {
 public:
  // Dense when `module` allows it; with no module, hashed.
  explicit InstructionHashes(const Module* module) : table_(Table()) {
    if (module == nullptr) return;
    size_t n = 0;
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const auto& computation : module->computations()) {
      for (const auto& inst : computation->instructions()) {
        lo = std::min(lo, inst->unique_id());
        hi = std::max(hi, inst->unique_id());
      }
      n += computation->instructions().size();
    }
    if (n == 0 || lo < 0 || hi - lo >= kMaxSpread) {
      map_.reserve(n);
      return;
    }
    NextGenerations();
    if (table_.tags.size() < static_cast<size_t>(hi - lo + 1)) {
      table_.tags.resize(static_cast<size_t>(hi - lo + 1), 0);  // generation 0: never valid
      table_.hashes.resize(table_.tags.size());
    }
    // Two instructions sharing an id would share a slot: hashed then.
    const uint32_t seen = table_.generation - 1;
    for (const auto& computation : module->computations()) {
      for (const auto& inst : computation->instructions()) {
        uint32_t& tag = table_.tags[static_cast<size_t>(inst->unique_id() - lo)];
        if (tag == seen) {
          map_.reserve(n);
          return;
        }
        tag = seen;
      }
    }
    module_ = module;
    base_ = lo;
    size_ = hi - lo + 1;
  }

  // The hash of `inst`, or null when it has none yet.
  const uint64_t* Find(const Instruction* inst) const {
    if (const int64_t slot = Slot(inst); slot >= 0) {
      return table_.tags[slot] == table_.generation ? &table_.hashes[slot] : nullptr;
    }
    auto it = map_.find(inst);
    return it == map_.end() ? nullptr : &it->second;
  }
  // The hash of `inst`, which must have one.
  uint64_t At(const Instruction* inst) const {
    if (const uint64_t* hash = Find(inst)) return *hash;
    return map_.at(inst);  // throws, as a missing one is a bug
  }
  void Set(const Instruction* inst, uint64_t hash) {
    if (const int64_t slot = Slot(inst); slot >= 0) {
      table_.tags[slot] = table_.generation;
      table_.hashes[slot] = hash;
    } else {
      map_[inst] = hash;
    }
  }

 private:
  static constexpr int64_t kMaxSpread = int64_t{1} << 20;  // 12 MiB of table at most
  struct Tables {
    std::vector<uint32_t> tags;
    std::vector<uint64_t> hashes;
    uint32_t generation = 0;
  };
  static Tables& Table() {
    thread_local Tables table;
    return table;
  }
  // Two generations a fingerprint: the id check's mark, then "hashed".
  void NextGenerations() {
    if (table_.generation >= (uint32_t{1} << 31)) {
      std::fill(table_.tags.begin(), table_.tags.end(), 0);
      table_.generation = 0;
    }
    table_.generation += 2;
  }
  // The slot of `inst` in the table, or -1 when it is hashed: an
  // instruction of another module may share an id with one of this one.
  int64_t Slot(const Instruction* inst) const {
    if (module_ == nullptr || inst->parent() == nullptr || inst->parent()->parent() != module_) {
      return -1;
    }
    const int64_t slot = inst->unique_id() - base_;
    return slot >= 0 && slot < size_ ? slot : -1;
  }

  Tables& table_;
  const Module* module_ = nullptr;  // non-null: dense
  int64_t base_ = 0;
  int64_t size_ = 0;
  absl::flat_hash_map<const Instruction*, uint64_t> map_;
};

class Fingerprinter {
 public:
  // `module`: the module whose instructions it hashes, when all are
  // (Fingerprint(Module)), for InstructionHashes' table.
  explicit Fingerprinter(const Module* module = nullptr) : instructions_(module) {}
  // Parameters of `computation` then hash without their number.
  void set_unnumbered_parameters(const Computation* computation) { unnumbered_ = computation; }

  uint64_t Of(const Computation& c) {
    auto it = computations_.find(&c);
    if (it != computations_.end()) return it->second;
    Hasher h;
    h.Int(c.parameter_count());
    for (const Instruction* p : c.parameters()) {
      if (p != nullptr) HashShape(h, p->shape());
    }
    if (c.root() != nullptr) {
      h.Int(static_cast<int64_t>(Of(*c.root())));
      h.Int(static_cast<int64_t>(SharingOf(*c.root(), c.instruction_count())));
    }
    return computations_[&c] = h.value();
  }

  // Iterative post-order memoization: deep graphs must not overflow the stack.
  // A frame per instruction walks its dependencies in place, so each one is
  // looked up once per edge (pushing an instruction twice, expanded and not,
  // looked each up three times more).
  uint64_t Of(const Instruction& root) {
    if (const uint64_t* hash = instructions_.Find(&root)) return *hash;
    // One stack for every walk, nested ones (a callee's, from Hash) above
    // the frames of the walk that called them: a vector per computation was
    // a malloc and a free for each of a module's fused computations.
    std::vector<DepFrame>& stack = dep_frames_;
    const size_t base = stack.size();
    stack.push_back({&root, 0});
    while (stack.size() > base) {
      DepFrame& top = stack.back();
      const Instruction* inst = top.inst;
      const size_t num_operands = inst->operands().size();
      if (top.next < num_operands + inst->control_predecessors().size()) {
        const Instruction* dep = top.next < num_operands
                                     ? inst->operand(static_cast<int64_t>(top.next))
                                     : inst->control_predecessors()[top.next - num_operands];
        ++top.next;
        if (instructions_.Find(dep) == nullptr) stack.push_back({dep, 0});
        continue;
      }
      stack.pop_back();
      // Hash first: hashing a callee adds to the map.
      const uint64_t hash = Hash(*inst);
      instructions_.Set(inst, hash);
    }
    return instructions_.At(&root);
  }

 private:
  // The operands an instruction's canonical walk visits, in order:
  // alternatives' by hash, as they are an unordered set.
  // Inline: one is made per instruction walked.
  using Walk = absl::InlinedVector<const Instruction*, 4>;
  Walk WalkOrder(const Instruction& inst) const {
    Walk operands(inst.operands().begin(), inst.operands().end());
    if (inst.opcode() == Opcode::kAlternatives) {
      std::stable_sort(operands.begin(), operands.end(), [&](const auto* a, const auto* b) {
        return instructions_.At(a) < instructions_.At(b);
      });
    }
    return operands;
  }

  // The hashes above are Merkle hashes: a value computed twice and a value
  // computed once and used twice hash alike. Numbering the instructions the
  // root reaches in a canonical order (a depth-first walk over operands) and
  // hashing each one's operand numbers tells the two apart. Iterative, as
  // Of(): deep graphs must not overflow the stack.
  // `size`: how many instructions the walk may number (the computation's).
  uint64_t SharingOf(const Instruction& root, int64_t size) {
    Numbers number(root.parent(), size);
    int64_t finished = 0;
    Hasher h;
    std::vector<Frame>& stack = frames_;  // reused: one walk per computation
    stack.clear();
    stack.push_back({&root, WalkOrder(root)});
    number.Enter(&root);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.operands.size()) {
        const Instruction* operand = top.operands[top.next++];
        if (number.Enter(operand)) stack.push_back({operand, WalkOrder(*operand)});
        continue;
      }
      h.Int(static_cast<int64_t>(top.operands.size()));
      for (const Instruction* o : top.operands) h.Int(number.Of(o));
      number.Finish(top.inst, finished++);
      stack.pop_back();
    }
    return h.value();
  }

  // SharingOf's numbers: -1 while an instruction is on the stack, then its
  // place in the walk. Indexed by unique id when the computation's ids are
  // distinct and dense (as a module hands them out), in a buffer reused
  // across computations; else hashed by address (both number alike). A hash
  // map per computation was most of SharingOf's cost.
  class Numbers {
   public:
    Numbers(const Computation* computation, int64_t size)
        : computation_(computation), dense_(Scratch()) {
      dense_.clear();
      if (computation != nullptr) {
        const int64_t n = static_cast<int64_t>(computation->instructions().size());
        if (IndexByUniqueId(computation->instructions(), 4 * n + 64, kUnseen, kMarked, dense_,
                            base_)) {
          return;
        }
      }
      // Sized once: growing it was most of this walk's mallocs.
      map_.reserve(static_cast<size_t>(std::max<int64_t>(size, 1)));
    }
    // Marks `inst` as on the stack; false if it was met before.
    bool Enter(const Instruction* inst) {
      if (int64_t* slot = Slot(inst)) {
        if (*slot != kUnseen) return false;
        *slot = -1;
        return true;
      }
      return map_.try_emplace(inst, -1).second;
    }
    void Finish(const Instruction* inst, int64_t number) {
      if (int64_t* slot = Slot(inst)) {
        *slot = number;
      } else {
        map_[inst] = number;
      }
    }
    int64_t Of(const Instruction* inst) {
      if (int64_t* slot = Slot(inst)) return *slot;
      return map_.at(inst);
    }

   private:
    static constexpr int64_t kUnseen = -2;
    static constexpr int64_t kMarked = -3;
    // The dense slot of `inst`, or null when it has none (hashed instead).
    int64_t* Slot(const Instruction* inst) {
      if (dense_.empty() || inst->parent() != computation_) return nullptr;
      const int64_t slot = inst->unique_id() - base_;
      if (slot < 0 || slot >= static_cast<int64_t>(dense_.size())) return nullptr;
      return &dense_[static_cast<size_t>(slot)];
    }
    static std::vector<int64_t>& Scratch() {
      thread_local std::vector<int64_t> buffer;
      return buffer;
    }
    const Computation* computation_;
    std::vector<int64_t>& dense_;
    int64_t base_ = 0;
    absl::flat_hash_map<const Instruction*, int64_t> map_;
  };

  struct Frame {
    const Instruction* inst;
    Walk operands;
    size_t next = 0;
  };
  std::vector<Frame> frames_;
  struct DepFrame {
    const Instruction* inst;
    size_t next;
  };
  std::vector<DepFrame> dep_frames_;

  uint64_t Hash(const Instruction& inst) {
    Hasher h;
    h.Int(static_cast<int64_t>(inst.opcode()));
    HashShape(h, inst.shape());
    h.Ints(inst.dimensions());
    const bool numbered_parameter = inst.opcode() == Opcode::kParameter &&
                                    (unnumbered_ == nullptr || inst.parent() != unnumbered_);
    if (numbered_parameter || inst.opcode() == Opcode::kGetTupleElement ||
        inst.opcode() == Opcode::kIota) {
      h.Int(inst.parameter_number());
    }
    HashAttrs(h, inst.op_attrs());
    for (const RawAttribute& raw : inst.raw_attributes()) {
      if (raw.name == "metadata" || raw.name == "origin" || raw.name == "statistics") continue;
      h.Str(raw.name);
      h.Str(raw.value);
    }
    for (const Computation* callee : inst.called_computations()) {
      h.Int(callee == nullptr ? 0 : static_cast<int64_t>(Of(*callee)));
    }
    absl::InlinedVector<uint64_t, 4> operands;
    for (const Instruction* o : inst.operands()) operands.push_back(instructions_.At(o));
    // Alternatives are an unordered set of choices, as in HloEnv's hash.
    if (inst.opcode() == Opcode::kAlternatives) std::sort(operands.begin(), operands.end());
    h.Int(static_cast<int64_t>(operands.size()));
    for (uint64_t o : operands) h.Int(static_cast<int64_t>(o));
    absl::InlinedVector<uint64_t, 4> preds;
    for (const Instruction* p : inst.control_predecessors()) preds.push_back(instructions_.At(p));
    std::sort(preds.begin(), preds.end());
    for (uint64_t p : preds) h.Int(static_cast<int64_t>(p));
    return h.value();
  }

  absl::flat_hash_map<const Computation*, uint64_t> computations_;
  InstructionHashes instructions_;
  const Computation* unnumbered_ = nullptr;
};

}  // namespace

uint64_t Fingerprint(const Module& module) {
  Hasher h;
  if (module.entry() != nullptr) {
    Fingerprinter f(&module);
    h.Int(static_cast<int64_t>(f.Of(*module.entry())));
  }
  if (const auto& layout = module.entry_computation_layout()) {
    for (const Shape& s : layout->parameters) HashShape(h, s);
    HashShape(h, layout->result);
  }
  return h.value();
}

uint64_t Fingerprint(const Computation& computation) {
  Fingerprinter f;
  return f.Of(computation);
}

std::vector<uint64_t> ValueFingerprints(absl::Span<Instruction* const> values) {
  std::vector<uint64_t> hashes;
  hashes.reserve(values.size());
  if (values.empty()) return hashes;
  Fingerprinter f;
  f.set_unnumbered_parameters(values.front()->parent());
  for (const Instruction* value : values) hashes.push_back(f.Of(*value));
  return hashes;
}

}  // namespace hlogym

#include "core/ir/fingerprint.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/ir/instruction_table.h"

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

class Fingerprinter {
 public:
  Fingerprinter() = default;
  // For hashing every instruction of `module` (Fingerprint(Module)): the
  // memo is then indexed by unique id.
  explicit Fingerprinter(const Module& module) : instructions_(module) {}
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
      h.Int(static_cast<int64_t>(SharingOf(*c.root())));
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
    return HashOf(&root);
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
        return HashOf(a) < HashOf(b);
      });
    }
    return operands;
  }

  // The hashes above are Merkle hashes: a value computed twice and a value
  // computed once and used twice hash alike. Numbering the instructions the
  // root reaches in a canonical order (a depth-first walk over operands) and
  // hashing each one's operand numbers tells the two apart. Iterative, as
  // Of(): deep graphs must not overflow the stack.
  uint64_t SharingOf(const Instruction& root) {
    Numbers number(root.parent());
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
  // place in the walk.
  class Numbers {
   public:
    explicit Numbers(const Computation* computation) : numbers_(computation) {}
    // Marks `inst` as on the stack; false if it was met before.
    bool Enter(const Instruction* inst) {
      if (numbers_.Find(inst) != nullptr) return false;
      numbers_.Set(inst, -1);
      return true;
    }
    void Finish(const Instruction* inst, int64_t number) { numbers_.Set(inst, number); }
    int64_t Of(const Instruction* inst) const { return *numbers_.Find(inst); }

   private:
    InstructionTable<int64_t> numbers_;
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
    for (const Instruction* o : inst.operands()) operands.push_back(HashOf(o));
    // Alternatives are an unordered set of choices, as in HloEnv's hash.
    if (inst.opcode() == Opcode::kAlternatives) std::sort(operands.begin(), operands.end());
    h.Int(static_cast<int64_t>(operands.size()));
    for (uint64_t o : operands) h.Int(static_cast<int64_t>(o));
    absl::InlinedVector<uint64_t, 4> preds;
    for (const Instruction* p : inst.control_predecessors()) preds.push_back(HashOf(p));
    std::sort(preds.begin(), preds.end());
    for (uint64_t p : preds) h.Int(static_cast<int64_t>(p));
    return h.value();
  }

  absl::flat_hash_map<const Computation*, uint64_t> computations_;
  // The memo of instruction hashes. Its lookups, three per edge, by address
  // cost ~5% of a gpt2 env step's fingerprint more than by id.
  InstructionTable<uint64_t> instructions_;
  // The hash of `inst`, which must have one.
  uint64_t HashOf(const Instruction* inst) const {
    const uint64_t* hash = instructions_.Find(inst);
    // A walk hashes operands before their users; a miss is a bug.
    if (hash == nullptr) throw std::logic_error("fingerprint: a value used before it was hashed");
    return *hash;
  }
  const Computation* unnumbered_ = nullptr;
};

}  // namespace

uint64_t Fingerprint(const Module& module) {
  Hasher h;
  if (module.entry() != nullptr) {
    Fingerprinter f(module);
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

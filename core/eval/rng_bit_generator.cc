// rng-bit-generator, bit-exact with XLA's CPU and GPU backends: the same
// Threefry-2x32 and Philox-4x32-10 bit streams, counter layouts, output
// element order and state update that XLA's RngBitGeneratorExpander produces
// (rng_default is Philox there, as both backends configure the expander).
//
// The state is u64[N]. Word 0 is the key for both algorithms.
// - Threefry (N = 2): word 1 is a 64-bit counter.
// - Philox: the counter is 128 bits; with N = 3 it is (low = word 1, high =
//   word 2); with N = 2 XLA reads the reversed state, so the low half is word
//   1 and the high half is the key itself, and only the low half is written
//   back (a carry out of it is lost, as in XLA).
// The first output is the new state: the key, then the counter advanced by
// the number of blocks consumed.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/eval/index_util.h"
#include "core/eval/kernels.h"

namespace hlogym {
namespace {

uint32_t Lo(uint64_t x) { return static_cast<uint32_t>(x); }
uint32_t Hi(uint64_t x) { return static_cast<uint32_t>(x >> 32); }
uint64_t Join(uint32_t lo, uint32_t hi) { return lo | (static_cast<uint64_t>(hi) << 32); }
uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// Threefry-2x32 with 20 rounds (Salmon et al., SC 2011), keyed by the two
// 32-bit halves of a 64-bit key, on the two halves of a 64-bit counter.
std::array<uint32_t, 2> ThreeFry2x32(uint64_t counter, uint64_t key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {Lo(key), Hi(key), 0x1BD11BDAu ^ Lo(key) ^ Hi(key)};
  uint32_t x0 = Lo(counter) + ks[0];
  uint32_t x1 = Hi(counter) + ks[1];
  // Five groups of four rounds; after group g the key schedule injects
  // ks[(g+1)%3], ks[(g+2)%3] + (g+1).
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = RotateLeft(x1, kRotations[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

// Philox-4x32 with 10 rounds on a 128-bit counter (four words, least
// significant first) and a 64-bit key.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, uint64_t key) {
  constexpr uint32_t kW32A = 0x9E3779B9u, kW32B = 0xBB67AE85u;
  constexpr uint64_t kM4x32A = 0xD2511F53u, kM4x32B = 0xCD9E8D57u;
  uint32_t k0 = Lo(key), k1 = Hi(key);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = x[0] * kM4x32A;
    const uint64_t p1 = x[2] * kM4x32B;
    x = {Hi(p1) ^ x[1] ^ k0, Lo(p1), Hi(p0) ^ x[3] ^ k1, Lo(p0)};
    k0 += kW32A;
    k1 += kW32B;
  }
  return x;
}

// A 128-bit counter plus a 64-bit step, as XLA adds them (carry into the
// high half).
struct U128 {
  uint64_t lo = 0, hi = 0;
  U128 Plus(uint64_t n) const {
    const uint64_t sum = lo + n;
    return {sum, sum < lo ? hi + 1 : hi};
  }
};

// Stores `bits` (the low BitWidth bits of them) as element i of `out`,
// reinterpreted as its element type: integers wrap, floats take the bits.
void StoreBits(Literal& out, int64_t i, uint64_t bits) {
  const PrimitiveType type = out.shape().element_type();
  if (IsInteger(type)) {
    out.SetFromInt64(i, static_cast<int64_t>(bits));
    return;
  }
  const int width = ByteWidth(type);
  const int bit_width = BitWidth(type);
  if (bit_width < 64) bits &= (uint64_t{1} << bit_width) - 1;
  // Little-endian: the low `width` bytes of the u64 are the element's bits.
  std::memcpy(out.raw_data() + i * width, &bits, width);
}

// Threefry output of 32 or fewer bits: XLA halves the shape along its first
// even dimension (else its largest, first of equals), runs one counter per
// element of the half shape (row-major, from the state's counter), and
// interleaves the two output words along the halved dimension, dropping the
// one past an odd end. Narrow types keep the low bits of each word.
uint64_t ThreeFryNarrow(Literal& out, uint64_t key, uint64_t counter) {
  const Shape& shape = out.shape();
  std::vector<int64_t> half(shape.dims().begin(), shape.dims().end());
  int64_t split = -1;
  for (size_t d = 0; d < half.size() && split < 0; ++d) {
    if (half[d] % 2 == 0) split = static_cast<int64_t>(d);
  }
  if (split < 0) {
    for (size_t d = 0; d < half.size(); ++d) {
      if (split < 0 || half[d] > half[split]) split = static_cast<int64_t>(d);
    }
  }
  if (split < 0) {  // a scalar: one counter, its first word
    StoreBits(out, 0, ThreeFry2x32(counter, key)[0]);
    return counter + 1;
  }
  half[split] = (half[split] + 1) / 2;
  const std::vector<int64_t> out_strides = Strides(shape.dims());
  const int64_t blocks = Product(half);
  ParallelFor(blocks, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> index(half.size());
    for (int64_t b = lo; b < hi; ++b) {
      Unflatten(b, half, index.data());
      const std::array<uint32_t, 2> words = ThreeFry2x32(counter + static_cast<uint64_t>(b), key);
      int64_t base = 0;  // the output offset without the split dimension
      for (size_t d = 0; d < index.size(); ++d) {
        if (static_cast<int64_t>(d) != split) base += index[d] * out_strides[d];
      }
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t position = 2 * index[split] + j;
        if (position >= shape.dim(split)) break;
        StoreBits(out, base + position * out_strides[split], words[j]);
      }
    }
  }, 64);
  return counter + static_cast<uint64_t>(blocks);
}

// Threefry output of 64 bits: one counter per element, row-major; the two
// words form the value (first word low).
uint64_t ThreeFryWide(Literal& out, uint64_t key, uint64_t counter) {
  const int64_t n = out.element_count();
  ParallelFor(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const std::array<uint32_t, 2> w = ThreeFry2x32(counter + static_cast<uint64_t>(i), key);
      StoreBits(out, i, Join(w[0], w[1]));
    }
  }, 64);
  return counter + static_cast<uint64_t>(n);
}

// Philox: block b (counter + b) yields four words. Outputs of 32 or fewer
// bits take them in order (element 4b+j = word j, narrow types the low
// bits); 64-bit outputs pair them (element 2b = words 0|1, 2b+1 = 2|3).
// Returns the number of blocks used.
uint64_t Philox(Literal& out, uint64_t key, U128 counter, bool wide) {
  const int64_t n = out.element_count();
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  ParallelFor(blocks, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      const U128 c = counter.Plus(static_cast<uint64_t>(b));
      const std::array<uint32_t, 4> w = Philox4x32({Lo(c.lo), Hi(c.lo), Lo(c.hi), Hi(c.hi)}, key);
      for (int64_t j = 0; j < per_block && b * per_block + j < n; ++j) {
        const uint64_t bits = wide ? Join(w[2 * j], w[2 * j + 1]) : w[j];
        StoreBits(out, b * per_block + j, bits);
      }
    }
  }, 64);
  return static_cast<uint64_t>(blocks);
}

absl::Status NotSupported(const Instruction& inst, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat("not supported: rng-bit-generator ", what,
                                               " in instruction `", inst.name(), "`"));
}

}  // namespace

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, Operands operands) {
  const Literal& state = *operands[0];
  const Shape& state_shape = state.shape();
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 2 || !shape.tuple_shape(1).IsArray()) {
    return NotSupported(inst, absl::StrCat("with result shape ", shape.ToString(false)));
  }
  const Shape& bits_shape = shape.tuple_shape(1);
  const PrimitiveType type = bits_shape.element_type();
  // XLA's generators make 64-, 32- and narrower unsigned bits; pred, 1-bit
  // and complex outputs have no defined bit stream.
  const int bits = BitWidth(type);
  if (!(IsInteger(type) || IsFloat(type)) || bits < 2 || bits > 64) {
    return NotSupported(inst, absl::StrCat("with ", std::string(PrimitiveTypeName(type)),
                                           " output (XLA generates 2- to 64-bit integer or "
                                           "float bits)"));
  }
  const RngAlgorithm requested = inst.attrs<RngBitGeneratorAttrs>().algorithm;
  // XLA's CPU and GPU compilers both expand rng_default as Philox.
  const RngAlgorithm algorithm =
      requested == RngAlgorithm::kDefault ? RngAlgorithm::kPhilox : requested;
  const int64_t words = state_shape.rank() == 1 ? state_shape.dim(0) : -1;
  const bool u64_state = state_shape.element_type() == PrimitiveType::kU64;
  if (algorithm == RngAlgorithm::kThreeFry && (!u64_state || words != 2)) {
    return NotSupported(inst, absl::StrCat("rng_three_fry with state ",
                                           state_shape.ToString(false), " (XLA takes u64[2])"));
  }
  if (algorithm == RngAlgorithm::kPhilox && (!u64_state || (words != 2 && words != 3))) {
    return NotSupported(inst, absl::StrCat(std::string(RngAlgorithmName(requested)),
                                           " with state ", state_shape.ToString(false),
                                           " (XLA's Philox takes u64[2] or u64[3])"));
  }
  absl::Span<const uint64_t> in = state.data<uint64_t>();
  const uint64_t key = in[0];
  Literal new_state(shape.tuple_shape(0));
  absl::Span<uint64_t> next = new_state.data<uint64_t>();
  next[0] = key;
  Literal out(bits_shape);
  if (algorithm == RngAlgorithm::kThreeFry) {
    next[1] = bits == 64 ? ThreeFryWide(out, key, in[1]) : ThreeFryNarrow(out, key, in[1]);
  } else {
    const U128 counter = words == 3 ? U128{in[1], in[2]} : U128{in[1], in[0]};
    const U128 advanced = counter.Plus(Philox(out, key, counter, bits == 64));
    next[1] = advanced.lo;
    if (words == 3) next[2] = advanced.hi;
  }
  std::vector<Literal> results;
  results.push_back(std::move(new_state));
  results.push_back(std::move(out));
  return Literal::Tuple(std::move(results));
}

}  // namespace hlogym

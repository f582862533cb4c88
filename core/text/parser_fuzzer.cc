// libFuzzer target for the HLO text parser: any byte string must give a
// module or an error status, never a crash, hang, leak or out-of-bounds read.
//
// The normal build skips *_fuzzer.cc. Build it with clang 16 and run it:
//   FLAGS="-std=c++20 -O1 -g -fsanitize=address,undefined -I."
//   clang++-16 $FLAGS -fsanitize=fuzzer core/text/parser_fuzzer.cc \
//     $(ls core/ir/*.cc core/text/*.cc | grep -v _fuzzer) \
//     -labsl_status -labsl_statusor -labsl_strings -labsl_strings_internal \
//     -labsl_str_format_internal -labsl_hash -labsl_city -labsl_low_level_hash \
//     -labsl_raw_hash_set -labsl_int128 -labsl_throw_delegate \
//     -labsl_raw_logging_internal -labsl_base -labsl_spinlock_wait -labsl_cord \
//     -labsl_cord_internal -labsl_cordz_info -labsl_cordz_functions \
//     -labsl_cordz_handle -labsl_bad_optional_access -labsl_bad_variant_access \
//     -labsl_strerror -labsl_stacktrace -labsl_symbolize \
//     -labsl_debugging_internal -labsl_demangle_internal -labsl_malloc_internal \
//     -labsl_synchronization -labsl_time -labsl_time_zone \
//     -labsl_exponential_biased -labsl_hashtablez_sampler \
//     -labsl_graphcycles_internal -ltbb -o parser_fuzzer
//   ./parser_fuzzer -max_total_time=600 -max_len=65536 -timeout=10 CORPUS_DIR \
//     data/corpus/hlo data/corpus/small/hlo data/dataset/hlo tests/data/hlo
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/text/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hlogym::ParseModule(text);
  if (module.ok()) {
    // Walk the result so that a malformed IR shows up under the sanitizers.
    int64_t edges = 0;
    for (const auto& computation : (*module)->computations()) {
      for (const auto& inst : computation->instructions()) {
        edges += inst->operand_count() + inst->user_count();
        edges += static_cast<int64_t>(inst->called_computations().size());
        edges += inst->shape().IsTuple() ? inst->shape().tuple_size() : inst->shape().rank();
      }
    }
    volatile int64_t sink = edges;
    (void)sink;
  }
  auto shape = hlogym::ParseShape(text);
  (void)shape;
  return 0;
}

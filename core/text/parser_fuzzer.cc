// libFuzzer target for the HLO text parser: any byte string must give a
// module or an error status, never a crash, hang, leak or out-of-bounds read;
// a module that verifies must print and parse back to the same fingerprint.
//
// The normal build skips *_fuzzer.cc. Build and run it with clang 16:
// (an indented line continues the command above it; a trailing backslash
// would make -Wcomment warn in a // comment)
//   CXX=clang++-16 CC=clang-16 cmake -S . -B build-fuzz -G Ninja
//     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHLOGYM_FUZZ=ON
//     -DHLOGYM_SANITIZE=address,undefined -DHLOGYM_BUILD_PYTHON=OFF
//   cmake --build build-fuzz --target hlogym_parser_fuzzer
//   mkdir -p /tmp/fuzz
//   build-fuzz/core/hlogym_parser_fuzzer -max_total_time=600
//     -max_len=65536 -timeout=10 /tmp/fuzz data/corpus/hlo data/corpus/small/hlo
//     data/dataset/hlo
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/fingerprint.h"
#include "core/ir/verifier.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

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
    // Whatever parses must verify or fail cleanly, and what verifies must
    // print text that parses back to the same structure.
    if (hlogym::Verify(**module).ok()) {
      const std::string printed = hlogym::PrintModule(**module);
      auto again = hlogym::ParseModule(printed);
      if (!again.ok() || hlogym::Fingerprint(**again) != hlogym::Fingerprint(**module)) {
        __builtin_trap();
      }
    }
  }
  auto shape = hlogym::ParseShape(text);
  (void)shape;
  return 0;
}

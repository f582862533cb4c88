// HLO text parser throughput and memory.
//
//   BM_ParseModule/<dir>/<file>  one module per benchmark, MB/s of its text
//   BM_ParseWorkload/<set>       every module of a set parsed in turn, MB/s
//                                (freeing the modules is not timed)
//   BM_ParseVerifyWorkload/<set> the same, each module also verified
//   BM_IrMemory/<set>            IR bytes (malloc'd) per byte of text, with
//                                every module of the set alive at once
//
// Data comes from $HLOGYM_SOURCE_DIR (environment) or the HLOGYM_SOURCE_DIR
// the build defines: data/corpus/hlo, data/corpus/xla_gpu, data/dataset/hlo.
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_data.h"
#include "benchmark/benchmark.h"
#include "core/ir/verifier.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

struct HloFile {
  std::string name;  // "<dir>/<file>"
  std::string text;
};

std::vector<HloFile> LoadDir(const std::string& dir) {
  std::vector<HloFile> files;
  for (const auto& path : bench::HloPaths(dir)) {
    files.push_back({dir + "/" + path.filename().string(), bench::ReadText(path)});
  }
  return files;
}

void ParseOne(benchmark::State& state, const std::string* text) {
  for (auto _ : state) {
    auto module = ParseModule(*text);
    if (!module.ok()) {
      state.SkipWithError(std::string(module.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(module->get());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text->size()));
}

// With `verify`, each module is also verified (shape inference for every
// instruction): parse + verify is what loading a module costs a user.
void ParseAll(benchmark::State& state, const std::vector<HloFile>* files, bool verify) {
  int64_t bytes = 0;
  for (const HloFile& f : *files) bytes += static_cast<int64_t>(f.text.size());
  // Modules are freed outside the timed region: this measures parsing.
  std::vector<std::unique_ptr<Module>> alive;
  alive.reserve(files->size());
  for (auto _ : state) {
    for (const HloFile& f : *files) {
      auto module = ParseModule(f.text);
      if (!module.ok()) {
        state.SkipWithError((f.name + ": " + std::string(module.status().message())).c_str());
        return;
      }
      if (verify) {
        if (absl::Status status = Verify(**module); !status.ok()) {
          state.SkipWithError((f.name + ": " + std::string(status.message())).c_str());
          return;
        }
      }
      alive.push_back(*std::move(module));
    }
    state.PauseTiming();
    alive.clear();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["modules"] = static_cast<double>(files->size());
  state.counters["text_MB"] = static_cast<double>(bytes) / 1e6;
}

// Heap bytes the parsed modules hold, per byte of text: the modules of the
// set are all kept alive, and the heap is measured before and after.
void IrMemory(benchmark::State& state, const std::vector<HloFile>* files) {
  int64_t bytes = 0;
  for (const HloFile& f : *files) bytes += static_cast<int64_t>(f.text.size());
  double per_byte = 0;
  for (auto _ : state) {
    std::vector<std::unique_ptr<Module>> modules;
    modules.reserve(files->size());
    malloc_trim(0);
    const size_t before = mallinfo2().uordblks;
    for (const HloFile& f : *files) {
      auto module = ParseModule(f.text);
      if (!module.ok()) {
        state.SkipWithError(std::string(module.status().message()).c_str());
        return;
      }
      modules.push_back(*std::move(module));
    }
    const size_t after = mallinfo2().uordblks;
    per_byte = static_cast<double>(after - before) / static_cast<double>(bytes);
    benchmark::DoNotOptimize(modules.data());
  }
  state.counters["ir_bytes_per_text_byte"] = per_byte;
  state.counters["text_MB"] = static_cast<double>(bytes) / 1e6;
}

// Registered at start-up so that each corpus file gets its own line.
struct Registrar {
  std::vector<HloFile> corpus = LoadDir("data/corpus/hlo");
  std::vector<HloFile> xla_gpu = LoadDir("data/corpus/xla_gpu");
  std::vector<HloFile> dataset = LoadDir("data/dataset/hlo");
  std::vector<HloFile> everything;

  Registrar() {
    for (const auto* set : {&corpus, &dataset}) {
      everything.insert(everything.end(), set->begin(), set->end());
    }
    for (const auto* set : {&corpus, &xla_gpu}) {
      for (const HloFile& f : *set) {
        benchmark::RegisterBenchmark(("BM_ParseModule/" + f.name).c_str(), ParseOne, &f.text);
      }
    }
    struct Named {
      const char* name;
      const std::vector<HloFile>* files;
    };
    for (const Named& set : {Named{"corpus", &corpus}, Named{"xla_gpu", &xla_gpu},
                             Named{"dataset", &dataset}, Named{"corpus+dataset", &everything}}) {
      if (set.files->empty()) continue;
      benchmark::RegisterBenchmark((std::string("BM_ParseWorkload/") + set.name).c_str(), ParseAll,
                                   set.files, false);
      benchmark::RegisterBenchmark((std::string("BM_ParseVerifyWorkload/") + set.name).c_str(),
                                   ParseAll, set.files, true);
      benchmark::RegisterBenchmark((std::string("BM_IrMemory/") + set.name).c_str(), IrMemory,
                                   set.files)
          ->Iterations(1);
    }
  }
};
const Registrar* const registrar = new Registrar();

}  // namespace
}  // namespace hlogym

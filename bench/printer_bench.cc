// HLO text printer and fingerprint throughput.
//
//   BM_PrintModule/<dir>/<file>  one module per benchmark, MB/s of printed text
//   BM_PrintWorkload/<set>       every module of a set printed in turn, MB/s
//                                of printed text (short style)
//   BM_PrintLongStyle/<set>      the same in long style (%names, signatures,
//                                operand shapes)
//   BM_Fingerprint/<set>         Fingerprint() of every module of a set;
//                                MB/s counts the module's short-style text
//
// Modules are parsed once, outside the timed region. Data comes from
// $HLOGYM_SOURCE_DIR (environment) or the HLOGYM_SOURCE_DIR the build
// defines: data/corpus/hlo, data/corpus/xla_gpu, data/dataset/hlo.
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
#include "core/ir/fingerprint.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace hlogym {
namespace {

struct ParsedFile {
  std::string name;  // "<dir>/<file>"
  std::unique_ptr<Module> module;
  int64_t printed_bytes = 0;  // size of the short-style text
};

// Modules that fail to parse are left out (the parser tests report them).
std::vector<ParsedFile> LoadDir(const std::string& dir) {
  std::vector<ParsedFile> files;
  for (const auto& path : bench::HloPaths(dir)) {
    auto module = ParseModule(bench::ReadText(path));
    if (!module.ok()) continue;
    ParsedFile f{dir + "/" + path.filename().string(), *std::move(module)};
    f.printed_bytes = static_cast<int64_t>(PrintModule(*f.module).size());
    files.push_back(std::move(f));
  }
  return files;
}

void PrintOne(benchmark::State& state, const ParsedFile* file) {
  int64_t bytes = 0;
  for (auto _ : state) {
    std::string text = PrintModule(*file->module);
    bytes += static_cast<int64_t>(text.size());
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(bytes);
}

void PrintAll(benchmark::State& state, const std::vector<ParsedFile>* files, bool long_style) {
  PrintOptions options;
  options.long_style = long_style;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const ParsedFile& f : *files) {
      std::string text = PrintModule(*f.module, options);
      bytes += static_cast<int64_t>(text.size());
      benchmark::DoNotOptimize(text.data());
    }
  }
  state.SetBytesProcessed(bytes);
  state.counters["modules"] = static_cast<double>(files->size());
  state.counters["modules_per_s"] = benchmark::Counter(
      static_cast<double>(files->size()), benchmark::Counter::kIsIterationInvariantRate);
}

void FingerprintAll(benchmark::State& state, const std::vector<ParsedFile>* files) {
  int64_t bytes = 0;
  for (const ParsedFile& f : *files) bytes += f.printed_bytes;
  for (auto _ : state) {
    for (const ParsedFile& f : *files) benchmark::DoNotOptimize(Fingerprint(*f.module));
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["modules_per_s"] = benchmark::Counter(
      static_cast<double>(files->size()), benchmark::Counter::kIsIterationInvariantRate);
}

// Registered at start-up so that each corpus file gets its own line.
struct Registrar {
  std::vector<ParsedFile> corpus = LoadDir("data/corpus/hlo");
  std::vector<ParsedFile> xla_gpu = LoadDir("data/corpus/xla_gpu");
  std::vector<ParsedFile> dataset = LoadDir("data/dataset/hlo");

  Registrar() {
    for (const auto* set : {&corpus, &xla_gpu}) {
      for (const ParsedFile& f : *set) {
        benchmark::RegisterBenchmark(("BM_PrintModule/" + f.name).c_str(), PrintOne, &f);
      }
    }
    struct Named {
      const char* name;
      const std::vector<ParsedFile>* files;
    };
    for (const Named& set :
         {Named{"corpus", &corpus}, Named{"xla_gpu", &xla_gpu}, Named{"dataset", &dataset}}) {
      if (set.files->empty()) continue;
      const std::string suffix = std::string("/") + set.name;
      benchmark::RegisterBenchmark(("BM_PrintWorkload" + suffix).c_str(), PrintAll, set.files,
                                   false);
      benchmark::RegisterBenchmark(("BM_PrintLongStyle" + suffix).c_str(), PrintAll, set.files,
                                   true);
      benchmark::RegisterBenchmark(("BM_Fingerprint" + suffix).c_str(), FingerprintAll, set.files);
    }
  }
};
const Registrar* const registrar = new Registrar();

}  // namespace
}  // namespace hlogym

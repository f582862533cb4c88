#include "envs/benchmark_set.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/ir/fingerprint.h"
#include "core/passes/default_pipeline.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pipeline.h"
#include "core/text/parser.h"

namespace hlogym {
namespace {

absl::StatusOr<std::unique_ptr<Module>> LoadModuleFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read HLO file `", path, "`"));
  std::ostringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Module>> module = ParseAndVerifyModule(text.str());
  if (!module.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", module.status().message()));
  }
  return module;
}

std::string StemOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = file.rfind('.');
  return dot == std::string::npos ? file : file.substr(0, dot);
}

}  // namespace

absl::Status RunPassSpecs(const std::vector<std::string>& specs, Module& module) {
  if (specs.empty()) return absl::OkStatus();
  Pipeline pipeline("passes", -1);
  for (const std::string& spec : specs) {
    ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(spec));
    pipeline.AddPass(std::move(pass));
  }
  ASSIGN_OR_RETURN(bool paused, pipeline.Run(module));
  (void)paused;  // apply-mode passes never pause
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<BenchmarkSet>> BenchmarkSet::Load(
    const std::vector<std::string>& paths, std::vector<std::string> pre_passes,
    std::shared_ptr<RuntimeSource> runtime) {
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModuleFile(path));
    modules.emplace_back(StemOf(path), std::move(module));
  }
  return FromModules(std::move(modules), std::move(pre_passes), std::move(runtime));
}

absl::StatusOr<std::shared_ptr<BenchmarkSet>> BenchmarkSet::FromModules(
    std::vector<std::pair<std::string, std::unique_ptr<Module>>> modules,
    std::vector<std::string> pre_passes, std::shared_ptr<RuntimeSource> runtime) {
  if (modules.empty()) return absl::InvalidArgumentError("the dataset has no HLO modules");
  // Check the pass specs now, so a typo fails at construction, not mid-episode.
  for (const std::string& spec : pre_passes) RETURN_IF_ERROR(CreatePass(spec).status());
  std::shared_ptr<BenchmarkSet> set(new BenchmarkSet(std::move(pre_passes), std::move(runtime)));
  for (auto& [name, module] : modules) {
    // A module saved mid-episode (EnvPool::ModuleCopy) holds a dry pass's
    // offers: its episodes start from the module they were offered on, every
    // original kept (an env treated them as part of the graph and offered
    // nothing more: the episode ended at once).
    const std::vector<AlternativeNode> offers = FindAlternatives(*module);
    if (!offers.empty()) {
      if (absl::Status s = ApplyChoices(*module, std::vector<int64_t>(offers.size(), 0));
          !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
      }
    }
    auto entry = std::make_unique<Entry>();
    entry->name = name;
    entry->source = std::move(module);
    set->entries_.push_back(std::move(entry));
  }
  return set;
}

absl::StatusOr<const PreparedBenchmark*> BenchmarkSet::Prepared(int64_t i) const {
  if (i < 0 || i >= size()) {
    return absl::OutOfRangeError(
        absl::StrCat("benchmark index ", i, " is out of range [0, ", size(), ")"));
  }
  const Entry& entry = *entries_[i];
  std::call_once(entry.once, [&] {
    entry.prepared = [&]() -> absl::StatusOr<PreparedBenchmark> {
      PreparedBenchmark prepared;
      std::unique_ptr<Module> module = entry.source->Clone();
      RETURN_IF_ERROR(RunPassSpecs(pre_passes_, *module));
      ASSIGN_OR_RETURN(prepared.original_runtime, runtime_->Runtime(*module));
      std::unique_ptr<Module> baseline = entry.source->Clone();
      Pipeline pipeline = DefaultPipeline();
      RETURN_IF_ERROR(pipeline.Run(*baseline).status());
      ASSIGN_OR_RETURN(prepared.default_runtime, runtime_->Runtime(*baseline));
      prepared.fingerprint = Fingerprint(*module);
      prepared.module = std::move(module);
      return prepared;
    }();
  });
  if (!entry.prepared.ok()) {
    return absl::Status(entry.prepared.status().code(),
                        absl::StrCat(entry.name, ": ", entry.prepared.status().message()));
  }
  return &*entry.prepared;
}

}  // namespace hlogym

#include "core/passes/pass_registry.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/passes/algsimp.h"
#include "core/passes/call_inliner.h"
#include "core/passes/constant_folding.h"
#include "core/passes/convolution_to_gemm.h"
#include "core/passes/cse.h"
#include "core/passes/dce.h"
#include "core/passes/horizontal_fusion.h"
#include "core/passes/multi_output_fusion.h"
#include "core/passes/producer_consumer_fusion.h"
#include "core/passes/scan_blocking.h"
#include "core/passes/select_and_scatter_to_scatter.h"
#include "core/passes/topk_to_reductions.h"
#include "core/passes/tuple_simplifier.h"

namespace hlogym {
namespace {

// A factory for passes without options.
template <typename P>
std::function<absl::StatusOr<std::unique_ptr<Pass>>(PassOptions&)> Simple() {
  return [](PassOptions&) -> absl::StatusOr<std::unique_ptr<Pass>> {
    return std::make_unique<P>();
  };
}

std::vector<PassInfo> BuiltinPasses() {
  std::vector<PassInfo> passes = {
      {"algsimp", "algebraic simplification: exact identities and compositions, one rule each",
       Simple<AlgsimpPass>()},
      {"call-inliner", "inlines called computations into their callers", Simple<CallInlinerPass>()},
      {"constant-folding", "evaluates instructions whose operands are all constants",
       Simple<ConstantFoldingPass>()},
      {"conv-to-gemm",
       "lowers convolutions to im2col, a dot and a permutation, each data movement one loop "
       "fusion (a backend's lowering; apply mode only)",
       Simple<ConvolutionToGemmPass>()},
      {"cse", "merges identical instructions", Simple<CsePass>()},
      {"dce", "removes dead instructions, dead fusion parameters and unused computations",
       Simple<DcePass>()},
      {"fusion",
       "producer-consumer fusion; mode=xla (XLA's GPU heuristics) or general, may_duplicate",
       [](PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
         FusionOptions fusion;
         ASSIGN_OR_RETURN(std::string mode, options.GetChoice("mode", "xla", {"xla", "general"}));
         fusion.mode = mode == "xla" ? FusionMode::kXla : FusionMode::kGeneral;
         ASSIGN_OR_RETURN(fusion.may_duplicate, options.GetBool("may_duplicate", true));
         return std::make_unique<ProducerConsumerFusionPass>(fusion);
       }},
      {"horizontal-fusion",
       "merges independent same-shape loop kernels feeding one consumer; mode=xla or general",
       [](PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
         ASSIGN_OR_RETURN(std::string mode, options.GetChoice("mode", "xla", {"xla", "general"}));
         return std::make_unique<HorizontalFusionPass>(mode == "xla" ? FusionMode::kXla
                                                                     : FusionMode::kGeneral);
       }},
      {"multi-output-fusion",
       "sibling and producer-consumer multi-output fusion; mode=xla or general",
       [](PassOptions& options) -> absl::StatusOr<std::unique_ptr<Pass>> {
         ASSIGN_OR_RETURN(std::string mode, options.GetChoice("mode", "xla", {"xla", "general"}));
         return std::make_unique<MultiOutputFusionPass>(mode == "xla" ? FusionMode::kXla
                                                                      : FusionMode::kGeneral);
       }},
      {"scan-blocking",
       "lowers long cumulative scans with few rows to a scan within blocks, a scan of the "
       "blocks' totals and one fusion combining them (a backend's lowering; apply mode only)",
       Simple<ScanBlockingPass>()},
      {"select-and-scatter-to-scatter",
       "lowers select-and-scatter to a variadic reduce-window picking each window's element and "
       "a scatter (a backend's lowering; apply mode only)",
       Simple<SelectAndScatterToScatterPass>()},
      {"topk-to-reductions",
       "lowers topk with k up to 32 to k variadic row reductions, each skipping the earlier "
       "picks (a backend's lowering; apply mode only)",
       Simple<TopKToReductionsPass>()},
      {"tuple-simplifier", "forwards tuple elements and removes rebuilt tuples",
       Simple<TupleSimplifierPass>()},
  };
  std::sort(passes.begin(), passes.end(),
            [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
  return passes;
}

// The list is never edited in place: RegisterPass swaps in a new one, so
// CreatePass reads a snapshot without copying it (an env step makes its
// post-passes from their specs, and copying every PassInfo for that was ~1%
// of a pool's CPU).
struct Registry {
  std::mutex mutex;
  std::shared_ptr<const std::vector<PassInfo>> passes =
      std::make_shared<const std::vector<PassInfo>>(BuiltinPasses());
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

std::shared_ptr<const std::vector<PassInfo>> PassesNow() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.passes;
}

}  // namespace

std::vector<PassInfo> RegisteredPasses() { return *PassesNow(); }

absl::Status RegisterPass(PassInfo info) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const PassInfo& existing : *registry.passes) {
    if (existing.name == info.name) {
      return absl::AlreadyExistsError(absl::StrCat("a pass named `", info.name, "` exists"));
    }
  }
  auto passes = std::make_shared<std::vector<PassInfo>>(*registry.passes);
  passes->push_back(std::move(info));
  std::sort(passes->begin(), passes->end(),
            [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
  registry.passes = std::move(passes);
  return absl::OkStatus();
}

namespace {
const PassInfo* FindPass(const std::vector<PassInfo>& passes, absl::string_view name) {
  for (const PassInfo& info : passes) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Pass>> CreatePass(std::string_view spec) {
  absl::string_view text = absl::StripAsciiWhitespace(
      absl::string_view(spec.data(), spec.size()));
  absl::string_view name = text;
  absl::string_view args;
  if (size_t open = text.find('('); open != absl::string_view::npos) {
    if (text.back() != ')') {
      return absl::InvalidArgumentError(
          absl::StrCat("pass spec `", text, "` has an unclosed `(`"));
    }
    name = absl::StripAsciiWhitespace(text.substr(0, open));
    args = text.substr(open + 1, text.size() - open - 2);
  }
  const std::shared_ptr<const std::vector<PassInfo>> snapshot = PassesNow();
  const std::vector<PassInfo>& passes = *snapshot;
  if (const PassInfo* info = FindPass(passes, name)) {
    ASSIGN_OR_RETURN(PassOptions options,
                     PassOptions::Parse(std::string_view(args.data(), args.size())));
    ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, info->create(options));
    RETURN_IF_ERROR(options.CheckAllUsed(info->name));
    return pass;
  }
  std::vector<std::string> names;
  for (const PassInfo& info : passes) names.push_back(info.name);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown pass `", name, "`; known passes: ", absl::StrJoin(names, ", ")));
}

}  // namespace hlogym

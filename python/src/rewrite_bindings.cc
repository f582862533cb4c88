// Python bindings of the rewrite machinery: passes by spec, resumable
// pipelines, dry passes, decisions, and the graph observation of one module.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/features/graph_features.h"
#include "core/passes/default_pipeline.h"
#include "core/passes/pass_registry.h"
#include "core/rewrite/decisions.h"
#include "core/rewrite/pass.h"
#include "core/rewrite/pipeline.h"
#include "python/src/bindings.h"
#include "python/src/shared_reads.h"
#include "python/src/status.h"

namespace py = pybind11;

namespace hlogym {
namespace {

// -1 (a fixed point) or a count: anything else is a slip, which the
// pipeline would otherwise run as a fixed point (below -1) or skip (0).
int CheckedLoopCount(int loop_count) {
  if (loop_count == -1 || loop_count > 0) return loop_count;
  throw py::value_error("loop_count must be -1 (until nothing changes) or a positive count, got " +
                        std::to_string(loop_count));
}

// The observation of one module, sized to fit it exactly unless limits are given.
py::dict Observe(const Module& module, std::optional<FeatureLimits> given) {
  GraphCounts counts = CountGraph(module);
  FeatureLimits limits = given.value_or(FeatureLimits{
      std::max<int64_t>(counts.nodes, 1), std::max<int64_t>(counts.edges, 1),
      std::max<int64_t>(counts.alternatives, 1), 1});
  if (!given) {
    for (const AlternativeNode& alt : FindAlternatives(module)) {
      limits.max_choices = std::max(limits.max_choices, alt.num_choices());
    }
  }
  const int64_t n = limits.max_nodes, e = limits.max_edges;
  const int64_t a = limits.max_alternatives, k = limits.max_choices;
  py::array_t<float> node_features({n, int64_t{kNodeFeatureCount}});
  py::array_t<int32_t> node_opcode(n);
  py::array_t<bool> node_mask(n);
  py::array_t<int32_t> edge_index({int64_t{2}, e});
  py::array_t<float> edge_features({e, int64_t{kEdgeFeatureCount}});
  py::array_t<bool> edge_mask(e);
  py::array_t<int32_t> in_edge_offsets(n + 1);
  py::array_t<int32_t> alt_nodes(a);
  py::array_t<bool> alt_valid(a);
  py::array_t<int32_t> alt_num_choices(a);
  py::array_t<bool> alt_mask({a, k});
  ObservationView view{
      node_features.mutable_data(), node_opcode.mutable_data(),
      reinterpret_cast<uint8_t*>(node_mask.mutable_data()), edge_index.mutable_data(),
      edge_features.mutable_data(), reinterpret_cast<uint8_t*>(edge_mask.mutable_data()),
      in_edge_offsets.mutable_data(), alt_nodes.mutable_data(),
      reinterpret_cast<uint8_t*>(alt_valid.mutable_data()), alt_num_choices.mutable_data(),
      reinterpret_cast<uint8_t*>(alt_mask.mutable_data())};
  {
    SharedRead read(&module);
    py::gil_scoped_release release;
    Unwrap(WriteObservation(module, limits, view));
  }
  py::dict out;
  out["node_features"] = node_features;
  out["node_opcode"] = node_opcode;
  out["node_mask"] = node_mask;
  out["edge_index"] = edge_index;
  out["edge_features"] = edge_features;
  out["edge_mask"] = edge_mask;
  out["in_edge_offsets"] = in_edge_offsets;
  out["alt_nodes"] = alt_nodes;
  out["alt_valid"] = alt_valid;
  out["alt_num_choices"] = alt_num_choices;
  out["alt_mask"] = alt_mask;
  out["num_nodes"] = counts.nodes;
  out["num_edges"] = counts.edges;
  out["num_alternatives"] = counts.alternatives;
  return out;
}

}  // namespace

void RegisterRewrite(py::module_& m) {
  m.attr("NODE_FEATURE_COUNT") = kNodeFeatureCount;
  m.attr("EDGE_FEATURE_COUNT") = kEdgeFeatureCount;
  m.attr("NUM_OPCODES") = kNumOpcodes;

  m.def("passes", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PassInfo& info : RegisteredPasses()) out.emplace_back(info.name, info.description);
    return out;
  }, "(name, description) of every built-in pass.");

  m.def("run_pass", [](Module& module, const std::string& spec) {
    // Keeps the GIL: no other Python code runs while it changes the module
    // (python/src/shared_reads.h).
    std::unique_ptr<Pass> pass = Unwrap(CreatePass(spec));
    CheckNotBeingRead(&module, "HloModule");
    return Unwrap(RunPass(*pass, module));
  }, py::arg("module"), py::arg("spec"),
  "Runs a pass (e.g. 'algsimp', 'fusion(mode=general)') in place; returns whether it changed the module.");

  m.def("run_dry_pass", [](Module& module, const std::string& spec) {
    std::unique_ptr<Pass> pass = Unwrap(CreatePass(spec));
    CheckNotBeingRead(&module, "HloModule");
    return Unwrap(RunDryPass(*pass, module));
  }, py::arg("module"), py::arg("spec"),
  "Runs a pass in dry mode, building the alternative graph; returns the number of alternatives.");

  m.def("alternatives", [](const Module& module) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const AlternativeNode& alt : FindAlternatives(module)) {
      out.emplace_back(alt.node_index, alt.num_choices());
    }
    return out;
  }, py::arg("module"), "(node index, number of choices) of each alternatives node.");

  m.def("apply_decisions",
        [](Module& module,
           py::array_t<int64_t, py::array::c_style | py::array::forcecast> decisions) {
          if (decisions.ndim() != 2) {
            throw py::value_error("decisions must be a 2-D array [num_alternatives, 2], got " +
                                  std::to_string(decisions.ndim()) + " dimensions");
          }
          const int64_t rows = decisions.shape(0), cols = decisions.shape(1);
          CheckNotBeingRead(&module, "HloModule");
          Check(ApplyDecisions(module, absl::MakeConstSpan(decisions.data(), decisions.size()),
                               rows, cols));
        },
        py::arg("module"), py::arg("decisions"),
        "Applies HloEnv-style decisions [(node index, choice), ...], then prunes.");

  m.def("apply_choices", [](Module& module, const std::vector<int64_t>& choices) {
    CheckNotBeingRead(&module, "HloModule");
    Check(ApplyChoices(module, choices));
  }, py::arg("module"), py::arg("choices"),
  "Applies one choice per alternatives node (in node order), then prunes.");

  m.def("observe",
        [](const Module& module, std::optional<int64_t> max_nodes,
           std::optional<int64_t> max_edges, std::optional<int64_t> max_alternatives,
           std::optional<int64_t> max_choices) {
          for (const auto& [name, value] :
               {std::pair{"max_nodes", max_nodes}, {"max_edges", max_edges},
                {"max_alternatives", max_alternatives}, {"max_choices", max_choices}}) {
            if (value && *value <= 0) {
              throw py::value_error(std::string(name) + " must be positive, got " +
                                    std::to_string(*value));
            }
          }
          std::optional<FeatureLimits> limits;
          if (max_nodes || max_edges || max_alternatives || max_choices) {
            FeatureLimits l;
            l.max_nodes = max_nodes.value_or(l.max_nodes);
            l.max_edges = max_edges.value_or(l.max_edges);
            l.max_alternatives = max_alternatives.value_or(l.max_alternatives);
            l.max_choices = max_choices.value_or(l.max_choices);
            limits = l;
          }
          return Observe(module, limits);
        },
        py::arg("module"), py::arg("max_nodes") = py::none(),
        py::arg("max_edges") = py::none(), py::arg("max_alternatives") = py::none(),
        py::arg("max_choices") = py::none(),
        "The graph observation of one module as a dict of arrays (sized to fit unless limits are given).");

  py::class_<Pipeline>(m, "Pipeline", R"doc(
Passes run in order, loop_count times or to a fixed point (-1). A dry pass in
it stops run() (which returns True) once it has built alternatives; apply
decisions, then call run() again to resume after it, as HloEnv's AltPipeline.)doc")
      .def(py::init([](std::string name, int loop_count) {
             return Pipeline(std::move(name), CheckedLoopCount(loop_count));
           }),
           py::arg("name"), py::arg("loop_count") = 1)
      .def_static("default", &DefaultPipeline,
                  "XLA's pipeline as hlogym runs it in apply mode (simplification, fusion,\n"
                  "multi-output and horizontal fusion, cleanup): the baseline agents are\n"
                  "compared with.")
      .def("add_pass",
           [](Pipeline& p, const std::string& spec, int loop_count) -> Pipeline& {
             return p.AddPass(Unwrap(CreatePass(spec)), CheckedLoopCount(loop_count));
           },
           py::arg("spec"), py::arg("loop_count") = 1, py::return_value_policy::reference)
      .def("add_dry_pass",
           [](Pipeline& p, const std::string& spec, int loop_count) -> Pipeline& {
             return p.AddDryPass(Unwrap(CreatePass(spec)), CheckedLoopCount(loop_count));
           },
           py::arg("spec"), py::arg("loop_count") = 1, py::return_value_policy::reference)
      .def("add_pipeline",
           [](Pipeline& p, Pipeline& nested) -> Pipeline& {
             return p.AddPipeline(std::move(nested));
           },
           py::arg("pipeline"), py::return_value_policy::reference,
           "Adds a nested pipeline; the argument is consumed (left empty).")
      .def("run",
           [](Pipeline& p, Module& module) {
             // Keeps the GIL (the pipeline's paused position changes too).
             CheckNotBeingRead(&module, "HloModule");
             return Unwrap(p.Run(module));
           },
           py::arg("module"))
      .def("reset", &Pipeline::Reset)
      .def_property_readonly("name", &Pipeline::name)
      .def_property_readonly("changed", &Pipeline::changed);
}

}  // namespace hlogym

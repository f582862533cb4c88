// The registration functions of the extension module hlogym._hlogym, one per
// part of hlogym, each defined in its own *_bindings.cc.
#pragma once

#include <pybind11/pybind11.h>

namespace hlogym {

void RegisterInfo(pybind11::module_& m);     // llvm_version, nvptx_available, cuda_device_count, build_info
void RegisterIr(pybind11::module_& m);       // HloModule, HloParseError, HloVerifyError
void RegisterEval(pybind11::module_& m);     // evaluate, equivalent, formula_inputs
void RegisterRewrite(pybind11::module_& m);  // passes, Pipeline, decisions, observe
void RegisterBackend(pybind11::module_& m);  // estimate (the cost model)
void RegisterEnvs(pybind11::module_& m);     // EnvPool, configs, datasets
void RegisterAgents(pybind11::module_& m);   // RandomAgent, PoolActor, agent_names, run_episodes

}  // namespace hlogym

"""hlogym: a vectorized Gymnasium-style RL environment engine for XLA HLO
graph rewriting, with its own small HLO compiler.

    import hlogym
    envs = hlogym.make("fusion-v0", num_envs=8)
    obs, info = envs.reset(seed=0)
"""
from hlogym._hlogym import (  # noqa: F401
    EnvPool,
    HloModule,
    HloParseError,
    HloVerifyError,
    Pipeline,
    RandomAgent,
    alternatives,
    equivalent,
    evaluate,
    formula_inputs,
    apply_choices,
    apply_decisions,
    Executable,
    compile,
    emit_ptx,
    estimate,
    calibrate,
    device_spec,
    observe,
    passes,
    run_dry_pass,
    run_pass,
    build_info,
    cuda_device_count,
    llvm_version,
    nvptx_available,
)
from hlogym._hlogym import __version__  # noqa: F401
from hlogym.agents import Agent, agent_names, make_agent, run_episodes  # noqa: F401
from hlogym.hloenv import HloEnv  # noqa: F401
from hlogym.vector_env import HloGymEnv, HloVectorEnv, make  # noqa: F401
from hlogym import registration as _registration

_registration.register_envs()

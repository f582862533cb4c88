"""Registers hlogym's envs with Gymnasium, so that
`gymnasium.make_vec("hlogym/fusion-v0", num_envs=8)` and
`gymnasium.make("hlogym/fusion-v0")` work."""
from __future__ import annotations

import gymnasium

from hlogym.resources import env_ids


def _make_vector(env_id: str, num_envs: int = 1, **kwargs):
    from hlogym.vector_env import HloVectorEnv

    kwargs.pop("render_mode", None)
    return HloVectorEnv(env_id, num_envs, **kwargs)


def register_envs() -> None:
    for env_id in env_ids():
        name = f"hlogym/{env_id}"
        if name in gymnasium.registry:
            continue
        gymnasium.register(
            id=name,
            entry_point="hlogym.vector_env:HloGymEnv",
            vector_entry_point="hlogym.registration:_make_vector",
            kwargs={"env_id": env_id},
            disable_env_checker=True,
        )

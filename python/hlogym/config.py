"""Env configs: configs/ENV_ID.yaml, read by the C++ parser, plus overrides."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hlogym import _hlogym
from hlogym.resources import configs_dir, env_ids


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    id: str
    pre_passes: list
    dry_passes: list
    dry_stages: list
    post_passes: list
    max_steps: int
    max_nodes: int
    max_edges: int
    max_alternatives: int
    max_choices: int
    reward: str
    dataset: Any


_FIELDS = {f.name for f in dataclasses.fields(EnvConfig)}


def load_config(env_id: str, overrides: dict | None = None) -> EnvConfig:
    """Reads configs/ENV_ID.yaml (or a path to a YAML file) and applies overrides."""
    path = Path(env_id)
    if path.suffix not in (".yaml", ".yml"):
        path = configs_dir() / f"{env_id}.yaml"
        if not path.exists():
            raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(env_ids())}")
    values = dict(_hlogym.load_env_config(str(path)))
    for key, value in (overrides or {}).items():
        if key not in _FIELDS or key == "id":
            raise ValueError(f"unknown config key {key!r}; known: {', '.join(sorted(_FIELDS - {'id'}))}")
        values[key] = value
    return EnvConfig(**values)

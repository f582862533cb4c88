"""Env configs: configs/ENV_ID.yaml, read by the C++ parser, plus overrides."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np

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
    observe_candidate_bodies: bool
    reward: str
    dataset: Any


_FIELDS = {f.name for f in dataclasses.fields(EnvConfig)}
_LIMITS = ("max_steps", "max_nodes", "max_edges", "max_alternatives", "max_choices")
_PASS_LISTS = ("pre_passes", "dry_passes", "post_passes")


def _is_pass_list(value: Any) -> bool:
    # A bare string is a sequence too, of one-letter "passes": not a list.
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _checked_override(key: str, value: Any) -> Any:
    """`value` as the config holds it, or a ValueError naming the key. The
    YAML files are checked by the C++ loader; overrides come from Python and
    would otherwise fail in pybind11's signature matching or numpy."""
    if key in _LIMITS:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"config key {key!r} must be a positive integer, got {value!r}")
        return int(value)
    if key in _PASS_LISTS:
        if not _is_pass_list(value):
            raise ValueError(f"config key {key!r} must be a list of pass specs (strings), "
                             f"got {value!r}")
        return list(value)
    if key == "dry_stages":
        if not isinstance(value, (list, tuple)) or not all(_is_pass_list(v) for v in value):
            raise ValueError(f"config key 'dry_stages' must be a list of lists of pass specs "
                             f"(strings), got {value!r}")
        return [list(v) for v in value]
    if key == "observe_candidate_bodies":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"config key 'observe_candidate_bodies' must be True or False, "
                             f"got {value!r}")
        return bool(value)
    if key == "reward":
        if not isinstance(value, str):
            raise ValueError(f"config key 'reward' must be a string, got {value!r}")
        return value
    if key == "dataset":
        is_path = isinstance(value, (str, os.PathLike))
        if not is_path and not (isinstance(value, (list, tuple)) and
                                all(isinstance(v, (str, os.PathLike)) for v in value)):
            raise ValueError(f"config key 'dataset' must be a path or a list of paths, "
                             f"got {value!r}")
        return value
    return value


def load_config(env_id: str, overrides: dict | None = None) -> EnvConfig:
    """Reads configs/ENV_ID.yaml (or a path to a YAML file) and applies overrides."""
    path = Path(env_id)
    if path.suffix not in (".yaml", ".yml"):
        path = configs_dir() / f"{env_id}.yaml"
        if not path.exists():
            raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(env_ids())}")
    elif not path.is_file():
        # A ValueError as for an unknown id: the CLI reports both as bad input.
        raise ValueError(f"env config not found: {env_id}; known env ids: {', '.join(env_ids())}")
    values = dict(_hlogym.load_env_config(str(path)))
    for key, value in (overrides or {}).items():
        if key not in _FIELDS or key == "id":
            raise ValueError(f"unknown config key {key!r}; known: {', '.join(sorted(_FIELDS - {'id'}))}")
        values[key] = _checked_override(key, value)
    return EnvConfig(**values)

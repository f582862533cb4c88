"""Where hlogym's bundled files live: env configs and the HLO dataset.

In a source checkout they are the repository's `configs/` and `data/`; in an
installed wheel they are copied inside the package.
"""
from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[0]


def configs_dir() -> Path:
    return _first_existing(_PACKAGE / "configs", _PACKAGE.parent.parent / "configs")


def data_dir() -> Path:
    override = os.environ.get("HLOGYM_DATA")
    if override:
        return Path(override)
    return _first_existing(_PACKAGE / "data", _PACKAGE.parent.parent / "data")


def env_ids() -> list[str]:
    """The names of the bundled env configs, e.g. ['algsimp-v0', 'full-v0', 'fusion-v0']."""
    return sorted(p.stem for p in configs_dir().glob("*.yaml"))

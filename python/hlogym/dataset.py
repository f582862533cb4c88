"""Datasets: the HLO files an environment draws episodes from."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from hlogym import _hlogym
from hlogym.resources import data_dir

SPLITS = ("all", "train", "test")


def resolve_dataset(dataset: Any, split: str = "all") -> list[str]:
    """HLO file paths for `dataset`: a directory (searched recursively), a list
    of files, or a config's relative path such as "data" (the bundled corpus
    and dataset). `split` picks the documented train/test split of a directory."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    if isinstance(dataset, (list, tuple)):
        if not all(isinstance(f, (str, os.PathLike)) for f in dataset):
            raise ValueError(f"dataset must be a path or a list of paths, got {dataset!r}")
        files = [os.fspath(f) for f in dataset]
        for f in files:
            if not Path(f).is_file():
                raise FileNotFoundError(f"dataset file not found: {f}")
        if not files:
            raise ValueError("the dataset list is empty")
        return files
    if not isinstance(dataset, (str, os.PathLike)):
        raise ValueError(f"dataset must be a path or a list of paths, got {dataset!r}")
    path = Path(os.fspath(dataset))
    if not path.is_absolute() and not path.exists():
        bundled = data_dir().parent / path if path.parts and path.parts[0] == "data" else None
        path = bundled if bundled is not None and bundled.exists() else path
    if not path.exists():
        raise FileNotFoundError(f"dataset directory not found: {path}")
    if path.is_file():
        if split != "all":
            raise ValueError(f"split {split!r} picks from a directory's documented split; "
                             f"{path} is one file")
        return [os.fspath(dataset)]
    return list(_hlogym.dataset_files(str(path), split))

"""Shared pytest fixtures: paths to the bundled data."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"


@pytest.fixture
def corpus_small():
    return sorted((DATA / "corpus" / "small" / "hlo").glob("*.hlo"))


@pytest.fixture
def softmax_path():
    return DATA / "corpus" / "small" / "hlo" / "softmax_4096x1024_small.hlo"

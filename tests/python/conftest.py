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


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; skipped where there is none")


def pytest_collection_modifyitems(config, items):
    import hlogym

    try:
        has_gpu = hlogym.build_info()["cuda"] and hlogym.cuda_device_count() > 0
    except RuntimeError:
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

"""Build and machine facts from the extension."""
import pytest

import hlogym


def test_llvm_is_16():
    assert hlogym.llvm_version().startswith("16.")


def test_nvptx_target_is_available():
    assert hlogym.nvptx_available() is True


def test_cuda_device_count_is_a_count_or_says_why():
    try:
        count = hlogym.cuda_device_count()
    except RuntimeError as e:
        assert str(e)  # no driver, stub driver, no GPU, or built without CUDA
        return
    assert count >= 0


def test_cuda_device_count_without_cuda_build():
    if hlogym.build_info()["cuda"]:
        pytest.skip("built with CUDA")
    with pytest.raises(RuntimeError, match="built without CUDA"):
        hlogym.cuda_device_count()


def test_build_info():
    info = hlogym.build_info()
    assert info["version"] == hlogym.__version__
    assert info["llvm"] == hlogym.llvm_version()
    assert isinstance(info["cuda"], bool)
    assert {"build_type", "compiler", "pybind11"} <= set(info)

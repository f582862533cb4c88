"""The command line: the summary job and bad-argument handling."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-m", "hlogym", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)


def test_summary_lists_every_bundled_module():
    result = run("summary")
    assert result.returncode == 0, result.stderr
    assert "151 modules" in result.stdout
    assert "gpt2_tiny_train_4x128" in result.stdout


def test_bad_command_is_one_line_and_exit_2():
    result = run("frobnicate")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "error" in result.stderr


def test_missing_dataset_is_one_line_and_exit_2(tmp_path):
    result = run("summary", "--data", str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "not found" in result.stderr
    assert "Traceback" not in result.stderr

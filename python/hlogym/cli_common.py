"""Shared pieces of the `hlogym` commands: one-line errors, backend choice,
agent lists, envs over a dataset, and plain-text tables."""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Iterable, Sequence

#: cost is the H100 cost model (as cost:h100); cost:cpu models this CPU.
BACKENDS = ("auto", "cost", "cost:h100", "cost:cpu", "cpu", "gpu")


class CliError(Exception):
    """Bad input: reported as one line on stderr with exit code 2."""


def fail(message: str) -> int:
    print(f"hlogym: error: {message}", file=sys.stderr)
    return 2


def cuda_devices() -> int:
    import hlogym

    try:
        return int(hlogym.cuda_device_count())
    except Exception:  # no driver, no toolkit: no GPU
        return 0


def resolve_backend(spec: str) -> str:
    """The runtime source spec for --backend: auto picks gpu where a GPU and
    the GPU backend exist, else cpu where the CPU backend works, else cost.
    cpu and gpu may carry measurement options: 'cpu(min_runs=3, max_seconds=0.1)'."""
    from hlogym import _hlogym

    name, _, options = spec.partition("(")
    if name not in BACKENDS or (options and name not in ("cpu", "gpu")):
        raise CliError(f"unknown backend {spec!r}; known: {', '.join(BACKENDS)} "
                       f"(cpu and gpu take measurement options, e.g. 'cpu(max_seconds=0.1)')")
    if name.startswith("cost"):
        return name
    if name == "gpu":
        if cuda_devices() == 0:
            raise CliError("--backend gpu: no CUDA GPU is visible on this machine; "
                           "use --backend cpu (measured on the CPU) or --backend cost")
        error = _hlogym.runtime_source_error(spec)
        if error:
            raise CliError(f"--backend gpu: {error}; use --backend cpu or --backend cost")
        return spec
    if name == "cpu":
        error = _hlogym.runtime_source_error(spec)
        if error:
            raise CliError(f"--backend cpu: {error}; use --backend cost")
        return spec
    if cuda_devices() > 0 and _hlogym.runtime_source_error("gpu") is None:
        return "gpu"
    if _hlogym.runtime_source_error("cpu") is None:
        return "cpu"
    return "cost"


def backend_label(spec: str) -> str:
    name, paren, options = spec.partition("(")
    label = {"cost": "cost model (H100 estimate)", "cost:h100": "cost model (H100 estimate)",
             "cost:cpu": "cost model (CPU estimate)", "cpu": "CPU, measured",
             "gpu": "GPU, measured"}.get(name, name)
    return f"{label} ({options[:-1]})" if paren else label


def split_agents(text: str) -> list[str]:
    """'random,search(budget=8, beam=2)' -> ['random', 'search(budget=8, beam=2)']."""
    specs, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            specs.append(current.strip())
            current = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        current += ch
    specs.append(current.strip())
    if not any(specs):
        raise CliError("no agent given")
    if not all(specs):
        raise CliError(f"an empty agent name in '{text}'")
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise CliError(f"agent given twice: {', '.join(repeated)} (one column per agent)")
    return specs


def check_agent(spec: str) -> None:
    import hlogym

    try:
        hlogym.make_agent(spec)
    except ValueError as e:
        raise CliError(str(e)) from None


def dataset_files(dataset: Sequence[str] | None, default: str, limit: int | None) -> list[str]:
    """HLO files from --dataset (directories and/or files), sorted, at most `limit`."""
    from hlogym.dataset import resolve_dataset

    files: list[str] = []
    try:
        for item in (dataset or [default]):
            if Path(item).is_file():
                files.append(os.fspath(item))
            elif Path(item).suffix == ".hlo":
                raise CliError(f"file not found: {item}")
            else:
                files.extend(resolve_dataset(item, "all"))
    except (FileNotFoundError, ValueError) as e:
        raise CliError(str(e)) from None
    if not files:
        raise CliError(f"no .hlo files in {', '.join(dataset or [default])}")
    if limit is not None and limit > 0:
        files = files[:limit]
    return files


def make_env(env_id: str, files: list[str], backend: str, max_steps: int | None):
    """A pool of one env over `files` (episodes run on its forks)."""
    import hlogym

    overrides = {"reward": backend}
    if max_steps is not None:
        overrides["max_steps"] = int(max_steps)
    try:
        return hlogym.make(env_id, num_envs=1, dataset=files, **overrides)
    except (ValueError, FileNotFoundError, NotImplementedError) as e:
        raise CliError(str(e)) from None
    except (hlogym.HloParseError, hlogym.HloVerifyError) as e:
        raise CliError(f"bad HLO: {e}") from None


def geomean(values: Iterable[float]) -> float:
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if not values:
        return float("nan")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]],
                 footer: Sequence[Sequence[str]] = ()) -> str:
    """A plain-text table: the first column left-aligned, the rest right."""
    all_rows = [list(header)] + [list(r) for r in rows] + [list(r) for r in footer]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(header))]

    def line(row):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(header), rule] + [line(r) for r in rows]
    if footer:
        out.append(rule)
        out.extend(line(r) for r in footer)
    return "\n".join(out)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f}" if math.isfinite(seconds) else "-"


def ratio(x: float) -> str:
    return f"{x:.3f}x" if math.isfinite(x) else "-"

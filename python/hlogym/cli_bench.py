"""`hlogym bench`: runs the benchmark executables built under build/bench/
and prints their tables."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hlogym.cli_common import CliError


def find_benchmarks(build_dir: Path) -> list[Path]:
    bench_dir = build_dir / "bench"
    if not bench_dir.is_dir():
        return []
    return sorted(p for p in bench_dir.iterdir()
                  if p.is_file() and os.access(p, os.X_OK) and p.name.endswith("_bench"))


def default_build_dir() -> Path:
    env = os.environ.get("HLOGYM_BUILD_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "build"


def cmd_bench(args) -> int:
    build_dir = Path(args.build_dir) if args.build_dir else default_build_dir()
    benches = find_benchmarks(build_dir)
    if not benches:
        raise CliError(f"no benchmarks built in {build_dir / 'bench'}; build them with "
                       f"`cmake --build {build_dir}` (or bash scripts/setup.sh)")
    if args.only:
        wanted = [w for w in args.only.split(",") if w]

        def names(bench: Path) -> set[str]:
            return {bench.name, bench.name.removesuffix("_bench"),
                    bench.name.removeprefix("hlogym_").removesuffix("_bench")}

        # Every name must match: a typo in one of several would otherwise be skipped unseen.
        unknown = [w for w in wanted if not any(w in names(b) for b in benches)]
        if unknown or not wanted:
            raise CliError(f"no benchmark named {', '.join(unknown) or repr(args.only)}; built: "
                           f"{', '.join(b.name for b in benches)}")
        benches = [b for b in benches if names(b) & set(wanted)]
    failed = 0
    for bench in benches:
        command = [str(bench), f"--benchmark_min_time={args.min_time}"]
        if args.filter:
            command.append(f"--benchmark_filter={args.filter}")
        print(f"== {bench.name}", flush=True)
        try:
            done = subprocess.run(command, stdout=sys.stdout, stderr=subprocess.STDOUT,
                                  timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"{bench.name}: stopped after {args.timeout} s", flush=True)
            failed += 1
            continue
        if done.returncode != 0:
            print(f"{bench.name}: exit code {done.returncode}", flush=True)
            failed += 1
    return 1 if failed else 0


def add_bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="run the built benchmarks (build/bench/*_bench)")
    p.add_argument("--build-dir", help="the CMake build directory (default: build, or "
                                       "$HLOGYM_BUILD_DIR)")
    p.add_argument("--only", help="comma-separated benchmark names, e.g. parser,interpreter")
    p.add_argument("--filter", help="Google Benchmark --benchmark_filter regex")
    p.add_argument("--min-time", type=float, default=0.1,
                   help="seconds per benchmark (Google Benchmark --benchmark_min_time)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per executable")
    p.set_defaults(run=cmd_bench)

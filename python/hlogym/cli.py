"""The `hlogym` command line.

    hlogym summary [--data DIR]     parse the dataset and print a table
    hlogym main                     the README's main job

Bad arguments give one line on stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line and exit code 2."""

    def error(self, message):
        print(f"hlogym: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _fail(message: str) -> int:
    print(f"hlogym: error: {message}", file=sys.stderr)
    return 2


def cmd_summary(args) -> int:
    import hlogym
    from hlogym.dataset import resolve_dataset

    try:
        files = resolve_dataset(args.data or "data", "all")
    except (FileNotFoundError, ValueError) as e:
        return _fail(str(e))
    rows = []
    total_bytes = 0
    started = time.perf_counter()
    for path in files:
        text = Path(path).read_text()
        total_bytes += len(text)
        try:
            module = hlogym.HloModule.from_text(text)
        except (hlogym.HloParseError, hlogym.HloVerifyError) as e:
            return _fail(f"{path}: {e}")
        estimate = hlogym.estimate(module, "h100")
        rows.append((Path(path).stem, module.instruction_count, module.computation_count,
                     estimate["kernels"], estimate["seconds"] * 1e6))
    elapsed = time.perf_counter() - started
    width = max(len(r[0]) for r in rows)
    print(f"{'module':<{width}}  {'instrs':>6}  {'comps':>5}  {'kernels':>7}  {'est. H100 us':>12}")
    for name, instrs, comps, kernels, us in rows:
        print(f"{name:<{width}}  {instrs:>6}  {comps:>5}  {kernels:>7}  {us:>12.1f}")
    print(f"{len(rows)} modules, {sum(r[1] for r in rows)} instructions, "
          f"{total_bytes / 1e6:.2f} MB of HLO parsed and verified in {elapsed:.2f} s")
    return 0


def cmd_main(args) -> int:
    """The README's main job: until the agents exist, the dataset summary."""
    return cmd_summary(args)


COMMANDS = {
    "summary": (cmd_summary, "parse and verify the dataset and print a summary table"),
    "main": (cmd_main, "the main job of the README"),
}


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="hlogym", description="HLO graph-rewrite RL environments")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--data", help="dataset directory (default: the bundled data)")
    args = parser.parse_args(argv)
    return COMMANDS[args.command][0](args)

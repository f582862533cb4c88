"""Scores the cost model's ranking on graphs measured once.

`HLOGYM_BENCH_RANK_DUMP=DIR build/bench/hlogym_cpu_backend_bench` writes the
graphs of its ranking check (unfused, default pipeline, random fusion
decisions of each corpus module) and their measured CPU medians to DIR. This
script re-estimates them with the cost model as built now and reports how
often it orders a pair of graphs of one module as measurement does, with the
bench's rule (pairs measured within 5% of each other are ties, not counted).
So a change to backend/cost_model.cc is judged on the same measurements,
without the noise of timing them again:

    PYTHONPATH=python .venv/bin/python bench/cost_model_ranking.py DIR [--detail]
"""
import argparse
import itertools
import sys
from collections import defaultdict
from pathlib import Path

import hlogym


def load(directory: Path):
    samples = defaultdict(list)  # module -> [(graph, measured, estimate)]
    for line in (directory / "measured.tsv").read_text().splitlines():
        module, graph, measured = line.split("\t")
        text = (directory / f"{module}.{graph}.hlo").read_text()
        estimate = hlogym.estimate(hlogym.HloModule.from_text(text), "cpu")
        samples[module].append((graph, float(measured), estimate))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="the bench's HLOGYM_BENCH_RANK_DUMP directory")
    parser.add_argument("--detail", action="store_true", help="print each misordered pair")
    args = parser.parse_args()
    samples = load(args.dir)
    agree = pairs = 0
    for module, graphs in sorted(samples.items()):
        module_agree = module_pairs = 0
        for (ga, ma, ea), (gb, mb, eb) in itertools.combinations(graphs, 2):
            if max(ma, mb) < 1.05 * min(ma, mb):
                continue
            module_pairs += 1
            if (ma < mb) == (ea["seconds"] < eb["seconds"]):
                module_agree += 1
            elif args.detail:
                for g, m, e in ((ga, ma, ea), (gb, mb, eb)):
                    print(f"  {module:<34} {g:<8} k={e['kernels']:<4} {e['bytes'] / 1e6:8.2f} MB "
                          f"{e['flops'] / 1e6:9.2f} MFLOP meas {m * 1e3:8.3f} "
                          f"est {e['seconds'] * 1e3:8.3f} ms")
                print()
        if module_pairs:
            print(f"{module:<36} {module_agree:>3} of {module_pairs:>3} pairs agree")
        agree += module_agree
        pairs += module_pairs
    print(f"ranking: {agree} of {pairs} pairs agree ({100 * agree / max(1, pairs):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

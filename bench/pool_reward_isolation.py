"""What measuring rewards in a worker process costs a pool.

An isolated source (`gpu` by default, `cpu(isolate=1)`) answers one
measurement at a time, compile included, where the in-process source
compiles on every pool thread and takes turns only for the timed runs. This
steps the same pool (fusion-v0 over the small corpus twins, random legal
actions, the same seed) with the in-process and the isolated source and
prints env steps per second for each. Run from the repository root:

    PYTHONPATH=python .venv/bin/python bench/pool_reward_isolation.py [cpu|gpu] [STEPS]
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import hlogym

# Short measurements: the point is the step's overhead, not the runtimes.
OPTIONS = "warmup_runs=1, min_runs=3, max_seconds=0.02"


def steps_per_second(reward: str, files: list[str], steps: int) -> float:
    env = hlogym.make("fusion-v0", num_envs=8, seed=0, dataset=files, reward=reward)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        legal = obs["alt_mask"]
        actions = np.zeros(legal.shape[:2], dtype=np.int64)
        for row, alt in zip(*np.nonzero(legal.any(axis=2))):
            actions[row, alt] = rng.choice(np.flatnonzero(legal[row, alt]))
        obs, *_ = env.step(actions)
    elapsed = time.perf_counter() - start
    env.close()
    return steps * 8 / elapsed


def main() -> None:
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    files = sorted(str(p) for p in Path("data/corpus/small/hlo").glob("*.hlo"))[:8]
    warnings.simplefilter("ignore", RuntimeWarning)
    for isolate in (0, 1):
        reward = f"{device}(isolate={isolate}, {OPTIONS})"
        print(f"{reward}: {steps_per_second(reward, files, steps):.1f} env steps/s "
              f"(8 envs, {steps} steps)", flush=True)


if __name__ == "__main__":
    main()

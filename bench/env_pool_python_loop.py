"""The environment pool from Python against a plain Python loop over single envs.

Same workload as bench/env_pool_bench.cc: fusion-v0 over data/corpus/hlo/*.hlo
with the cost-model reward, random legal actions, and the same raised limits
(so every corpus module fits all episode long). Each configuration takes the
same number of environment steps from the same seeds and reports steps per
second of wall time and per CPU second of the process (all threads), with
the load average beside it: on a busy machine only the latter compares.

    PYTHONPATH=python .venv/bin/python bench/env_pool_python_loop.py [--steps 2048]
"""
from __future__ import annotations

import argparse
import glob
import os
import time

import numpy as np

import hlogym

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = dict(max_nodes=32768, max_edges=131072, max_alternatives=2048, max_choices=16)


def sample(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal choice per offered alternative (0 elsewhere),
    from one environment's alt_num_choices row."""
    return (rng.random(k.shape) * k).astype(np.int64)


# Environment i gets seed i and its own action generator in both the pool
# and the loop, so both take exactly the same trajectories.
def generators(num_envs: int) -> list:
    return [np.random.default_rng(100 + i) for i in range(num_envs)]


def run_pool(files, num_envs: int, threads: int, env_steps: int) -> dict:
    envs = hlogym.make("fusion-v0", num_envs=num_envs, num_threads=threads, seed=0,
                       dataset=files, **LIMITS)
    envs.warn_on_errors = False
    envs.prepare()
    obs, _ = envs.reset(seed=0)
    rngs = generators(num_envs)
    errors = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(max(1, env_steps // num_envs)):
        k = obs["alt_num_choices"]
        actions = np.stack([sample(k[i], rngs[i]) for i in range(num_envs)])
        obs, _, _, _, infos = envs.step(actions)
        errors += int(infos["_error"].sum()) if "error" in infos else 0
    return finish(wall, cpu, max(1, env_steps // num_envs) * num_envs, errors)


def run_loop(files, num_envs: int, env_steps: int) -> dict:
    """num_envs single environments (pools of one) stepped one after another."""
    envs = [hlogym.make("fusion-v0", num_envs=1, num_threads=1, seed=i, dataset=files, **LIMITS)
            for i in range(num_envs)]
    obs = []
    for env in envs:
        env.warn_on_errors = False
        env.prepare()
        obs.append(env.reset(seed=len(obs))[0])
    rngs = generators(num_envs)
    errors = 0
    rounds = max(1, env_steps // num_envs)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for i, env in enumerate(envs):
            obs[i], _, _, _, infos = env.step(sample(obs[i]["alt_num_choices"], rngs[i]))
            errors += "error" in infos
    return finish(wall, cpu, rounds * num_envs, errors)


def finish(wall: float, cpu: float, steps: int, errors: int) -> dict:
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    return dict(steps=steps, steps_per_s=steps / wall, steps_per_cpu_s=steps / cpu,
                errors=errors, load1=os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2048, help="environment steps per configuration")
    parser.add_argument("--envs", type=int, nargs="*", default=[1, 4, 16, 64])
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(ROOT, "data", "corpus", "hlo", "*.hlo")))
    # Every environment prepares all its benchmarks (pre-passes, runtimes)
    # before the clock starts: each make() loads its own benchmark set.
    print(f"{len(files)} corpus modules, {args.steps} env steps per row, "
          f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    print(f"{'what':34s} {'envs':>4s} {'steps/s':>9s} {'steps/cpu_s':>11s} {'errors':>6s} {'load1':>6s}")
    for num_envs in args.envs:
        rows = [(f"python loop over single envs", run_loop(files, num_envs, args.steps))]
        for threads in (1, 2):
            rows.append((f"pool, {threads} thread{'s' * (threads > 1)}",
                         run_pool(files, num_envs, threads, args.steps)))
        for what, r in rows:
            print(f"{what:34s} {num_envs:4d} {r['steps_per_s']:9.1f} {r['steps_per_cpu_s']:11.1f} "
                  f"{r['errors']:6d} {r['load1']:6.2f}", flush=True)


if __name__ == "__main__":
    main()

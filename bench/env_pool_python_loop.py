"""The environment pool from Python against a plain Python loop over single envs.

Same workload as bench/env_pool_bench.cc: fusion-v0 over data/corpus/hlo/*.hlo
with the cost-model reward (fusion-v0's `reward: cost`), random legal actions,
and the same raised limits (so every corpus module fits all episode long).

Like for like: environment i gets seed i and its own action generator in the
pool and in the loop (a "single env" is a vector env of one, the pool's own
code path with no batch around it; `HloGymEnv` would add a copy of every
padded row per step), so both take exactly the same trajectories over the
same modules, and every configuration takes the same number of env steps.
The script checks that: `trajectory` is a digest of every env step's
fingerprint, reward and flags, env by env, and must be equal across a row
group. Steps are reported per second of wall time and per CPU second of the
process (all threads, TBB's workers included); with `--repeats` the
configurations take turns, each turn starting with the next one, so that a
change in the machine's load falls on all of them alike, and the medians are
printed. With one env the loop and the 1-thread pool run the same code: their
gap is the measurement's own spread. On a busy machine only the
CPU column compares; `load1` and the start's `uptime` say how busy it was.

    PYTHONPATH=python .venv/bin/python bench/env_pool_python_loop.py [--steps 2048] [--repeats 3]
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import os
import statistics
import subprocess
import time

import numpy as np

import hlogym

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = dict(max_nodes=32768, max_edges=131072, max_alternatives=2048, max_choices=16)


def sample(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal choice per offered alternative (0 elsewhere),
    from one environment's alt_num_choices row."""
    return (rng.random(k.shape) * k).astype(np.int64)


def generators(num_envs: int) -> list:
    return [np.random.default_rng(100 + i) for i in range(num_envs)]


class Trajectories:
    """Per env, a running digest of what each of its steps returned (outside
    the timed part's hot path: a few bytes per env step)."""

    def __init__(self, num_envs: int):
        self.digests = [hashlib.sha1() for _ in range(num_envs)]

    def add(self, env: int, reward, terminated, truncated, fingerprint) -> None:
        self.digests[env].update(np.array([reward], np.float32).tobytes())
        self.digests[env].update(bytes([bool(terminated), bool(truncated)]))
        self.digests[env].update(np.array([fingerprint], np.uint64).tobytes())

    def digest(self) -> str:
        h = hashlib.sha1()
        for d in self.digests:
            h.update(d.digest())
        return h.hexdigest()[:16]


class PoolRun:
    def __init__(self, files, num_envs: int, threads: int):
        self.num_envs = num_envs
        self.envs = hlogym.make("fusion-v0", num_envs=num_envs, num_threads=threads, seed=0,
                                dataset=files, **LIMITS)
        self.envs.warn_on_errors = False
        self.envs.prepare()

    def run(self, rounds: int) -> dict:
        n = self.num_envs
        obs, _ = self.envs.reset(seed=0)
        rngs = generators(n)
        traj = Trajectories(n)
        errors = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(rounds):
            k = obs["alt_num_choices"]
            actions = np.stack([sample(k[i], rngs[i]) for i in range(n)])
            obs, reward, terminated, truncated, infos = self.envs.step(actions)
            fingerprint = infos["fingerprint"]
            for i in range(n):
                traj.add(i, reward[i], terminated[i], truncated[i], fingerprint[i])
            errors += int(infos["_error"].sum()) if "error" in infos else 0
        return finish(wall, cpu, rounds * n, errors, traj)


class LoopRun:
    """num_envs single environments (vector envs of one) stepped one after another."""

    def __init__(self, files, num_envs: int):
        self.envs = [hlogym.make("fusion-v0", num_envs=1, num_threads=1, seed=i, dataset=files,
                                 **LIMITS) for i in range(num_envs)]
        for env in self.envs:
            env.warn_on_errors = False
            env.prepare()

    def run(self, rounds: int) -> dict:
        obs = [env.reset(seed=i)[0] for i, env in enumerate(self.envs)]
        rngs = generators(len(self.envs))
        traj = Trajectories(len(self.envs))
        errors = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(rounds):
            for i, env in enumerate(self.envs):
                obs[i], reward, terminated, truncated, infos = env.step(
                    sample(obs[i]["alt_num_choices"], rngs[i]))
                traj.add(i, reward[0], terminated[0], truncated[0], infos["fingerprint"][0])
                errors += "error" in infos
        return finish(wall, cpu, rounds * len(self.envs), errors, traj)


def finish(wall: float, cpu: float, steps: int, errors: int, traj: Trajectories) -> dict:
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    return dict(steps=steps, steps_per_s=steps / wall, steps_per_cpu_s=steps / cpu,
                errors=errors, load1=os.getloadavg()[0], trajectory=traj.digest())


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2048, help="environment steps per configuration")
    parser.add_argument("--envs", type=int, nargs="*", default=[1, 4, 16, 64])
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each configuration, taking turns; medians are printed")
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(ROOT, "data", "corpus", "hlo", "*.hlo")))
    print(f"{len(files)} corpus modules, {args.steps} env steps per run, {args.repeats} runs each, "
          f"{os.cpu_count()} cores; {uptime()}")
    print(f"{'what':30s} {'envs':>4s} {'steps/s':>9s} {'steps/cpu_s':>11s} {'(runs)':>11s} "
          f"{'vs loop':>7s} {'errors':>6s}  {'trajectory':16s}  load1 per run")
    for num_envs in args.envs:
        rounds = max(1, args.steps // num_envs)
        # Every environment prepares all its benchmarks (pre-passes,
        # runtimes) before any clock starts: each make() loads its own set.
        configs = [("python loop over single envs", LoopRun(files, num_envs))]
        for threads in (1, 2):
            configs.append((f"pool, {threads} thread{'s' * (threads > 1)}",
                            PoolRun(files, num_envs, threads)))
        results = {what: [] for what, _ in configs}
        for turn in range(args.repeats):
            # Each turn starts one configuration later, so that none always
            # runs first (or right after the 2-thread pool's spinning worker).
            for what, config in configs[turn % 3:] + configs[:turn % 3]:
                results[what].append(config.run(rounds))
        loop_cpu = statistics.median(r["steps_per_cpu_s"] for r in results[configs[0][0]])
        digests = set()
        for what, _ in configs:
            runs = results[what]
            per_s = statistics.median(r["steps_per_s"] for r in runs)
            per_cpu = statistics.median(r["steps_per_cpu_s"] for r in runs)
            loads = ",".join(f"{r['load1']:.2f}" for r in runs)
            spread = f"{min(r['steps_per_cpu_s'] for r in runs):.0f}-" \
                     f"{max(r['steps_per_cpu_s'] for r in runs):.0f}"
            digests.update(r["trajectory"] for r in runs)
            print(f"{what:30s} {num_envs:4d} {per_s:9.1f} {per_cpu:11.1f} {spread:>11s} "
                  f"{per_cpu / loop_cpu:6.2f}x {runs[-1]['errors']:6d}  {runs[-1]['trajectory']}  "
                  f"{loads}", flush=True)
        if len(digests) != 1:
            raise SystemExit(f"{num_envs} envs: the configurations took different trajectories "
                             f"({sorted(digests)}): they do not compare")


if __name__ == "__main__":
    main()

"""How much of a pool's observed graph lies in candidates' fused bodies.

docs/benchmarks.md ("Stop 25: what offers built only when taken would give")
uses this to bound what building a candidate's body only when it is taken
would save: fusion-v0 over the 25 corpus modules, 16 envs, random legal
actions, every observation's nodes counted. A second pool with
observe_candidate_bodies=False takes the same actions: wherever its env is
in the same state (the same fingerprint; the limits apply to its smaller
graph, so a module too large for the first pool may go on in it) its
observation must hold exactly the nodes outside the bodies. Run from the
repository root:

    PYTHONPATH=python .venv/bin/python bench/candidate_body_share.py [STEPS]
"""
import sys
import warnings
from pathlib import Path

import numpy as np

import hlogym

# Columns of node_features and edge_features (docs/observation.md).
COMPUTATION, IS_CANDIDATE = 15, 21
EDGE_TYPE, CALL_EDGE = 1, 2


def candidate_body_nodes(obs, row: int) -> tuple[int, int]:
    """(nodes, nodes in candidates' fused computations) of one row: a body is
    the computation whose root has a call edge into a candidate node."""
    features = obs["node_features"][row]
    n = int(obs["node_mask"][row].sum())
    candidates = np.flatnonzero(features[:n, IS_CANDIDATE] == 1)
    calls = obs["edge_mask"][row].astype(bool) & (obs["edge_features"][row, :, EDGE_TYPE] == CALL_EDGE)
    sources, targets = obs["edge_index"][row, 0][calls], obs["edge_index"][row, 1][calls]
    bodies = np.unique(features[sources[np.isin(targets, candidates)], COMPUTATION])
    return n, int(np.isin(features[:n, COMPUTATION], bodies).sum())


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    files = sorted(str(p) for p in Path("data/corpus/hlo").glob("*.hlo"))
    kwargs = dict(num_envs=16, num_threads=2, seed=0, dataset=files)
    env = hlogym.make("fusion-v0", **kwargs)
    compact = hlogym.make("fusion-v0", observe_candidate_bodies=False, **kwargs)
    obs, info = env.reset(seed=0)
    compact_obs, compact_info = compact.reset(seed=0)
    rng = np.random.default_rng(0)
    total = in_bodies = compared = 0
    warnings.simplefilter("ignore", RuntimeWarning)  # rows over the limits autoreset
    for _ in range(steps):
        for row in range(obs["node_mask"].shape[0]):
            n, b = candidate_body_nodes(obs, row)
            total += n
            in_bodies += b
            if compact_info["fingerprint"][row] == info["fingerprint"][row]:
                kept = int(compact_obs["node_mask"][row].sum())
                if kept != n - b:
                    raise SystemExit(f"row {row}: {kept} nodes without bodies, expected {n - b}")
                compared += 1
        legal = obs["alt_mask"]
        actions = np.zeros(legal.shape[:2], dtype=np.int64)
        for row, alt in zip(*np.nonzero(legal.any(axis=2))):
            actions[row, alt] = rng.choice(np.flatnonzero(legal[row, alt]))
        # Where the two pools' envs are in different states, the compact one
        # keeps the original wherever the choice is not legal for it.
        legal_there = np.take_along_axis(compact_obs["alt_mask"], actions[..., None], axis=2)
        compact_actions = np.where(legal_there[..., 0], actions, 0)
        obs, _, _, _, info = env.step(actions)
        compact_obs, _, _, _, compact_info = compact.step(compact_actions)
    print(f"{steps} steps of 16 envs: {total} nodes observed, {in_bodies} in candidates' "
          f"fused bodies ({100 * in_bodies / total:.1f}%); without bodies, {compared} "
          f"observations of the same states held exactly the other nodes")


if __name__ == "__main__":
    main()

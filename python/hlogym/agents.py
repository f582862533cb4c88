"""Built-in baseline agents (random, greedy, xla, search), implemented in C++.

    agent = hlogym.make_agent("greedy", seed=0)
    envs = hlogym.make("fusion-v0", num_envs=8)
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(agent.act(envs))

Agents read the environments' current graphs in C++ (no observation arrays
needed) and never change them: lookahead works on copies and forks.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from hlogym import _hlogym


def agent_names() -> list[str]:
    """The built-in agents: ['greedy', 'random', 'search', 'xla']."""
    return list(_hlogym.agent_names())


def _pool_of(env: Any) -> "_hlogym.EnvPool":
    """The C++ pool under an HloVectorEnv, HloGymEnv or EnvPool."""
    if isinstance(env, _hlogym.EnvPool):
        return env
    if getattr(env, "closed", False) or getattr(getattr(env, "_vector", None), "closed", False):
        raise RuntimeError("this hlogym env is closed; make a new one")
    pool = getattr(env, "_pool", None)  # HloVectorEnv
    if pool is None:
        vector = getattr(env, "_vector", None)  # HloGymEnv
        pool = getattr(vector, "_pool", None)
    if pool is None:
        unwrapped = getattr(env, "unwrapped", None)
        if unwrapped is not None and unwrapped is not env:
            return _pool_of(unwrapped)
        raise TypeError(f"an agent acts on hlogym envs (HloVectorEnv, HloGymEnv, EnvPool), "
                        f"got {type(env).__name__}")
    return pool


class Agent:
    """A built-in agent, one C++ agent per environment of the pool it acts on
    (environment i's agent is seeded with seed + i)."""

    def __init__(self, spec: str, seed: int = 0):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
                not 0 <= seed < 2 ** 64:
            raise ValueError(f"seed must be a non-negative integer below 2**64, got {seed!r}")
        self._actor = _hlogym.PoolActor(spec, int(seed))
        self.spec = spec
        self.seed = int(seed)

    def __repr__(self) -> str:
        return f"hlogym.Agent({self.spec!r}, seed={self.seed})"

    def act(self, env: Any) -> np.ndarray:
        """Actions for `env`'s current state: [num_envs, max_alternatives] for a
        vector env or EnvPool, [max_alternatives] for a single HloGymEnv."""
        pool = _pool_of(env)
        actions = self._actor.act_pool(pool)
        single = not isinstance(env, _hlogym.EnvPool) and hasattr(env, "_vector")
        return actions[0] if single else actions

    def act_pool(self, env: Any) -> np.ndarray:
        """Actions [num_envs, max_alternatives] for every environment of `env`."""
        return self._actor.act_pool(_pool_of(env))

    def run_episodes(self, env: Any, benchmarks: Iterable[int], *, episodes: int = 1,
                     parallelism: int = 0,
                     on_done: Callable[[dict], None] | None = None,
                     max_seconds: float = 0, max_growth: float = 0,
                     measure_on: str | None = None, hold: bool = False):
        """Whole episodes on forks of `env`'s first environment: `episodes` per
        benchmark index (seeds self.seed, self.seed + 1, ...), up to
        `parallelism` at a time (0: all cores). Returns one dict per episode
        (runtimes, steps, rewrites, the choices of every step, 'error').
        `max_seconds`/`max_growth` stop runaway episodes between steps.
        `measure_on` ('cpu', 'gpu', ...) times the original, default-pipeline
        and final modules there once the episodes are over (a benchmark's
        modules together, interleaved), so that episodes can plan on the fast
        cost model and still report measured runtimes; what the episodes saw
        is kept under 'planned'. `hold=True` returns a HeldEpisodes instead,
        for _hlogym.measure_episodes to time with other agents' episodes.
        Agents with a measurement budget ('search(measure=4)') time their
        candidate end states there too ('measure_seconds' per episode, of
        which 'measure_compile_seconds' compiling); without `measure_on` they
        use the env's own source where it is measured."""
        return run_episodes([self], env, benchmarks, episodes=episodes, parallelism=parallelism,
                            on_done=on_done, max_seconds=max_seconds, max_growth=max_growth,
                            measure_on=measure_on, hold=hold)[0]


# What 0 means for run_episodes' counts and bounds.
_ZERO_MEANS = {"episodes": "none", "parallelism": "all cores", "max_seconds": "no bound",
               "max_growth": "no bound"}


def run_episodes(agents: Iterable[Agent], env: Any, benchmarks: Iterable[int], *,
                 episodes: int = 1, parallelism: int = 0,
                 on_done: Callable[[dict], None] | None = None,
                 max_seconds: float = 0, max_growth: float = 0,
                 measure_on: str | None = None, hold: bool = False) -> list:
    """Agent.run_episodes for several agents at once: one list of episode
    dicts (or one HeldEpisodes with `hold`) per agent, in the agents' order.
    The episodes of all agents share the cores, longest first, so that one
    long episode does not leave the others idle at the end of its agent's
    turn; a search(measure=k) timing its candidates pauses the others' steps.
    The results are the same as one agent after the other."""
    agents = list(agents)
    benchmarks = [int(b) for b in benchmarks]
    for name, value in (("episodes", episodes), ("parallelism", parallelism),
                        ("max_seconds", max_seconds), ("max_growth", max_growth)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0 (0: {_ZERO_MEANS[name]}), got {value!r}")
    tasks = [(b, agent.seed + e, i) for i, agent in enumerate(agents)
             for b in benchmarks for e in range(int(episodes))]
    return _hlogym.run_episodes(_pool_of(env), [agent.spec for agent in agents], tasks,
                                int(parallelism), on_done, float(max_seconds), float(max_growth),
                                measure_on or "", bool(hold))


def make_agent(spec: str, seed: int = 0) -> Agent:
    """A built-in agent from a spec: 'random', 'greedy', 'xla', 'search' or
    with options, e.g. 'search(budget=64, beam=4)'. Unknown names raise ValueError."""
    return Agent(spec, seed)

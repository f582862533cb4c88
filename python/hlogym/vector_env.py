"""hlogym's Gymnasium environments over the C++ environment pool.

`HloVectorEnv` is a real `gymnasium.vector.VectorEnv`: batched dict
observations (padded graph arrays, views of C++ buffers), a `MultiDiscrete`
action of one choice per alternative slot, next-step autoreset, `reset_mask`
partial resets and `reset(seed=...)`. `HloGymEnv` is one environment as a
`gymnasium.Env`.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hlogym import _hlogym
from hlogym.config import EnvConfig, load_config
from hlogym.dataset import resolve_dataset

#: Observation arrays, in the order the pool returns them.
OBSERVATION_KEYS = (
    "node_features", "node_opcode", "node_mask", "edge_index", "edge_features",
    "edge_mask", "in_edge_offsets", "alt_nodes", "alt_valid", "alt_num_choices",
    "alt_mask",
)
#: Per-environment arrays that go into `infos`.
INFO_KEYS = (
    "env_id", "elapsed_step", "benchmark", "num_alternatives", "rewrites_applied",
    "original_runtime", "default_runtime", "current_runtime", "fingerprint",
)


def observation_space(config: EnvConfig) -> spaces.Dict:
    """The observation space of one environment under `config`."""
    n, e = config.max_nodes, config.max_edges
    a, k = config.max_alternatives, config.max_choices
    f_node, f_edge = _hlogym.NODE_FEATURE_COUNT, _hlogym.EDGE_FEATURE_COUNT
    inf = np.float32(np.inf)
    i32 = np.int32
    return spaces.Dict({
        "node_features": spaces.Box(-inf, inf, (n, f_node), np.float32),
        "node_opcode": spaces.Box(-1, _hlogym.NUM_OPCODES - 1, (n,), i32),
        "node_mask": spaces.Box(0, 1, (n,), np.bool_),
        "edge_index": spaces.Box(-1, n - 1, (2, e), i32),
        "edge_features": spaces.Box(-inf, inf, (e, f_edge), np.float32),
        "edge_mask": spaces.Box(0, 1, (e,), np.bool_),
        "in_edge_offsets": spaces.Box(0, e, (n + 1,), i32),
        "alt_nodes": spaces.Box(-1, n - 1, (a,), i32),
        "alt_valid": spaces.Box(0, 1, (a,), np.bool_),
        "alt_num_choices": spaces.Box(0, k, (a,), i32),
        "alt_mask": spaces.Box(0, 1, (a, k), np.bool_),
    })


def _checked_seed(seed: Any) -> int | None:
    """`seed` as the C++ side takes it (an unsigned 64-bit integer), or a
    ValueError rather than pybind11's signature mismatch."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= seed < 2 ** 64:
        raise ValueError(f"seed must be None or a non-negative integer below 2**64, got {seed!r}")
    return int(seed)


def _make_pool(config: EnvConfig, files: Sequence[str], num_envs: int, batch_size: int,
               num_threads: int, seed: int) -> "_hlogym.EnvPool":
    return _hlogym.EnvPool(
        id=config.id, files=list(files), pre_passes=config.pre_passes,
        dry_passes=config.dry_passes, dry_stages=config.dry_stages,
        post_passes=config.post_passes,
        max_steps=config.max_steps, max_nodes=config.max_nodes,
        max_edges=config.max_edges, max_alternatives=config.max_alternatives,
        max_choices=config.max_choices,
        observe_candidate_bodies=config.observe_candidate_bodies, reward=config.reward,
        num_envs=num_envs,
        batch_size=batch_size, num_threads=num_threads, seed=seed)


class HloVectorEnv(VectorEnv):
    """`num_envs` HLO rewrite environments stepped in parallel by C++.

    Observations are dicts of arrays with a leading batch axis. The action is
    an int array `[num_envs, max_alternatives]`: for each alternative slot the
    chosen operand (0 keeps the original); slots where `alt_valid` is false are
    ignored. Rewards are relative runtime improvements: an episode's rewards
    sum to its total speedup relative to the original runtime.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, env_id: str = "fusion-v0", num_envs: int = 1, *,
                 num_threads: int | None = None, seed: int = 0,
                 batch_size: int | None = None, dataset: Any = None,
                 split: str = "all", **overrides: Any):
        self.config = load_config(env_id, overrides)
        self.files = resolve_dataset(dataset if dataset is not None else self.config.dataset,
                                     split)
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        if seed is None:
            seed = 0
        self._pool = _make_pool(self.config, self.files, self.num_envs,
                                int(batch_size or 0), int(num_threads or 0), _checked_seed(seed))
        self.single_observation_space = observation_space(self.config)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        a, k = self.config.max_alternatives, self.config.max_choices
        self.single_action_space = spaces.MultiDiscrete(np.full(a, k, dtype=np.int64))
        self.action_space = spaces.MultiDiscrete(np.full((self.num_envs, a), k, dtype=np.int64))
        self.spec = None
        self.render_mode = None
        self.closed = False
        #: Whether a failed reset or step (also in infos["error"]) warns.
        self.warn_on_errors = True

    # -- Gymnasium API ---------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        mask: list[bool] = []
        if options:
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; only 'reset_mask' is supported")
            reset_mask = np.asarray(options["reset_mask"])
            if reset_mask.dtype != np.bool_ or reset_mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},), "
                                 f"got {reset_mask.dtype} {reset_mask.shape}")
            if not reset_mask.any():
                raise ValueError("reset_mask must select at least one environment")
            mask = reset_mask.tolist()
        out = self._live_pool().reset(_checked_seed(seed), mask)
        return self._observation(out), self._infos(out)

    def step(self, actions):
        actions = self._check_actions(actions, self.num_envs)
        out = self._live_pool().step(actions)
        return (self._observation(out), out["reward"], out["terminated"], out["truncated"],
                self._infos(out))

    # -- EnvPool-style asynchronous API ---------------------------------------
    def send(self, actions, env_ids=None):
        """Queues steps for `env_ids` (all envs by default); results come from recv()."""
        if env_ids is None:
            ids = np.arange(self.num_envs, dtype=np.int32)
        else:
            ids = np.asarray(env_ids).reshape(-1)
            # A cast would send env 0.5's step to env 0.
            if ids.size and not np.issubdtype(ids.dtype, np.integer):
                raise ValueError(f"env_ids must be integers, got dtype {ids.dtype}")
            ids = ids.astype(np.int32)
        self._live_pool().send(self._check_actions(actions, len(ids)), ids)

    def async_reset(self):
        """Queues a reset of every environment; results come from recv()."""
        self._live_pool().async_reset()

    def recv(self):
        """The next batch_size results, as (obs, rewards, terminations, truncations, infos);
        infos["env_id"] says which environment each row belongs to."""
        out = self._live_pool().recv()
        return (self._observation(out), out["reward"], out["terminated"], out["truncated"],
                self._infos(out))

    # -- Research helpers -------------------------------------------------------
    def module(self, env_id: int) -> "_hlogym.HloModule":
        """A copy of environment `env_id`'s current module (with its alternatives)."""
        return self._live_pool().module(env_id)

    def state(self, env_id: int) -> dict:
        """Enough to replay the episode: benchmark file, choices per step, rewards."""
        record = self._live_pool().record(env_id)
        record["benchmark_file"] = self.files[record["benchmark"]] if record["benchmark"] >= 0 else None
        return record

    def info(self, env_id: int) -> dict:
        """Environment `env_id`'s episode facts: runtimes, fingerprint, step, ..."""
        return self._live_pool().info(env_id)

    def fork(self, env_id: int) -> "ForkedEnv":
        """A copy of environment `env_id` as it stands now (mid-episode), stepped on
        its own: the fork and the pool's environment go on independently."""
        return ForkedEnv(self._live_pool().fork(env_id), self.config, self.files)

    def prepare(self) -> None:
        """Prepares every benchmark now (pre-passes, original and default runtimes)
        rather than at its first draw, so that later steps take no such pause."""
        self._live_pool().prepare()

    @property
    def benchmark_names(self) -> list[str]:
        return self._live_pool().benchmark_names

    def close_extras(self, **kwargs):
        self._pool = None

    # -- internals ----------------------------------------------------------------
    def _live_pool(self) -> "_hlogym.EnvPool":
        if self._pool is None:
            raise RuntimeError("this hlogym env is closed; make a new one")
        return self._pool

    def _check_actions(self, actions, rows: int) -> np.ndarray:
        array = np.asarray(actions)
        width = self.config.max_alternatives
        if not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"actions must be integers, got dtype {array.dtype}")
        if array.shape != (rows, width):
            raise ValueError(f"actions must have shape ({rows}, {width}) "
                             f"[envs, max_alternatives], got {array.shape}")
        return np.ascontiguousarray(array, dtype=np.int64)

    @staticmethod
    def _observation(out: dict) -> dict:
        return {key: out[key] for key in OBSERVATION_KEYS}

    def _infos(self, out: dict) -> dict:
        infos: dict[str, Any] = {}
        # Copies of one mask: np.ones per key was a third of this wrapper's
        # time per step.
        every_row = np.ones(len(out["env_id"]), dtype=np.bool_)
        for key in INFO_KEYS:
            infos[key] = out[key]
            infos["_" + key] = every_row.copy()
        errors = out["errors"]
        if any(errors):
            # An environment whose reset or step failed (a graph over the
            # config's limits, say) is truncated, unchanged, and resets at its
            # next step; the others went on. Say so rather than let it pass.
            infos["error"] = np.array(errors, dtype=object)
            infos["_error"] = np.array([bool(e) for e in errors])
            for env_id, error in zip(out["env_id"], errors):
                if error and self.warn_on_errors:
                    warnings.warn(f"hlogym env {int(env_id)}: {error}", RuntimeWarning, stacklevel=3)
        return infos


class ForkedEnv:
    """One environment forked from a pool mid-episode (`HloVectorEnv.fork`).

    It holds its own copy of the module, step count, episode record and random
    generator, so it and the pool's environment go on independently. `step`
    takes an action row like the pool's (`[max_alternatives]`, slots past the
    offered alternatives ignored) and returns Gymnasium's 5-tuple; it raises
    (leaving the fork unchanged) on an illegal choice or a graph over the limits.
    """

    def __init__(self, raw: "_hlogym.RewriteEnv", config: EnvConfig, files: Sequence[str]):
        self._env = raw
        self.config = config
        self.files = list(files)

    def step(self, action):
        action = np.asarray(action)
        width = self.config.max_alternatives
        if not np.issubdtype(action.dtype, np.integer) or action.shape != (width,):
            raise ValueError(f"action must be an integer array of shape ({width},), "
                             f"got {action.dtype} {action.shape}")
        reward = self._env.step(action[:len(self._env.choice_counts)])
        info = self.info()
        return self.observation(), float(reward), info["terminated"], info["truncated"], info

    def reset(self, *, seed: int | None = None, benchmark: int | None = None):
        """Starts a new episode (on benchmark index `benchmark`, or a drawn one)."""
        self._env.reset(_checked_seed(seed), benchmark)
        return self.observation(), self.info()

    def observation(self) -> dict:
        return self._env.observe()

    def info(self) -> dict:
        return self._env.info()

    def state(self) -> dict:
        record = self._env.record()
        record["benchmark_file"] = self.files[record["benchmark"]] if record["benchmark"] >= 0 else None
        return record

    def module(self) -> "_hlogym.HloModule":
        return self._env.module()

    def fork(self) -> "ForkedEnv":
        return ForkedEnv(self._env.fork(), self.config, self.files)


class HloGymEnv(gym.Env):
    """One HLO rewrite environment as a `gymnasium.Env` (a pool of one).

    `invalid_choices="raise"` (the default) rejects a choice outside `alt_mask`;
    `"original"` keeps the original there instead, so that unmasked samplers
    (such as gymnasium's env checker) can drive it.
    """

    metadata = {"render_modes": []}

    def __init__(self, env_id: str = "fusion-v0", *, seed: int = 0, dataset: Any = None,
                 split: str = "all", invalid_choices: str = "raise",
                 render_mode: str | None = None, **overrides: Any):
        # gymnasium.make passes render_mode on; there is nothing to render.
        if render_mode is not None:
            raise ValueError(f"render_mode {render_mode!r} is not supported: hlogym envs do not "
                             f"render (metadata['render_modes'] is empty)")
        self.render_mode = None
        if invalid_choices not in ("raise", "original"):
            raise ValueError(f"invalid_choices must be 'raise' or 'original', got {invalid_choices!r}")
        self._invalid_choices = invalid_choices
        self._last_obs = None
        self._vector = HloVectorEnv(env_id, 1, num_threads=1, seed=seed, dataset=dataset,
                                    split=split, **overrides)
        self._vector.warn_on_errors = False  # raised instead
        self.config = self._vector.config
        self.observation_space = self._vector.single_observation_space
        self.action_space = self._vector.single_action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if options:
            # The pool's only option, reset_mask, means nothing for one env.
            raise ValueError(f"unknown reset options {sorted(options)}; a single env takes none")
        super().reset(seed=_checked_seed(seed))
        obs, infos = self._vector.reset(seed=seed)
        self._raise_error(infos)
        self._last_obs = self._row(obs)
        return self._last_obs, self._info_row(infos)

    def step(self, action):
        action = np.asarray(action)
        width = self.config.max_alternatives
        if action.shape != (width,):
            raise ValueError(f"action must have shape ({width},) [max_alternatives], "
                             f"got {action.shape}")
        if self._invalid_choices == "original" and self._last_obs is not None:
            legal = (action >= 0) & (action < self._last_obs["alt_num_choices"])
            action = np.where(legal, action, 0)
        obs, reward, terminated, truncated, infos = self._vector.step(action[None])
        self._raise_error(infos)
        self._last_obs = self._row(obs)
        return (self._last_obs, float(reward[0]), bool(terminated[0]), bool(truncated[0]),
                self._info_row(infos))

    def module(self):
        return self._vector.module(0)

    def fork(self) -> ForkedEnv:
        """The environment as it stands, to be stepped independently."""
        return self._vector.fork(0)

    @staticmethod
    def _raise_error(infos: dict) -> None:
        # A single environment has no other rows to keep going: its reset or
        # step failed (the environment is unchanged), so raise.
        if "error" in infos and infos["error"][0]:
            raise RuntimeError(f"{infos['error'][0]}; call reset() to go on")

    @staticmethod
    def _row(obs: dict) -> dict:
        return {key: value[0].copy() for key, value in obs.items()}

    @staticmethod
    def _info_row(infos: dict) -> dict:
        return {key: value[0] for key, value in infos.items() if not key.startswith("_")}


def make(env_id: str = "fusion-v0", num_envs: int = 1, num_threads: int | None = None,
         seed: int = 0, **overrides: Any) -> HloVectorEnv:
    """A pool of `num_envs` environments configured by configs/ENV_ID.yaml.

    `overrides` replace config keys (max_steps=..., reward=..., dataset=... as a
    directory, one HLO file or a list of them, split='train'|'test'|'all',
    observe_candidate_bodies=False for observations without the candidates'
    fused computations); see docs/observation.md, "Making environments".
    """
    return HloVectorEnv(env_id, num_envs, num_threads=num_threads, seed=seed, **overrides)

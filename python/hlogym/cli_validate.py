"""`hlogym validate FILE [--decisions FILE]`: replays an episode's decisions
and checks with the reference interpreter that the result computes what the
original module computes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hlogym.cli_common import CliError, make_env
from hlogym.cli_inspect import load_module


def _episodes_for(payload: dict, file: str, module_name: str, agent: str | None) -> list:
    """The episodes recorded for `file` in a rollout or compare JSON."""
    if "agents" in payload:
        agents = payload["agents"]
        if agent is None:
            agent = next(iter(agents))
        if agent not in agents:
            raise CliError(f"no agent {agent!r} in the decisions file; it has: "
                           f"{', '.join(agents)}")
        modules = agents[agent]
    else:
        recorded = payload.get("agent")
        if agent is not None and recorded is not None and agent != recorded:
            raise CliError(f"--agent {agent}: the decisions file holds {recorded}'s episodes")
        modules = payload.get("modules", [])
    target = Path(file).resolve()
    for entry in modules:
        same_file = entry.get("file") and Path(entry["file"]).resolve() == target
        if same_file or entry.get("module") == module_name:
            return entry["episodes"]
    raise CliError(f"the decisions file has no episodes for {file}")


def _is_choice_lists(value) -> bool:
    # JSON true/false are Python bools, which are ints: not choices.
    return isinstance(value, list) and all(
        isinstance(step, list) and
        all(isinstance(c, int) and not isinstance(c, bool) for c in step) for step in value)


def load_decisions(path: str, file: str, module_name: str, agent: str | None):
    """Per-step choice lists, the fingerprint recorded with them and the env
    they were made on (both None for a bare list)."""
    try:
        payload = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CliError(f"file not found: {path}") from None
    except (OSError, json.JSONDecodeError) as e:
        raise CliError(f"{path}: not a JSON file ({e})") from None
    if isinstance(payload, dict):
        try:
            episodes = [e for e in _episodes_for(payload, file, module_name, agent)
                        if not e["error"]]
            if not episodes:
                raise CliError(f"every recorded episode of {file} failed; nothing to replay")
            best = min(episodes, key=lambda e: e["final_runtime"])
            choices = best["choices"]
        except (KeyError, TypeError, AttributeError) as e:
            what = f"no key {e}" if isinstance(e, KeyError) else str(e)
            raise CliError(f"{path}: not the --out file of rollout/compare ({what})") from None
        if not _is_choice_lists(choices):
            raise CliError(f"{path}: not the --out file of rollout/compare (its choices are not "
                           f"per-step lists of integers)")
        return choices, best.get("fingerprint"), payload.get("env")
    if agent is not None:
        raise CliError(f"--agent {agent}: {path} names no agents (it is not the --out file "
                       f"of compare)")
    if not _is_choice_lists(payload):
        raise CliError(f"{path}: expected a JSON list of per-step choice lists "
                       f"(or the --out file of rollout/compare)")
    return payload, None, None


def replay(env, decisions: list, mismatch: str = "") -> None:
    width = env.config.max_alternatives
    env.reset(seed=0)
    for i, step in enumerate(decisions):
        if env.info(0)["terminated"] or env.info(0)["truncated"]:
            raise CliError(f"the episode ended after {i} steps but there are {len(decisions)} "
                           f"steps of decisions{mismatch}")
        offered = int(env.info(0)["num_alternatives"])
        if len(step) > offered:
            # The pool ignores slots past the offered alternatives; a file with
            # more choices than that was made on another module, env or step.
            raise CliError(f"step {i}: {len(step)} choices but the env offers {offered} "
                           f"alternatives{mismatch}")
        action = np.zeros((1, width), dtype=np.int64)
        action[0, :len(step)] = step
        try:
            env.step(action)
        except ValueError as e:
            raise CliError(f"step {i}: {e}{mismatch}") from None


def cmd_validate(args) -> int:
    import hlogym

    module = load_module(args.file)
    recorded_fingerprint = recorded_env = None
    if args.decisions:
        decisions, recorded_fingerprint, recorded_env = load_decisions(
            args.decisions, args.file, module.name, args.agent)
        source = f"decisions from {args.decisions}"
    # A choice indexes the alternatives its env's dry passes offered, so the
    # decisions replay on the env they were recorded on unless told otherwise.
    env_id = args.env or recorded_env or "fusion-v0"
    mismatch = (f" (they were recorded on {recorded_env}, replayed on {env_id})"
                if recorded_env and recorded_env != env_id else "")
    if not args.decisions:
        agent = args.agent or "greedy"
        env = make_env(env_id, [args.file], "cost", None)
        try:
            episode = hlogym.make_agent(agent).run_episodes(env, [0])[0]
        except ValueError as e:
            raise CliError(str(e)) from None
        if episode["error"]:
            raise CliError(f"the {agent} episode failed: {episode['error']}")
        decisions = episode["choices"]
        source = f"a {agent} episode (cost model)"
    from hlogym.config import load_config

    try:
        max_steps = max(load_config(env_id).max_steps, len(decisions), 1)
    except ValueError as e:
        raise CliError(str(e)) from None
    env = make_env(env_id, [args.file], "cost", max_steps)
    replay(env, decisions, mismatch)
    final = env.module(0)
    hlogym.apply_choices(final, [0] * len(hlogym.alternatives(final)))
    info = env.info(0)
    rewrites = sum(1 for step in decisions for c in step if c)
    print(f"replayed {len(decisions)} steps ({rewrites} rewrites) of {source} on {args.file} "
          f"on {env_id}")
    if recorded_fingerprint is not None and recorded_fingerprint != info["fingerprint"]:
        print(f"warning: final fingerprint {info['fingerprint']} differs from the recorded "
              f"{recorded_fingerprint}{mismatch}")
    try:
        report = hlogym.equivalent(module, final)
    except (ValueError, NotImplementedError, RuntimeError) as e:
        raise CliError(f"the reference interpreter cannot run {args.file}: {e}") from None
    if report["equivalent"]:
        print(f"equivalent: yes (the reference interpreter gives the same outputs; "
              f"{final.instruction_count} instructions after, {module.instruction_count} before)")
        return 0
    print(f"equivalent: NO: {report['message']}")
    return 1


def add_validate_parser(sub) -> None:
    p = sub.add_parser("validate", help="replay decisions and check the result with the "
                                        "reference interpreter")
    p.add_argument("file", help="the .hlo file the decisions were made on")
    p.add_argument("--decisions", help="JSON: a list of per-step choice lists, or the --out "
                                       "file of rollout/compare (its best episode is replayed)")
    p.add_argument("--env", help="the env to replay on (default: the one the decisions file "
                                 "names, else fusion-v0)")
    p.add_argument("--agent", help="without --decisions: the agent whose episode to check "
                                   "(default greedy); with a compare file: whose decisions")
    p.set_defaults(run=cmd_validate)

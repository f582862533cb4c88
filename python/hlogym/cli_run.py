"""`hlogym rollout` and `hlogym compare`: built-in agents through whole
episodes on a dataset, then a table per module (and a bar chart)."""
from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

from hlogym.cli_common import (BACKENDS, CliError, backend_label, check_agent, dataset_files,
                               format_table, geomean, make_env, ratio, resolve_backend,
                               split_agents, us)


def add_common_arguments(p) -> None:
    p.add_argument("--env", default="fusion-v0", help="env id (configs/ENV.yaml) or a YAML path")
    p.add_argument("--backend", default="auto", metavar="{auto,cost,cost:cpu,cpu,gpu}",
                   help="where runtimes come from (auto: gpu, else cpu, else the cost model); "
                        "cpu and gpu take measurement options, e.g. 'cpu(max_seconds=0.1)'")
    p.add_argument("--reward-backend", metavar="{auto,cost,cost:cpu,cpu,gpu}",
                   help="where the episodes' rewards and the agents' lookahead come from "
                        "(default: --backend); when it differs, each module's original, "
                        "default-pipeline and final runtimes are measured on --backend "
                        "after the episodes, a module's row together (interleaved)")
    p.add_argument("--dataset", nargs="+", metavar="PATH",
                   help="directories and/or .hlo files (default: the env's dataset)")
    p.add_argument("--limit", type=int, help="use only the first N modules (sorted by path)")
    p.add_argument("--max-instructions", type=int,
                   help="skip modules with more instructions than this after the env's pre-passes")
    p.add_argument("--num-envs", type=int, default=0,
                   help="episodes run at once (default: one per core)")
    p.add_argument("--episodes", type=int, default=1,
                   help="episodes per module; the table shows the best")
    p.add_argument("--max-steps", type=int, help="override the env's max_steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-budget", type=float,
                   help="seconds: start no new modules after this (the table shows those done); "
                        "modules then run taking each family (name prefix) in turn")
    p.add_argument("--episode-timeout", type=float, default=60,
                   help="seconds: stop an episode between steps after this, keeping its state "
                        "(0: no limit)")
    p.add_argument("--max-growth", type=float, default=16,
                   help="stop an episode once its module has this many times the instructions "
                        "it started with (duplicating fusions can grow it step after step; 0: no limit)")
    p.add_argument("--out", help="write every episode (with its choices) to this JSON file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


class _Progress:
    """A tqdm bar when tqdm is installed and wanted, else nothing."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="episode", file=sys.stderr, leave=False)
            except ImportError:
                self.bar = None

    def describe(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_description(text)

    def update(self, _result=None) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _check_numbers(args) -> None:
    """Numbers outside their range are bad input, not a quiet default."""
    at_least_one = {"--episodes": args.episodes, "--limit": args.limit,
                    "--max-steps": args.max_steps, "--max-instructions": args.max_instructions}
    for flag, value in at_least_one.items():
        if value is not None and value < 1:
            raise CliError(f"{flag} must be at least 1, got {value}")
    not_negative = {"--num-envs": args.num_envs, "--seed": args.seed,
                    "--episode-timeout": args.episode_timeout, "--max-growth": args.max_growth}
    for flag, value in not_negative.items():
        if value < 0:
            raise CliError(f"{flag} must not be negative, got {value:g}")
    if args.time_budget is not None and not args.time_budget >= 0:
        raise CliError(f"--time-budget must not be negative, got {args.time_budget:g}")


def _setup(args, agents: list[str]):
    _check_numbers(args)
    for spec in agents:
        check_agent(spec)
    backend = resolve_backend(args.backend)
    reward = resolve_backend(args.reward_backend) if args.reward_backend else backend
    args.reward_source = reward
    args.measure_on = backend if reward != backend else None
    # The table's rows are timed together on --backend after the episodes
    # where it measures, also when the episodes measured there: each agent's
    # modules were then timed as its episodes ran, minutes apart.
    args.time_rows = args.measure_on is not None or backend.partition("(")[0] in ("cpu", "gpu")
    from hlogym.config import load_config

    try:
        default_dataset = load_config(args.env).dataset
    except ValueError as e:
        raise CliError(str(e)) from None
    files = dataset_files(args.dataset, default_dataset, None)
    args.all_files = len(files)
    args.too_big = []
    if args.max_instructions:
        files, args.too_big = _small_enough(files, args.env, args.max_instructions)
    if args.limit:
        files = files[:args.limit]
    if args.time_budget is not None:
        files = interleave_families(files)
    env = make_env(args.env, files, reward, args.max_steps)
    return backend, files, env


def interleave_families(files: list[str]) -> list[str]:
    """`files` taking each family in turn (the name up to its first '_':
    act_*, flax_*, optax_*, ...), so that a run cut short by --time-budget
    covers every family rather than the first ones in alphabetical order."""
    families: dict[str, list[str]] = {}
    for path in files:
        families.setdefault(Path(path).stem.split("_")[0], []).append(path)
    queues = [list(reversed(members)) for _, members in sorted(families.items())]
    order = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop())
    return order


def by_module_name(results: dict, done: int) -> dict:
    """`results` with the modules done in the order of their names (they may
    have run in another order)."""
    first = next(iter(results.values()))
    order = sorted(range(done), key=lambda m: _module_name(first[m][0]))
    return {a: [per_module[m] for m in order] for a, per_module in results.items()}


def _small_enough(files: list[str], env_id: str,
                  limit: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The files whose module has at most `limit` instructions after the env's
    pre-passes, and (name, instructions) of the others."""
    import hlogym
    from hlogym.config import load_config

    pre_passes = load_config(env_id).pre_passes
    kept, too_big = [], []
    for path in files:
        try:
            module = hlogym.HloModule.from_text(Path(path).read_text())
            for spec in pre_passes:
                hlogym.run_pass(module, spec)
        except (hlogym.HloParseError, hlogym.HloVerifyError, ValueError, RuntimeError) as e:
            raise CliError(f"{path}: {e}") from None
        if module.instruction_count <= limit:
            kept.append(path)
        else:
            too_big.append((Path(path).stem, module.instruction_count))
    if not kept:
        raise CliError(f"no module has at most {limit} instructions")
    return kept, too_big


def run_agents(env, agents: list[str], num_modules: int, args) -> tuple[dict, int]:
    """{agent: [[episode result, ...] per module]} for the modules done, and how
    many modules were done (all of them unless --time-budget ran out)."""
    import hlogym
    from hlogym import _hlogym

    started = time.perf_counter()
    parallelism = args.num_envs or 0
    # With a time budget, modules go in chunks (all agents per chunk) so that
    # the table has whole rows when the budget runs out.
    cores = parallelism or os.cpu_count() or 1
    # Chunks of 8 per core (when one agent's episodes ran after another's,
    # smaller ones left a core idle at the end of each agent's turn for a
    # fifth of the episodes' time; side by side, a chunk's end still waits
    # for its longest episode).
    chunk = num_modules if args.time_budget is None else 8 * cores
    results = {spec: [] for spec in agents}
    progress = _Progress(num_modules * args.episodes * len(agents), not args.no_progress)
    progress.describe("episodes")
    # Wall time of the episodes (every agent's side by side) and of timing the
    # table's rows on --backend after them; the episodes' own seconds per agent
    # are in their results.
    args.episodes_seconds = 0.0
    args.table_seconds = 0.0
    time_rows = getattr(args, "time_rows", bool(args.measure_on))
    made = [hlogym.make_agent(spec, seed=args.seed) for spec in agents]
    done = 0
    try:
        while done < num_modules:
            if args.time_budget is not None and time.perf_counter() - started > args.time_budget:
                break
            modules = range(done, min(num_modules, done + chunk))
            # The end states stay in C++ (hold) until the chunk's episodes of
            # every agent are over: then each row's modules are timed together.
            call_start = time.perf_counter()
            held = hlogym.run_episodes(made, env, modules, episodes=args.episodes,
                                       parallelism=parallelism, on_done=progress.update,
                                       max_seconds=args.episode_timeout,
                                       max_growth=args.max_growth, measure_on=args.measure_on,
                                       hold=time_rows)
            args.episodes_seconds += time.perf_counter() - call_start
            if time_rows:
                progress.describe("timing the rows")
                table_start = time.perf_counter()
                per_agent = _hlogym.measure_episodes(held, args.measure_on or "")
                args.table_seconds += time.perf_counter() - table_start
                progress.describe("episodes")
            else:
                per_agent = held
            for spec, episodes in zip(agents, per_agent):
                for m in range(len(modules)):
                    results[spec].append(episodes[m * args.episodes:(m + 1) * args.episodes])
            done = modules.stop
    finally:
        progress.close()
    return results, done


def best_episode(episodes: list[dict]) -> dict:
    """The episode with the lowest final runtime; the first error if all failed."""
    ok = [e for e in episodes if not e["error"]]
    return min(ok, key=lambda e: e["final_runtime"]) if ok else episodes[0]


def _module_name(result: dict) -> str:
    return result["benchmark_name"]


def rollout_table(module_results: list[list[dict]]) -> str:
    header = ["module", "original us", "default us", "final us", "vs original", "vs default",
              "steps", "rewrites"]
    rows, originals, defaults, finals, steps, rewrites = [], [], [], [], [], []
    for episodes in module_results:
        e = best_episode(episodes)
        if e["error"]:
            rows.append([_module_name(e), "-", "-", "error: " + e["error"][:60], "", "", "", ""])
            continue
        o, d, f = e["original_runtime"], e["default_runtime"], e["final_runtime"]
        originals.append(o), defaults.append(d), finals.append(f)
        steps.append(e["steps"]), rewrites.append(e["rewrites_applied"])
        rows.append([_module_name(e), us(o), us(d), us(f), ratio(o / f if f else math.nan),
                     ratio(d / f if f else math.nan), str(e["steps"]), str(e["rewrites_applied"])])
    footer = []
    if finals:
        go, gd, gf = geomean(originals), geomean(defaults), geomean(finals)
        footer.append([f"geomean ({len(finals)} modules; steps, rewrites: mean)", us(go), us(gd), us(gf),
                       ratio(geomean(o / f for o, f in zip(originals, finals))),
                       ratio(geomean(d / f for d, f in zip(defaults, finals))),
                       f"{sum(steps) / len(steps):.1f}", f"{sum(rewrites) / len(rewrites):.1f}"])
    return format_table(header, rows, footer)


def compare_table(results: dict, done: int) -> tuple[str, dict]:
    """The table and, per agent, the geomean speedups over default and original."""
    agents = list(results)
    header = ["module", "original us", "default us"] + [f"{a} us" for a in agents]
    rows = []
    per_agent = {a: {"vs_default": [], "vs_original": [], "wins": 0, "losses": 0} for a in agents}
    originals, defaults = [], []
    for m in range(done):
        bests = {a: best_episode(results[a][m]) for a in agents}
        first = next(iter(bests.values()))
        row = [_module_name(first), us(first["original_runtime"]), us(first["default_runtime"])]
        originals.append(first["original_runtime"])
        defaults.append(first["default_runtime"])
        for a in agents:
            e = bests[a]
            if e["error"]:
                row.append("error")
                continue
            f = e["final_runtime"]
            row.append(us(f))
            per_agent[a]["vs_default"].append(e["default_runtime"] / f if f else math.nan)
            per_agent[a]["vs_original"].append(e["original_runtime"] / f if f else math.nan)
            per_agent[a]["wins"] += f < e["default_runtime"] * (1 - 1e-9)
            per_agent[a]["losses"] += f > e["default_runtime"] * (1 + 1e-9)
        rows.append(row)
    summary = {a: {"speedup_vs_default": geomean(s["vs_default"]),
                   "speedup_vs_original": geomean(s["vs_original"]),
                   "faster_than_default": s["wins"], "slower_than_default": s["losses"]}
               for a, s in per_agent.items()}
    footer = [
        ["geomean speedup vs default", "", ""] +
        [ratio(summary[a]["speedup_vs_default"]) for a in agents],
        ["geomean speedup vs original", "", ""] +
        [ratio(summary[a]["speedup_vs_original"]) for a in agents],
        ["modules faster / slower than default", "", ""] +
        [f"{summary[a]['faster_than_default']} / {summary[a]['slower_than_default']}"
         for a in agents],
    ]
    return format_table(header, rows, footer), summary


def _pyplot():
    """matplotlib.pyplot on the Agg backend; a CliError where it is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CliError("--plot needs matplotlib (pip install matplotlib)") from None
    return plt


def plot_compare(results: dict, done: int, summary: dict, path: str, title: str) -> None:
    plt = _pyplot()
    agents = list(results)
    names = [best_episode(results[agents[0]][m])["benchmark_name"] for m in range(done)]
    show_modules = done <= 40
    labels = (names if show_modules else []) + ["geomean"]
    width = 0.8 / max(1, len(agents))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(labels) * max(1, len(agents)) ** 0.5 + 2),
                                    4.5))
    for i, a in enumerate(agents):
        values = []
        if show_modules:
            for m in range(done):
                e = best_episode(results[a][m])
                values.append(e["default_runtime"] / e["final_runtime"]
                              if not e["error"] and e["final_runtime"] else 0.0)
        values.append(summary[a]["speedup_vs_default"])
        xs = [x + (i - (len(agents) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, values, width, label=a)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("speedup over the default pipeline")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e}") from None
    finally:
        plt.close(fig)


def _write_json(path: str, payload: dict) -> None:
    try:
        Path(path).write_text(json.dumps(payload, indent=1))
    except OSError as e:
        raise CliError(f"cannot write {path}: {e}") from None


def _modules_payload(files, episodes_per_module):
    return [{"module": eps[0]["benchmark_name"], "file": files[eps[0]["benchmark"]],
             "episodes": eps} for eps in episodes_per_module]


def _runtimes_label(args, backend: str) -> str:
    """Where the table's runtimes come from, and the rewards if elsewhere."""
    label = backend_label(backend)
    if args.measure_on:
        label += (f"; episodes planned on {backend_label(args.reward_source)}, "
                  f"then each module's original, default and final modules timed together")
    elif getattr(args, "time_rows", False):
        label += ("; after the episodes each module's original, default and final modules "
                  "timed together")
    return label


def table_timing(results: dict, done: int) -> dict | None:
    """How the table's rows were timed on --backend (None where it is the
    cost model and the episodes' own): each row's distinct modules together,
    interleaved in rounds; the rounds and modules per row over the rows."""
    rows = []
    for m in range(done):
        episodes = [e for per_module in results.values() for e in per_module[m]
                    if not e["error"] and e.get("measured_on")]
        if episodes:
            rows.append(episodes[0])
    if not rows:
        return None

    def spread(key):
        values = sorted(e[key] for e in rows)
        return {"min": values[0], "median": values[len(values) // 2], "max": values[-1]}

    return {"measured_on": rows[0]["measured_on"], "rows": len(rows),
            "interleaved": rows[0]["measured_runs"] > 0,
            "modules_per_row": spread("measured_modules"), "rounds": spread("measured_runs")}


def _span(values: dict) -> str:
    if values["min"] == values["max"]:
        return str(values["min"])
    return f"{values['min']}-{values['max']} (median {values['median']})"


def _note_table_timing(timing: dict | None) -> None:
    if not timing:
        return
    modules = _span(timing["modules_per_row"])
    if timing["interleaved"]:
        print(f"note: each row's distinct modules (original, default, the agents' ends; equal "
              f"fingerprints timed once) were timed together on {timing['measured_on']}, "
              f"interleaved in rounds: {modules} modules a row, {_span(timing['rounds'])} "
              f"rounds")
    else:
        print(f"note: each row's distinct modules were estimated once on {timing['measured_on']} "
              f"(deterministic): {modules} modules a row")


def _note_measuring(results: dict, done: int) -> None:
    """What agents with a measurement budget spent timing their candidates
    (it counts against --time-budget like the rest of their episodes)."""
    for agent, per_module in results.items():
        episodes = [e for m in range(done) for e in per_module[m]]
        spent = sum(e.get("measure_seconds", 0) for e in episodes)
        if spent > 0:
            compiling = sum(e.get("measure_compile_seconds", 0) for e in episodes)
            print(f"note: {agent} spent {spent:.1f} s timing candidate end states "
                  f"({compiling:.1f} s of it compiling) over {len(episodes)} episodes")


def _note_phases(args, results: dict, done: int) -> None:
    """Where the wall time went: the episodes (every agent's side by side),
    with each agent's share of them, then timing the table's rows."""
    if not hasattr(args, "episodes_seconds"):
        return
    def own(episodes):  # less the pauses while a search episode timed
        return sum(e["seconds"] - e.get("paused_seconds", 0) for e in episodes)

    parts = [f"{agent} {own(e for m in range(done) for e in per_module[m]):.1f} s"
             for agent, per_module in results.items()]
    line = (f"note: wall time of the episodes (all agents side by side, longest first): "
            f"{args.episodes_seconds:.1f} s; their own seconds, per agent: " + "; ".join(parts))
    if getattr(args, "time_rows", False):
        line += f"; then timing the table's rows: {args.table_seconds:.1f} s"
    print(line)


def _note_coverage(args, files: list[str], done: int) -> None:
    """How many of the dataset's modules the table covers, and which it does
    not, and why."""
    total = getattr(args, "all_files", len(files))
    too_big = getattr(args, "too_big", [])
    print(f"modules covered: {done} of {total}")
    if too_big:
        print(f"not covered, over --max-instructions {args.max_instructions} after the "
              f"pre-passes ({len(too_big)}): " +
              ", ".join(f"{name} ({count})" for name, count in too_big))
    if done < len(files):
        print(f"not covered, --time-budget {args.time_budget:g} s ran out ({len(files) - done}): " +
              ", ".join(Path(path).stem for path in files[done:]))


def cmd_rollout(args) -> int:
    backend, files, env = _setup(args, [args.agent])
    started = time.perf_counter()
    results, done = run_agents(env, [args.agent], len(files), args)
    results = by_module_name(results, done)
    elapsed = time.perf_counter() - started
    print(f"agent {args.agent} on {args.env}, backend: {_runtimes_label(args, backend)}, "
          f"{done} modules x {args.episodes} episode(s) in {elapsed:.1f} s")
    print(rollout_table(results[args.agent]))
    timing = table_timing(results, done)
    _note_table_timing(timing)
    _note_coverage(args, files, done)
    if args.out:
        _write_json(args.out, {"command": "rollout", "env": args.env, "backend": backend,
                               "reward_backend": args.reward_source, "table_timing": timing,
                               "agent": args.agent, "seed": args.seed,
                               "modules": _modules_payload(files, results[args.agent])})
    return 0


def cmd_compare(args) -> int:
    agents = split_agents(args.agents)
    if args.plot:
        _pyplot()  # before minutes of episodes, not after them
    backend, files, env = _setup(args, agents)
    started = time.perf_counter()
    results, done = run_agents(env, agents, len(files), args)
    results = by_module_name(results, done)
    elapsed = time.perf_counter() - started
    print(f"{', '.join(agents)} on {args.env}, backend: {_runtimes_label(args, backend)}, "
          f"{done} modules x {args.episodes} episode(s) in {elapsed:.1f} s; "
          f"runtimes in microseconds, the best episode per module")
    table, summary = compare_table(results, done)
    print(table)
    timing = table_timing(results, done)
    _note_table_timing(timing)
    _note_measuring(results, done)
    _note_phases(args, results, done)
    _note_coverage(args, files, done)
    if args.plot:
        plot_compare(results, done, summary, args.plot,
                     f"{args.env}, {backend_label(backend)}, {done} modules")
        print(f"bar chart: {args.plot}")
    if args.out:
        _write_json(args.out, {"command": "compare", "env": args.env, "backend": backend,
                               "reward_backend": args.reward_source,
                               "seed": args.seed, "summary": summary, "table_timing": timing,
                               "agents": {a: _modules_payload(files, results[a]) for a in agents}})
    return 0


def add_rollout_parser(sub) -> None:
    p = sub.add_parser("rollout", help="run one agent on a dataset and print a table per module")
    p.add_argument("--agent", default="greedy",
                   help="random, greedy, xla, search or e.g. 'search(budget=32, beam=4)'")
    add_common_arguments(p)
    p.set_defaults(run=cmd_rollout)


def add_compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="run several agents on a dataset, one column each")
    p.add_argument("--agents", default="random,greedy,xla,search",
                   help="comma-separated agent specs")
    p.add_argument("--plot", help="save a bar chart of the speedups as this PNG")
    add_common_arguments(p)
    p.set_defaults(run=cmd_compare)

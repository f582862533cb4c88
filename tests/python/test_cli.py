"""The command line: every command end to end on two small modules, and bad
input reported as one line on stderr with exit code 2."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "data" / "corpus" / "small" / "hlo"
SOFTMAX = str(SMALL / "softmax_4096x1024_small.hlo")
LAYERNORM = str(SMALL / "layernorm_8192x1024_small.hlo")


def run(*args, env_extra=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "hlogym", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)


def assert_one_line_error(result, *needles):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("hlogym: error: ")
    for needle in needles:
        assert needle in result.stderr, result.stderr


def table_rows(stdout):
    return {line.split()[0]: line.split() for line in stdout.splitlines() if line.strip()}


def test_summary_lists_every_bundled_module():
    result = run("summary")
    assert result.returncode == 0, result.stderr
    assert "151 modules" in result.stdout
    assert "gpt2_tiny_train_4x128" in result.stdout


def test_rollout_prints_a_row_per_module_and_writes_replayable_json(tmp_path):
    out = tmp_path / "results.json"
    result = run("rollout", "--agent", "xla", "--backend", "cost", "--dataset", SOFTMAX,
                 LAYERNORM, "--max-steps", "64", "--num-envs", "2", "--out", str(out),
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "backend: cost model" in result.stdout
    rows = table_rows(result.stdout)
    for name in ("softmax_4096x1024_small", "layernorm_8192x1024_small"):
        row = rows[name]
        original, default, final = map(float, row[1:4])
        assert final <= original
        # The xla agent lands on the default pipeline's runtime on both.
        assert final == pytest.approx(default, rel=1e-3)
        assert row[5] == "1.000x"
        assert int(row[6]) > 0 and int(row[7]) > 0
    assert "geomean (2 modules; steps, rewrites: mean)" in result.stdout
    payload = json.loads(out.read_text())
    assert payload["agent"] == "xla" and payload["backend"] == "cost"
    episodes = payload["modules"][0]["episodes"]
    assert episodes[0]["choices"] and all(isinstance(c, int) for c in episodes[0]["choices"][0])


def test_compare_has_a_column_per_agent_and_a_plot(tmp_path):
    plot = tmp_path / "compare.png"
    result = run("compare", "--agents", "random,greedy,xla,search(budget=4, beam=2)",
                 "--backend", "cost", "--dataset", SOFTMAX, LAYERNORM, "--plot", str(plot),
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    header = result.stdout.splitlines()[1]
    for column in ("random us", "greedy us", "xla us", "search(budget=4, beam=2) us"):
        assert column in header
    assert "geomean speedup vs default" in result.stdout
    rows = table_rows(result.stdout)
    softmax = rows["softmax_4096x1024_small"]
    assert len(softmax) == 3 + 4  # name, original, default, one runtime per agent
    original, default, *finals = map(float, softmax[1:])
    assert all(0 < f <= original for f in finals)
    # search is seeded with greedy and xla: never worse than either.
    assert finals[3] <= min(finals[1], finals[2])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_time_budget_runs_every_family_in_turn_and_the_table_is_by_name():
    from hlogym.cli_run import interleave_families

    files = ["d/act_a.hlo", "d/act_b.hlo", "d/act_c.hlo", "d/flax_a.hlo", "d/optax_a.hlo",
             "d/optax_b.hlo"]
    assert interleave_families(files) == ["d/act_a.hlo", "d/flax_a.hlo", "d/optax_a.hlo",
                                          "d/act_b.hlo", "d/optax_b.hlo", "d/act_c.hlo"]
    # Given out of order, with a budget (so interleaved): rows come by name.
    mlp = str(SMALL / "mlp_fwd_256x784_small.hlo")
    result = run("rollout", "--agent", "xla", "--backend", "cost", "--dataset", SOFTMAX,
                 LAYERNORM, mlp, "--time-budget", "600", "--no-progress")
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines()
             if line.split() and line.split()[0].endswith("_small")]
    assert names == sorted(names) and len(names) == 3


def test_the_output_says_which_modules_the_table_covers_and_why_not_the_others():
    # layernorm has 33 instructions after the pre-passes, softmax 16.
    result = run("rollout", "--agent", "xla", "--backend", "cost", "--dataset", SOFTMAX,
                 LAYERNORM, "--max-instructions", "20", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "modules covered: 1 of 2" in result.stdout
    assert ("not covered, over --max-instructions 20 after the pre-passes (1): "
            "layernorm_8192x1024_small (33)") in result.stdout
    assert "softmax_4096x1024_small" in table_rows(result.stdout)
    # A time budget already spent runs nothing, and names every module.
    result = run("rollout", "--agent", "xla", "--backend", "cost", "--dataset", SOFTMAX,
                 LAYERNORM, "--time-budget", "0", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "modules covered: 0 of 2" in result.stdout
    assert "not covered, --time-budget 0 s ran out (2): " in result.stdout


def test_episodes_planned_on_one_source_are_timed_on_another(tmp_path):
    """--reward-backend plans on one runtime source, --backend times the end
    states: with two cost models (deterministic) the table must show exactly
    the CPU model's estimates of the modules the H100-planned episodes reached."""
    import hlogym

    out = tmp_path / "results.json"
    result = run("rollout", "--agent", "xla", "--backend", "cost:cpu", "--reward-backend", "cost",
                 "--dataset", SOFTMAX, "--max-steps", "64", "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "backend: cost model (CPU estimate); episodes planned on cost model (H100" in result.stdout
    payload = json.loads(out.read_text())
    assert payload["backend"] == "cost:cpu" and payload["reward_backend"] == "cost"
    episode = payload["modules"][0]["episodes"][0]
    assert episode["measured_on"] == "cost:cpu"
    planned = episode["planned"]
    # Replaying the decisions gives the final module: its CPU estimate is the
    # table's final runtime, and its H100 estimate what the episode saw.
    env = hlogym.HloGymEnv("fusion-v0", dataset=[SOFTMAX], max_steps=64)
    env.reset(seed=0)
    for choices in episode["choices"]:
        action = np.zeros(env.action_space.shape, dtype=np.int64)
        action[:len(choices)] = choices
        env.step(action)
    final = env.module()
    assert episode["final_runtime"] == pytest.approx(hlogym.estimate(final, "cpu")["seconds"])
    assert planned["final_runtime"] == pytest.approx(hlogym.estimate(final, "h100")["seconds"])
    assert episode["final_runtime"] != pytest.approx(planned["final_runtime"])
    baseline = hlogym.HloModule.from_file(SOFTMAX)
    hlogym.Pipeline.default().run(baseline)
    assert episode["default_runtime"] == pytest.approx(hlogym.estimate(baseline, "cpu")["seconds"])


def test_cpu_measured_table_from_cost_planned_episodes(tmp_path):
    from hlogym import _hlogym

    if _hlogym.runtime_source_error("cpu") is not None:
        pytest.skip("no CPU backend here")
    out = tmp_path / "results.json"
    result = run("compare", "--agents", "random,xla", "--backend", "cpu", "--reward-backend",
                 "cost:cpu", "--dataset", SOFTMAX, "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "backend: CPU, measured; episodes planned on cost model (CPU estimate)" in result.stdout
    episodes = {agent: modules[0]["episodes"][0]
                for agent, modules in json.loads(out.read_text())["agents"].items()}
    for episode in episodes.values():
        assert episode["error"] is None, episode["error"]
        assert episode["measured_on"] == "cpu"
        for key in ("original_runtime", "default_runtime", "final_runtime"):
            assert episode[key] > 0 and episode["planned"][key] > 0
            assert episode[key] != episode["planned"][key]
    # A module is timed once: both agents' rows share the baselines.
    assert episodes["random"]["original_runtime"] == episodes["xla"]["original_runtime"]
    assert episodes["random"]["default_runtime"] == episodes["xla"]["default_runtime"]


def test_a_rows_modules_are_timed_together_interleaved(tmp_path):
    """compare times each row's distinct modules (original, default, every
    agent's end) together on --backend, interleaved in rounds, after all
    agents ran: one timing per fingerprint, so agents ending on the same
    module (greedy and xla often do, or on the default pipeline's) get the
    identical runtime, and the JSON and the notes say how it was timed."""
    import hlogym
    from hlogym import _hlogym
    from hlogym.config import load_config

    if _hlogym.runtime_source_error("cpu") is not None:
        pytest.skip("no CPU backend here")
    out = tmp_path / "results.json"
    result = run("compare", "--agents", "random,greedy,xla", "--backend",
                 "cpu(warmup_runs=1, max_seconds=0.02, min_runs=3)", "--reward-backend",
                 "cost:cpu", "--env", "xla-v0", "--dataset", SOFTMAX, LAYERNORM,
                 "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "were timed together on cpu, interleaved in rounds" in result.stdout
    payload = json.loads(out.read_text())
    timing = payload["table_timing"]
    assert timing["measured_on"] == "cpu" and timing["interleaved"] and timing["rows"] == 2
    assert timing["rounds"]["min"] >= 3
    for m, path in enumerate([LAYERNORM, SOFTMAX]):
        episodes = {a: modules[m]["episodes"][0] for a, modules in payload["agents"].items()}
        assert all(modules[m]["file"] == path for modules in payload["agents"].values())
        original = hlogym.HloModule.from_file(path)
        default = original.clone()
        hlogym.Pipeline.default().run(default)
        for spec in load_config("xla-v0").pre_passes:
            hlogym.run_pass(original, spec)
        figures = {original.fingerprint(): episodes["xla"]["original_runtime"],
                   default.fingerprint(): episodes["xla"]["default_runtime"]}
        for agent, e in episodes.items():
            assert e["error"] is None, e["error"]
            assert e["measured_runs"] >= 3
            assert e["original_runtime"] == figures[original.fingerprint()]
            assert e["default_runtime"] == figures[default.fingerprint()]
            # The same module in two columns is one timing, the same figure.
            assert figures.setdefault(e["fingerprint"], e["final_runtime"]) == e["final_runtime"]
        for e in episodes.values():
            assert e["measured_modules"] == len(figures)
            assert e["measured_runs"] == episodes["xla"]["measured_runs"]


def test_rows_of_episodes_measured_on_the_backend_are_timed_together_again(tmp_path):
    """Episodes measured on --backend itself timed each agent's modules as
    they ran: the table times each row's modules together afterwards, on the
    env's own source, and keeps what the episodes saw under 'planned'."""
    from hlogym import _hlogym

    if _hlogym.runtime_source_error("cpu") is not None:
        pytest.skip("no CPU backend here")
    out = tmp_path / "results.json"
    result = run("compare", "--agents", "random,xla", "--backend",
                 "cpu(warmup_runs=1, max_seconds=0.02, min_runs=3)", "--max-steps", "6",
                 "--dataset", SOFTMAX, "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "after the episodes each module's original, default and final modules timed " \
           "together" in result.stdout
    assert "were timed together on cpu, interleaved in rounds" in result.stdout
    payload = json.loads(out.read_text())
    assert payload["table_timing"]["interleaved"]
    episodes = [modules[0]["episodes"][0] for modules in payload["agents"].values()]
    for e in episodes:
        assert e["error"] is None, e["error"]
        assert e["measured_on"] == "cpu" and e["measured_runs"] >= 3
        assert e["planned"]["final_runtime"] > 0
    assert episodes[0]["default_runtime"] == episodes[1]["default_runtime"]


def test_search_times_its_candidates_on_the_backend_when_planning_on_the_model(tmp_path):
    """With --reward-backend, --backend serves search(measure=k) too, and the
    time it spends there is reported; the main job uses it."""
    import hlogym.cli as cli
    from hlogym import _hlogym

    if _hlogym.runtime_source_error("cpu") is not None:
        pytest.skip("no CPU backend here")
    main_search = cli.MAIN_ARGS[cli.MAIN_ARGS.index("--agents") + 1]
    assert "measure=2" in main_search and "measure_ms=50" in main_search
    out = tmp_path / "results.json"
    spec = "search(budget=4, beam=2, measure=2)"
    result = run("compare", "--agents", f"xla,{spec}", "--backend",
                 "cpu(warmup_runs=1, max_seconds=0.02)", "--reward-backend", "cost:cpu",
                 "--env", "xla-v0", "--dataset", SOFTMAX, "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert f"note: {spec} spent " in result.stdout
    assert "note: xla spent" not in result.stdout
    agents = json.loads(out.read_text())["agents"]
    episode = agents[spec][0]["episodes"][0]
    assert episode["error"] is None and episode["measured_on"] == "cpu"
    assert episode["measure_seconds"] > 0
    assert agents["xla"][0]["episodes"][0]["measure_seconds"] == 0


def test_validate_replays_rollout_decisions(tmp_path):
    out = tmp_path / "results.json"
    assert run("rollout", "--agent", "greedy", "--backend", "cost", "--dataset", SOFTMAX,
               "--out", str(out), "--no-progress").returncode == 0
    result = run("validate", SOFTMAX, "--decisions", str(out))
    assert result.returncode == 0, result.stderr
    assert "equivalent: yes" in result.stdout
    # A plain list of per-step choice lists works too.
    steps = json.loads(out.read_text())["modules"][0]["episodes"][0]["choices"]
    plain = tmp_path / "steps.json"
    plain.write_text(json.dumps(steps))
    result = run("validate", SOFTMAX, "--decisions", str(plain))
    assert result.returncode == 0, result.stderr
    assert f"replayed {len(steps)} steps" in result.stdout


def test_validate_without_decisions_checks_an_agent_episode():
    result = run("validate", LAYERNORM, "--agent", "xla")
    assert result.returncode == 0, result.stderr
    assert "a xla episode" in result.stdout and "equivalent: yes" in result.stdout


def test_validate_rejects_out_of_range_decisions(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([[99]]))
    assert_one_line_error(run("validate", SOFTMAX, "--decisions", str(bad)), "step 0", "99")
    bad.write_text('{"nonsense": 1}')
    assert_one_line_error(run("validate", SOFTMAX, "--decisions", str(bad)), "no episodes")


@pytest.mark.parametrize("payload,needles", [
    ([[1] * 9], ["step 0: 9 choices but the env offers 5 alternatives"]),
    ([[True]], ["expected a JSON list of per-step choice lists"]),
    ({"modules": 3}, ["not the --out file of rollout/compare"]),
    ({"agents": [1, 2]}, ["not the --out file of rollout/compare"]),
    ({"modules": [{"module": "jit__lambda", "episodes": [{"choices": [[1]]}]}]},
     ["not the --out file of rollout/compare", "error"]),
    ({"modules": [{"file": SOFTMAX, "episodes": [{"choices": [[1]], "error": None}]}]},
     ["not the --out file of rollout/compare", "final_runtime"]),
])
def test_validate_rejects_decisions_that_do_not_fit(tmp_path, payload, needles):
    """A decisions file of the wrong form is one line and exit 2, never a
    traceback, and never a replay that drops choices unseen."""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(payload))
    assert_one_line_error(run("validate", SOFTMAX, "--decisions", str(bad)), *needles)


def test_inspect_lists_alternatives_and_writes_dot(tmp_path):
    dot = tmp_path / "graph.dot"
    result = run("inspect", SOFTMAX, "--dot", str(dot))
    assert result.returncode == 0, result.stderr
    assert "instructions in" in result.stdout
    assert "dry pass fusion: 5 alternatives nodes" in result.stdout
    text = dot.read_text()
    assert text.startswith('digraph "') and "shape=diamond" in text and "style=dashed" in text
    assert text.count("->") >= 10


def test_inspect_other_pass():
    result = run("inspect", SOFTMAX, "--pass", "fusion(mode=general)", "--show", "2")
    assert result.returncode == 0, result.stderr
    assert "dry pass fusion(mode=general)" in result.stdout


def test_bench_without_built_benchmarks_says_so(tmp_path):
    result = run("bench", "--build-dir", str(tmp_path))
    assert_one_line_error(result, "no benchmarks built")


def test_bench_only_with_an_unknown_name_runs_nothing():
    """A typo in one of --only's names is an error, not silently skipped."""
    if not list((ROOT / "build" / "bench").glob("*_bench")):
        pytest.skip("no benchmarks built")
    result = run("bench", "--only", "config,nope", "--min-time", "0.01")
    assert_one_line_error(result, "no benchmark named nope", "hlogym_config_bench")
    assert result.stdout == ""


def test_bench_runs_a_built_benchmark():
    build = ROOT / "build"
    if not list((build / "bench").glob("*_bench")):
        pytest.skip("no benchmarks built")
    result = run("bench", "--only", "config", "--min-time", "0.01")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== hlogym_config_bench" in result.stdout
    assert "Benchmark" in result.stdout


@pytest.mark.parametrize("args,needles", [
    (["rollout", "--agent", "genius"], ["unknown agent `genius`", "greedy, random, search, xla"]),
    (["compare", "--agents", "random,search(depth=2)"], ["has no option `depth`"]),
    (["rollout", "--env", "nope-v0"], ["unknown env id 'nope-v0'"]),
    (["rollout", "--backend", "tpu"], ["unknown backend 'tpu'", "cost:cpu"]),
    (["rollout", "--backend", "cpu(runs=3)"], ["reward source `cpu` has no option `runs`"]),
    (["rollout", "--backend", "cpu(max_seconds=fast)"],
     ["reward source option `max_seconds` must be a number, got `fast`"]),
    (["rollout", "--backend", "cost(min_runs=3)"], ["unknown backend 'cost(min_runs=3)'"]),
    (["rollout", "--dataset", "missing.hlo"], ["file not found: missing.hlo"]),
    (["rollout", "--dataset", "no/such/dir"], ["not found"]),
    (["inspect", "missing.hlo"], ["file not found: missing.hlo"]),
    (["validate", "missing.hlo"], ["file not found: missing.hlo"]),
    (["rollout", "--episodes", "0"], ["--episodes must be at least 1"]),
    (["rollout", "--limit", "-1"], ["--limit must be at least 1, got -1"]),
    (["rollout", "--max-steps", "0"], ["--max-steps must be at least 1, got 0"]),
    (["rollout", "--seed", "-1"], ["--seed must not be negative, got -1"]),
    (["rollout", "--episode-timeout", "-5"], ["--episode-timeout must not be negative"]),
    (["compare", "--time-budget", "-1"], ["--time-budget must not be negative, got -1"]),
    (["compare", "--agents", "random,random"], ["agent given twice: random"]),
    (["compare", "--agents", "random,,xla"], ["an empty agent name in 'random,,xla'"]),
    (["frobnicate"], ["invalid choice"]),
    (["rollout", "--env", "missing.yaml"], ["env config not found: missing.yaml"]),
    (["inspect", SOFTMAX, "--env", "missing.yaml"], ["env config not found: missing.yaml"]),
    (["inspect", SOFTMAX, "--show", "-1"], ["--show must be at least 0, got -1"]),
    (["inspect", "data"], ["data: a directory, not an .hlo file"]),
    (["validate", "data"], ["data: a directory, not an .hlo file"]),
])
def test_bad_input_is_one_line_and_exit_2(args, needles):
    assert_one_line_error(run(*args), *needles)


def test_gpu_backend_without_a_gpu_suggests_cpu():
    import hlogym

    try:
        gpus = hlogym.cuda_device_count()
    except RuntimeError:
        gpus = 0
    if gpus > 0:
        pytest.skip("this machine has a GPU")
    result = run("rollout", "--backend", "gpu", "--dataset", SOFTMAX)
    assert_one_line_error(result, "no CUDA GPU", "--backend cpu")


def test_bad_hlo_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] frob(p)\n}\n")
    assert_one_line_error(run("inspect", str(bad)), "bad.hlo")
    assert_one_line_error(run("rollout", "--dataset", str(bad), "--backend", "cost"))


def test_cpu_backend_error_is_one_line_when_it_is_missing():
    from hlogym import _hlogym

    if _hlogym.runtime_source_error("cpu") is None:
        pytest.skip("the CPU backend works here")
    result = run("rollout", "--backend", "cpu", "--dataset", SOFTMAX)
    assert_one_line_error(result, "--backend cpu:", "use --backend cost")


def test_auto_backend_falls_back_and_names_it():
    result = run("rollout", "--agent", "xla", "--dataset", SOFTMAX, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "backend: " in result.stdout.splitlines()[0]


def test_main_help_names_the_compare_arguments():
    result = run("--help")
    assert result.returncode == 0
    for command in ("rollout", "compare", "inspect", "validate", "bench", "summary", "main"):
        assert command in result.stdout


def test_compare_without_matplotlib_says_so_before_running_anything(tmp_path):
    """--plot without matplotlib fails at once, not after the episodes."""
    fake = tmp_path / "matplotlib"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('matplotlib is not installed')\n")
    result = run("compare", "--agents", "random", "--backend", "cost", "--dataset", SOFTMAX,
                 "--plot", str(tmp_path / "c.png"), "--no-progress",
                 env_extra={"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'python'}"})
    assert_one_line_error(result, "--plot needs matplotlib (pip install matplotlib)")
    assert result.stdout == ""


def test_main_without_a_gpu_measures_on_the_cpu_and_plans_on_its_model(monkeypatch):
    """Episodes planned on the model of the device that measures them: on
    the H100 model, search's plans lost to the xla agent's on CPU timing."""
    sys.path.insert(0, str(ROOT / "python"))
    import hlogym.cli as cli
    import hlogym.cli_common as cli_common
    from hlogym import _hlogym

    monkeypatch.setattr(cli_common, "cuda_devices", lambda: 0)
    if _hlogym.runtime_source_error("cpu") is not None:
        pytest.skip("no CPU backend in this build")
    argv = cli._main_backend()
    assert argv == ["--backend", cli.MAIN_CPU_BACKEND, "--reward-backend", "cost:cpu"]


def test_main_with_a_gpu_measures_on_it_and_plans_on_the_h100_model(monkeypatch):
    """Rewards measured on the GPU would not fit the main job's 5 minutes
    (random and xla on 12 modules took 127 s on an H100), so the episodes
    plan on the H100 model and the table's rows are timed on the GPU."""
    sys.path.insert(0, str(ROOT / "python"))
    import hlogym.cli as cli
    import hlogym.cli_common as cli_common
    from hlogym import _hlogym

    monkeypatch.setattr(cli_common, "cuda_devices", lambda: 1)
    monkeypatch.setattr(_hlogym, "runtime_source_error", lambda spec: None)
    argv = cli._main_backend()
    assert argv == ["--backend", "gpu", "--reward-backend", "cost:h100"]


def test_validate_replays_on_the_env_the_decisions_file_names(tmp_path):
    """A rollout/compare JSON names its env; replayed on another env (the
    default fusion-v0) its choices mean other rewrites, or run past the end."""
    adam = str(SMALL / "adam_update_10M_small.hlo")
    out = tmp_path / "xla.json"
    result = run("rollout", "--env", "xla-v0", "--agent", "xla", "--backend", "cost",
                 "--dataset", adam, "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    result = run("validate", adam, "--decisions", str(out))
    assert result.returncode == 0, result.stderr
    assert "on xla-v0" in result.stdout and "equivalent: yes" in result.stdout
    assert "warning" not in result.stdout
    # An explicit --env still wins.
    result = run("validate", adam, "--decisions", str(out), "--env", "fusion-v0")
    assert_one_line_error(result, "the episode ended after")


def test_inspect_checks_its_options_before_printing_anything():
    """A bad --env or --pass is one line on stderr, not statistics then an error."""
    for args in (["--env", "nope-v0"], ["--pass", "frob"]):
        result = run("inspect", SOFTMAX, *args)
        assert_one_line_error(result, "unknown")
        assert result.stdout == ""


def test_validate_agent_needs_a_file_that_names_agents(tmp_path):
    """--agent picks among a compare file's agents; a bare list of choices has
    none, and ignoring the option would check decisions the user did not ask for."""
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([[0]]))
    assert_one_line_error(run("validate", SOFTMAX, "--decisions", str(plain), "--agent", "xla"),
                          "--agent", "names no agents")
    result = run("validate", SOFTMAX, "--decisions", str(plain))
    assert result.returncode == 0, result.stderr
    out = tmp_path / "rollout.json"
    result = run("rollout", "--agent", "xla", "--backend", "cost", "--dataset", SOFTMAX,
                 "--out", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert_one_line_error(run("validate", SOFTMAX, "--decisions", str(out), "--agent", "greedy"),
                          "--agent greedy: the decisions file holds xla's episodes")
    result = run("validate", SOFTMAX, "--decisions", str(out), "--agent", "xla")
    assert result.returncode == 0, result.stderr

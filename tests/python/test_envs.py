"""The Gymnasium API: make, reset/step, spaces, zero-copy, determinism, errors."""
import gymnasium
import numpy as np
import pytest

import hlogym
from hlogym.vector_env import OBSERVATION_KEYS

SMALL_FILES = ["softmax_4096x1024_small.hlo", "gelu_4096x4096_small.hlo",
               "layernorm_8192x1024_small.hlo"]


@pytest.fixture
def files():
    from conftest import DATA
    return [str(DATA / "corpus" / "small" / "hlo" / f) for f in SMALL_FILES]


def random_actions(envs, obs, rng):
    actions = np.zeros(envs.action_space.shape, dtype=np.int64)
    for e in range(envs.num_envs):
        for s in np.flatnonzero(obs["alt_valid"][e]):
            actions[e, s] = rng.integers(obs["alt_num_choices"][e, s])
    return actions


def test_make_reset_step(files):
    envs = hlogym.make("fusion-v0", num_envs=3, seed=0, dataset=files)
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    obs, infos = envs.reset(seed=0)
    assert set(obs) == set(OBSERVATION_KEYS)
    assert obs["node_features"].shape == (3, 8192, hlogym._hlogym.NODE_FEATURE_COUNT)
    assert envs.observation_space.contains(obs)
    assert infos["env_id"].tolist() == [0, 1, 2]
    assert (obs["alt_valid"].sum(axis=1) == infos["num_alternatives"]).all()
    # Gymnasium's vector infos: a row mask per key, each its own array.
    masks = [infos["_" + key] for key in infos if not key.startswith("_")]
    assert all(m.dtype == np.bool_ and m.tolist() == [True] * 3 for m in masks)
    masks[0][0] = False
    assert all(m[0] for m in masks[1:])
    rng = np.random.default_rng(0)
    total = np.zeros(3)
    for _ in range(10):
        obs, reward, terminated, truncated, infos = envs.step(random_actions(envs, obs, rng))
        assert reward.dtype == np.float32 and reward.shape == (3,)
        total += reward
    assert np.isfinite(total).all()


def test_observations_are_views_of_cpp_buffers(files):
    envs = hlogym.make("fusion-v0", num_envs=2, seed=0, dataset=files)
    obs, _ = envs.reset(seed=0)
    array = obs["node_features"]
    assert not array.flags.owndata  # a view: its base is the capsule holding the buffer
    assert array.base is not None and type(array.base).__name__ == "PyCapsule"
    pointer = array.__array_interface__["data"][0]
    snapshot = array.copy()
    obs2, *_ = envs.step(np.zeros(envs.action_space.shape, dtype=np.int64))
    assert obs2["node_features"].__array_interface__["data"][0] != pointer
    np.testing.assert_array_equal(array, snapshot)  # the old batch was not overwritten


def test_same_seed_same_trajectory_for_1_and_2_threads(files):
    runs = []
    for threads in (1, 2):
        envs = hlogym.make("fusion-v0", num_envs=4, num_threads=threads, seed=3, dataset=files)
        obs, _ = envs.reset(seed=7)
        rng = np.random.default_rng(1)
        trace = [obs["node_features"].copy()]
        for _ in range(8):
            obs, reward, term, trunc, infos = envs.step(random_actions(envs, obs, rng))
            trace += [obs["node_features"].copy(), reward.copy(), infos["fingerprint"].copy()]
        runs.append(trace)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_bad_actions_raise_and_change_nothing(files):
    envs = hlogym.make("fusion-v0", num_envs=2, seed=0, dataset=files)
    obs, infos = envs.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        envs.step(np.zeros(envs.action_space.shape, dtype=np.float32))
    bad = np.zeros(envs.action_space.shape, dtype=np.int64)
    bad[1, 0] = 99
    with pytest.raises(ValueError, match="env 1, alternative 0: choice 99"):
        envs.step(bad)
    assert envs.info(1)["step"] == 0
    envs.step(np.zeros(envs.action_space.shape, dtype=np.int64))
    assert envs.info(1)["step"] == 1


def test_config_and_dataset_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown env id 'nope-v0'"):
        hlogym.make("nope-v0")
    with pytest.raises(ValueError, match="env config not found: .*missing.yaml"):
        hlogym.make(str(tmp_path / "missing.yaml"))
    with pytest.raises(ValueError, match="unknown config key 'max_stepz'"):
        hlogym.make("fusion-v0", max_stepz=3)
    with pytest.raises(FileNotFoundError):
        hlogym.make("fusion-v0", dataset=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="unknown split"):
        hlogym.make("fusion-v0", split="validation")
    # Observations a machine cannot hold: an error, not the OOM killer.
    with pytest.raises(ValueError, match="lower num_envs \\(or batch_size\\) or the limits"):
        hlogym.make("fusion-v0", num_envs=10**9)
    with pytest.raises(ValueError, match="at max_nodes 1000000000000"):
        hlogym.make("fusion-v0", max_nodes=10**12)


@pytest.mark.parametrize("key,value,needle", [
    ("max_steps", "ten", "'max_steps' must be a positive integer, got 'ten'"),
    ("max_steps", 2.5, "'max_steps' must be a positive integer, got 2.5"),
    ("max_steps", True, "'max_steps' must be a positive integer, got True"),
    ("max_edges", -5, "'max_edges' must be a positive integer, got -5"),
    ("max_nodes", 0, "'max_nodes' must be a positive integer, got 0"),
    ("reward", 3, "'reward' must be a string"),
    ("reward", None, "'reward' must be a string"),
    ("dry_passes", "fusion", "'dry_passes' must be a list of pass specs"),
    ("pre_passes", None, "'pre_passes' must be a list of pass specs"),
    ("post_passes", [1], "'post_passes' must be a list of pass specs"),
    ("dry_stages", ["fusion"], "'dry_stages' must be a list of lists of pass specs"),
    ("dataset", 7, "must be a path or a list of paths, got 7"),
])
def test_config_overrides_of_the_wrong_type_name_the_key(files, key, value, needle):
    """Not pybind11's wall of constructor signatures, nor numpy's "negative
    dimensions": the key, what it must be and what it got."""
    kwargs = {"dataset": files, key: value}
    with pytest.raises(ValueError) as error:
        hlogym.make("fusion-v0", **kwargs)
    assert needle in str(error.value)
    assert "incompatible" not in str(error.value)


def test_config_overrides_of_the_right_type_are_taken(files):
    envs = hlogym.make("fusion-v0", dataset=tuple(files), max_steps=np.int64(3),
                       dry_passes=("fusion",), dry_stages=[])
    assert envs.config.max_steps == 3 and envs.config.dry_passes == ["fusion"]
    obs, _ = envs.reset(seed=0)
    for _ in range(3):
        obs, _, terminated, truncated, _ = envs.step(np.zeros(envs.action_space.shape, np.int64))
    assert truncated.all() or terminated.all()


# node_features and edge_features columns (docs/observation.md).
COMPUTATION, IS_ALTERNATIVES, IS_CANDIDATE = 15, 20, 21
EDGE_TYPE, CALL_EDGE = 1, 2


def nodes_in_candidate_bodies(obs, e):
    """Of env e's nodes, how many lie in a computation whose root has a call
    edge into a candidate node (a candidate's fused computation)."""
    features = obs["node_features"][e]
    n = int(obs["node_mask"][e].sum())
    edges = obs["edge_mask"][e].astype(bool)
    calls = edges & (obs["edge_features"][e, :, EDGE_TYPE] == CALL_EDGE)
    sources, targets = obs["edge_index"][e, 0][calls], obs["edge_index"][e, 1][calls]
    into_candidates = features[targets, IS_CANDIDATE] == 1
    bodies = np.unique(features[sources[into_candidates], COMPUTATION])
    return int(np.isin(features[:n, COMPUTATION], bodies).sum())


def test_candidate_bodies_can_be_left_out_of_observations(files):
    """observe_candidate_bodies=False: the same episodes, observed without the
    nodes of candidates' fused computations (counted here from the full
    observation), every other node and every alternative still there."""
    kwargs = dict(num_envs=3, seed=0, dataset=files)
    full = hlogym.make("fusion-v0", **kwargs)
    compact = hlogym.make("fusion-v0", observe_candidate_bodies=False, **kwargs)
    assert full.config.observe_candidate_bodies and not compact.config.observe_candidate_bodies
    of, _ = full.reset(seed=0)
    oc, _ = compact.reset(seed=0)
    rng = np.random.default_rng(0)
    left_out = 0
    for _ in range(4):
        for e in range(3):
            in_bodies = nodes_in_candidate_bodies(of, e)
            left_out += in_bodies
            assert oc["node_mask"][e].sum() == of["node_mask"][e].sum() - in_bodies
            assert nodes_in_candidate_bodies(oc, e) == 0
            np.testing.assert_array_equal(oc["alt_valid"][e], of["alt_valid"][e])
            np.testing.assert_array_equal(oc["alt_num_choices"][e], of["alt_num_choices"][e])
            slots = oc["alt_nodes"][e][oc["alt_valid"][e].astype(bool)]
            assert (oc["node_features"][e][slots, IS_ALTERNATIVES] == 1).all()
        actions = random_actions(full, of, rng)
        of, reward_full, *_, info_full = full.step(actions)
        oc, reward_compact, *_, info_compact = compact.step(actions)
        np.testing.assert_array_equal(reward_compact, reward_full)
        np.testing.assert_array_equal(info_compact["fingerprint"], info_full["fingerprint"])
    assert left_out > 0
    with pytest.raises(ValueError, match="'observe_candidate_bodies' must be True or False"):
        hlogym.make("fusion-v0", observe_candidate_bodies="no", dataset=files)


def test_reset_mask_and_options(files):
    envs = hlogym.make("fusion-v0", num_envs=2, seed=0, dataset=files)
    envs.reset(seed=0)
    envs.step(np.zeros(envs.action_space.shape, dtype=np.int64))
    _, infos = envs.reset(options={"reset_mask": np.array([False, True])})
    assert infos["elapsed_step"].tolist()[1] == 0
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.array([True])})
    with pytest.raises(ValueError, match="unknown reset options"):
        envs.reset(options={"foo": 1})


def test_a_dataset_may_be_one_file(files, tmp_path):
    """The CLI's --dataset takes files; so does make(), a path as a string."""
    envs = hlogym.make("fusion-v0", dataset=files[0])
    assert envs.files == [files[0]]
    _, infos = envs.reset(seed=0)
    assert envs.benchmark_names[infos["benchmark"][0]] == "softmax_4096x1024_small"
    with pytest.raises(ValueError, match="split 'train' picks from a directory"):
        hlogym.make("fusion-v0", dataset=files[0], split="train")
    with pytest.raises(FileNotFoundError, match="no .hlo files under"):
        hlogym.make("fusion-v0", dataset=str(tmp_path))


def test_reset_seed_must_be_a_non_negative_integer(files):
    envs = hlogym.make("fusion-v0", num_envs=2, seed=0, dataset=files)
    for seed in (-1, "x", 1.5):
        with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
            envs.reset(seed=seed)
    _, infos = envs.reset(seed=np.int64(3))
    assert infos["elapsed_step"].tolist() == [0, 0]
    env = hlogym.HloGymEnv("fusion-v0", dataset=files)
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        env.reset(seed=-2)


def test_single_env_action_shape_error_names_its_own_shape(files):
    env = hlogym.HloGymEnv("fusion-v0", dataset=files)
    env.reset(seed=0)
    width = env.config.max_alternatives
    with pytest.raises(ValueError, match=rf"action must have shape \({width},\).*got \(3,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    _, _, _, _, info = env.step(np.zeros(width, dtype=np.int64))
    assert info["elapsed_step"] == 1


def test_module_and_state(files):
    envs = hlogym.make("fusion-v0", num_envs=1, seed=0, dataset=files)
    obs, infos = envs.reset(seed=0)
    module = envs.module(0)
    assert isinstance(module, hlogym.HloModule)
    names = [row[1] for row in module.instructions()]
    assert names.count("alternatives") == infos["num_alternatives"][0]
    envs.step(np.ones(envs.action_space.shape, dtype=np.int64) * obs["alt_valid"])
    state = envs.state(0)
    assert state["benchmark_file"] in files
    assert len(state["choices"]) == 1


def test_a_module_saved_mid_episode_starts_the_same_episode(files, tmp_path):
    """pool.module() holds the dry pass's offers; as a dataset file it starts
    from the module they were offered on (it used to end its episode at once)."""
    envs = hlogym.make("fusion-v0", dataset=files[:1])
    _, first = envs.reset(seed=0)
    saved = tmp_path / "saved.hlo"
    saved.write_text(str(envs.module(0)))
    again = hlogym.make("fusion-v0", dataset=[str(saved)])
    _, second = again.reset(seed=0)
    assert second["num_alternatives"][0] == first["num_alternatives"][0] > 0
    assert second["fingerprint"][0] == first["fingerprint"][0]


def test_gymnasium_registration_and_env_checker(files):
    from gymnasium.utils.env_checker import check_env

    envs = gymnasium.make_vec("hlogym/fusion-v0", num_envs=2, dataset=files)
    assert envs.num_envs == 2
    env = hlogym.HloGymEnv("fusion-v0", dataset=files, max_nodes=512, max_edges=1024,
                           max_alternatives=128, invalid_choices="original")
    check_env(env, skip_render_check=True)


def test_single_env_render_mode_and_options_are_refused_not_ignored(files):
    """gymnasium.make passes render_mode to the env: hlogym has none to offer,
    and says so rather than calling it an unknown config key; reset options
    are refused as the vector env refuses them, not dropped."""
    with pytest.raises(ValueError, match="render_mode 'rgb_array' is not supported"):
        gymnasium.make("hlogym/fusion-v0", dataset=files, render_mode="rgb_array")
    env = gymnasium.make("hlogym/fusion-v0", dataset=files, render_mode=None)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown reset options \\['foo'\\]"):
        env.reset(options={"foo": 1})
    env.reset(options={})


def test_hloenv_decisions_must_be_integers(softmax_path):
    env = hlogym.HloEnv(str(softmax_path))
    pipeline = hlogym.Pipeline("fusion", loop_count=-1)
    pipeline.add_dry_pass("fusion")
    assert env.run(pipeline)
    nodes = [int(n) for n in env.get_hlo_graph()["alt_nodes"] if n >= 0]
    before = env.get_hlo_module_hash()
    with pytest.raises(ValueError, match="decisions must be integers"):
        env.apply_alternatives([[n, 0.9] for n in nodes])
    assert env.get_hlo_module_hash() == before
    env.apply_alternatives([[n, 1] for n in nodes])
    assert env.get_hlo_module_hash() != before


@pytest.mark.parametrize("limit", ["max_nodes", "max_edges", "max_alternatives", "max_choices"])
def test_observe_limits_must_be_positive(softmax_path, limit):
    module = hlogym.HloModule.from_file(str(softmax_path))
    with pytest.raises(ValueError, match=f"{limit} must be positive, got -5"):
        hlogym.observe(module, **{limit: -5})
    with pytest.raises(ValueError, match=f"{limit} must be positive, got 0"):
        hlogym.observe(module, **{limit: 0})


def test_hloenv_run_takes_a_pipeline(softmax_path):
    env = hlogym.HloEnv(str(softmax_path))
    before = env.get_hlo_module_hash()
    with pytest.raises(TypeError, match="run takes a hlogym.Pipeline, got str"):
        env.run("fusion")
    assert env.get_hlo_module_hash() == before


@pytest.mark.parametrize("loop_count", [0, -2])
def test_pipeline_loop_count_is_minus_one_or_positive(loop_count):
    message = f"loop_count must be -1 \\(until nothing changes\\) or a positive count, got {loop_count}"
    with pytest.raises(ValueError, match=message):
        hlogym.Pipeline("p", loop_count=loop_count)
    pipeline = hlogym.Pipeline("p", loop_count=-1)
    with pytest.raises(ValueError, match=message):
        pipeline.add_pass("dce", loop_count=loop_count)
    with pytest.raises(ValueError, match=message):
        pipeline.add_dry_pass("fusion", loop_count=loop_count)


def test_hloenv_missing_path_is_file_not_found(tmp_path):
    """A path that is not there is not parsed as HLO text (whose error would
    speak of a computation named after the path's first word)."""
    with pytest.raises(FileNotFoundError, match="missing.hlo"):
        hlogym.HloEnv(str(tmp_path / "missing.hlo"))
    with pytest.raises(hlogym.HloParseError):
        hlogym.HloEnv("HloModule m\nENTRY e { ROOT p = f32[] frob() }")


def test_hloenv_style_api(softmax_path):
    env = hlogym.HloEnv(str(softmax_path))
    original = env.get_hlo_module_hash()
    pipeline = hlogym.Pipeline("fusion", loop_count=-1)
    pipeline.add_dry_pass("fusion")
    pipeline.add_pass("dce")
    rounds = 0
    while env.run(pipeline):
        graph = env.get_hlo_graph()
        decisions = [(int(node), 0) for node in graph["alt_nodes"][graph["alt_valid"]]]
        env.apply_alternatives(decisions)
        rounds += 1
        if rounds == 1:
            assert env.get_hlo_module_hash() == original  # choosing 0 restores it
            break
    assert rounds == 1
    assert env.evaluate().runtime_s > 0
    copy = env.clone_hlo()
    env.load_hlo(copy)
    assert env.get_hlo_module_hash() == original
    with pytest.raises(ValueError):
        env.apply_alternatives([(0, 0)])


def test_single_env_rejects_illegal_choices_by_default(files):
    env = hlogym.HloGymEnv("fusion-v0", dataset=files)
    obs, _ = env.reset(seed=0)
    action = np.zeros(env.action_space.shape, dtype=np.int64)
    action[0] = obs["alt_num_choices"][0]  # one past the last legal choice
    with pytest.raises(ValueError, match="out of range"):
        env.step(action)


RANDOM_BETA_ERROR = (
    "benchmark `random_beta` (module `jit__lambda`) does not fit env `fusion-v0`: 17284 nodes "
    "but max_nodes is 8192, 1961 alternatives but max_alternatives is 1024; raise max_nodes, "
    "max_alternatives in the env config or leave this module out of the dataset")


@pytest.fixture
def random_beta():
    from conftest import DATA
    return str(DATA / "dataset" / "hlo" / "random_beta.hlo")


def test_graph_over_the_limits_is_an_error_naming_them(files, random_beta):
    envs = hlogym.make("fusion-v0", num_envs=3, seed=0, dataset=[random_beta, files[0]])
    with pytest.warns(RuntimeWarning, match="random_beta"):
        obs, infos = envs.reset(seed=0)
    failed = infos["benchmark"] == -1
    assert failed.any() and not failed.all()
    assert infos["error"][failed].tolist() == [RANDOM_BETA_ERROR] * failed.sum()
    assert infos["error"][~failed].tolist() == [""] * (~failed).sum()
    assert not obs["node_mask"][failed].any() and (obs["alt_nodes"][failed] == -1).all()
    assert (infos["num_alternatives"][~failed] > 0).all()
    # The others step on; the failed ones reset (and draw again) at their next step.
    envs.warn_on_errors = False
    obs, reward, terminated, truncated, infos = envs.step(
        np.zeros(envs.action_space.shape, dtype=np.int64))
    assert (infos["elapsed_step"][~failed] == 1).all()
    assert (infos["elapsed_step"][failed] == 0).all()
    assert (infos["num_alternatives"] <= envs.config.max_alternatives).all()

    single = hlogym.HloGymEnv("fusion-v0", dataset=[random_beta])
    with pytest.raises(RuntimeError) as error:
        single.reset(seed=0)
    assert str(error.value) == RANDOM_BETA_ERROR + "; call reset() to go on"


def test_state_replays_to_the_same_fingerprints(files):
    envs = hlogym.make("fusion-v0", num_envs=1, seed=4, dataset=files)
    obs, infos = envs.reset(seed=4)
    rng = np.random.default_rng(2)
    fingerprints, rewards = [int(infos["fingerprint"][0])], []
    for _ in range(envs.config.max_steps):
        obs, reward, terminated, truncated, infos = envs.step(random_actions(envs, obs, rng))
        fingerprints.append(int(infos["fingerprint"][0]))
        rewards.append(float(reward[0]))
        if terminated[0] or truncated[0]:
            break
    state = envs.state(0)
    assert len(state["choices"]) == len(rewards) >= 2
    assert any(any(c) for c in state["choices"])  # some rewrites were taken
    np.testing.assert_allclose(state["rewards"], rewards, rtol=1e-6)

    replay = hlogym.make("fusion-v0", num_envs=1, dataset=[state["benchmark_file"]])
    _, infos = replay.reset(seed=0)
    replayed = [int(infos["fingerprint"][0])]
    for choices in state["choices"]:
        action = np.zeros(replay.action_space.shape, dtype=np.int64)
        action[0, :len(choices)] = choices
        _, _, _, _, infos = replay.step(action)
        replayed.append(int(infos["fingerprint"][0]))
    assert replayed == fingerprints
    assert replay.state(0)["rewards"] == state["rewards"]


def test_fork_takes_the_same_step_and_diverges_independently(files):
    envs = hlogym.make("fusion-v0", num_envs=2, seed=0, dataset=files)
    obs, infos = envs.reset(seed=0)
    envs.step(np.zeros(envs.action_space.shape, dtype=np.int64))
    fork = envs.fork(1)
    before = envs.info(1)
    assert fork.info() == before and fork.state()["choices"] == envs.state(1)["choices"]
    fork_obs = fork.observation()
    assert fork_obs["node_features"].shape == obs["node_features"].shape[1:]
    n = before["num_alternatives"]
    assert n >= 2

    # The same next step gives the same fingerprint and reward.
    take_first = np.zeros(envs.action_space.shape, dtype=np.int64)
    take_first[1, 0] = 1
    _, reward, _, _, infos = envs.step(take_first)
    _, fork_reward, _, _, fork_info = fork.step(take_first[1])
    assert fork_info["fingerprint"] == int(infos["fingerprint"][1])
    assert fork_reward == pytest.approx(float(reward[1]))

    # Then they diverge, each unaffected by the other.
    second = fork.fork()
    fork_action = np.zeros(envs.config.max_alternatives, dtype=np.int64)
    fork_action[:fork.info()["num_alternatives"]] = 1
    fork.step(fork_action)
    assert envs.info(1)["step"] == 2 and second.info()["step"] == 2
    assert fork.info()["step"] == 3
    _, _, _, _, infos = envs.step(np.zeros(envs.action_space.shape, dtype=np.int64))
    assert int(infos["fingerprint"][1]) != fork.info()["fingerprint"]
    assert second.info()["fingerprint"] == fork_info["fingerprint"]
    with pytest.raises(ValueError, match="out of range"):
        fork.step(np.full(envs.config.max_alternatives, 99, dtype=np.int64))


def test_default_pipeline_fuses_and_keeps_the_values(softmax_path):
    module = hlogym.HloModule.from_file(str(softmax_path))
    fused = module.clone()
    assert hlogym.Pipeline.default().run(fused) is False  # apply mode never pauses
    def entry_opcodes(m):
        entry = m.computations()[-1]
        return [opcode for _, opcode, _, computation in m.instructions() if computation == entry]
    assert "fusion" in entry_opcodes(fused)
    assert len(entry_opcodes(fused)) < len(entry_opcodes(module))
    assert hlogym.equivalent(module, fused)


def test_a_closed_env_says_so(files):
    envs = hlogym.make("fusion-v0", num_envs=2, dataset=files)
    envs.reset(seed=0)
    envs.close()
    for call in (lambda: envs.step(np.zeros(envs.action_space.shape, np.int64)),
                 lambda: envs.reset(seed=0), lambda: envs.module(0),
                 lambda: hlogym.make_agent("random").act(envs)):
        with pytest.raises(RuntimeError, match="this hlogym env is closed"):
            call()
    envs.close()  # closing twice is fine, as Gymnasium's envs


def test_send_takes_integer_env_ids_only(files):
    envs = hlogym.make("fusion-v0", num_envs=2, dataset=files, batch_size=1)
    envs.reset(seed=0)
    row = np.zeros((1, envs.config.max_alternatives), np.int64)
    with pytest.raises(ValueError, match="env_ids must be integers"):
        envs.send(row, [0.5])
    envs.send(row, [1])
    _, _, _, _, infos = envs.recv()
    assert infos["env_id"].tolist() == [1] and envs.info(0)["step"] == 0


FAULTY_HLO = """HloModule faulty

ENTRY main {
  p0 = f32[1024]{0} parameter(0)
  a0 = f32[1024]{0} negate(p0)
  ROOT c = f32[1024]{0} custom-call(a0), custom_call_target="hlogym.inject_fault", backend_config="segfault"
}
"""


def test_a_crashing_measurement_fails_its_env_only(files, tmp_path):
    # A deliberately crashing kernel (the CPU backend's fault-injection
    # custom-call) measured in a worker process: the envs that drew it get
    # the error in info["error"] (and a warning); this process, and the envs
    # on the other module, go on.
    (tmp_path / "faulty.hlo").write_text(FAULTY_HLO)
    dataset = [files[0], str(tmp_path / "faulty.hlo")]
    envs = hlogym.make("fusion-v0", num_envs=4, seed=0, dataset=dataset,
                       reward="cpu(isolate=1, min_runs=2, max_seconds=0.02)")
    failed = fine = 0
    with pytest.warns(RuntimeWarning, match="worker process was killed by signal 11"):
        obs, infos = envs.reset(seed=3)
        for _ in range(6):
            has_error = infos.get("_error", np.zeros(envs.num_envs, dtype=bool))
            for e in range(envs.num_envs):
                if has_error[e]:
                    failed += 1
                    assert "measuring module `faulty` on `cpu` failed: its worker process" in \
                        infos["error"][e]
                else:
                    fine += 1
                    assert infos["benchmark"][e] == 0
                    assert infos["current_runtime"][e] > 0
            actions = np.zeros(envs.action_space.shape, dtype=np.int64)
            obs, _, _, _, infos = envs.step(actions)
    assert failed > 0 and fine > 0
    envs.close()

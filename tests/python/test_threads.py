"""Python threads sharing hlogym objects: calls release the GIL while C++
works, so two threads can be inside one object at once. None of this may
crash or corrupt: pool calls take turns, a module is not changed while
another thread reads it, and one executable runs once at a time."""
import threading

import numpy as np

import hlogym
from conftest import DATA

SMALL = DATA / "corpus" / "small" / "hlo"


def run_in_threads(target, count):
    failures = []

    def guarded():
        try:
            target()
        except Exception as e:  # noqa: BLE001 -- collected, then asserted empty
            failures.append(e)

    threads = [threading.Thread(target=guarded) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_threads_may_share_a_pool():
    """Two threads stepping one pool used to crash the process."""
    files = [str(SMALL / f) for f in ("softmax_4096x1024_small.hlo", "gelu_4096x4096_small.hlo")]
    envs = hlogym.make("fusion-v0", num_envs=3, seed=0, dataset=files, max_steps=1000)
    envs.reset(seed=0)
    decline_all = np.zeros(envs.action_space.shape, dtype=np.int64)

    def step():
        for _ in range(30):
            envs.step(decline_all)
            envs.module(1)

    assert run_in_threads(step, 3) == []
    assert [envs.info(i)["step"] for i in range(3)] == [90, 90, 90]


def test_a_module_is_not_changed_while_another_thread_reads_it():
    module = hlogym.HloModule.from_file(str(DATA / "corpus" / "hlo" / "softmax_4096x1024.hlo"))
    expected = hlogym.evaluate(module)
    results = []
    reader = threading.Thread(target=lambda: results.append(hlogym.evaluate(module)))
    refused = None
    reader.start()
    while reader.is_alive() and refused is None:  # the evaluation takes ~0.2 s
        try:
            hlogym.run_pass(module, "fusion")
        except RuntimeError as e:
            refused = e
    reader.join()
    assert refused is not None, "the reader finished before any change was tried"
    assert "HloModule is being read by a call on another thread" in str(refused)
    assert all(np.array_equal(a, b) for a, b in zip(results[0], expected))
    hlogym.run_pass(module, "fusion")  # once the read is over: no error


def test_one_executable_runs_once_at_a_time():
    """An executable keeps one run's temporaries: runs on other inputs at once
    would mix them up."""
    module = hlogym.HloModule.from_file(str(SMALL / "softmax_4096x1024_small.hlo"))
    executable = hlogym.compile(module)
    base = hlogym.formula_inputs(module)
    inputs = [[x * (k + 1) for x in base] for k in range(3)]
    expected = [executable.run(list(i)) for i in inputs]
    wrong = []

    def run(k):
        for _ in range(50):
            out = executable.run(list(inputs[k]))
            if not all(np.array_equal(a, b) for a, b in zip(out, expected[k])):
                wrong.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []

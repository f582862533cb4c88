"""hlogym.compile on the CPU and GPU targets, and hlogym.emit_ptx."""
import numpy as np
import pytest

import hlogym

TANH = """HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  ROOT y = f32[4,3] tanh(x)
}"""


def _close(outputs, expected):
    """hlogym.equivalent's tolerances: rtol 1e-4 and atol 1e-5 (scaled by the
    output's magnitude) for f32/f64, 2e-2 for the 16-bit floats."""
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        if not (np.issubdtype(want.dtype, np.floating) or want.dtype.name == "bfloat16"):
            np.testing.assert_array_equal(got, want)
            continue
        tol = 2e-2 if want.dtype.itemsize <= 2 else 1e-4
        got, want = got.astype(np.float64), want.astype(np.float64)
        finite = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(finite.max()) if finite.size else 1.0)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol / 10 * scale)


def test_cpu_executable_matches_the_interpreter(corpus_small):
    for path in corpus_small[:6]:
        module = hlogym.HloModule.from_file(str(path))
        executable = hlogym.compile(module, backend="cpu")
        _close(executable.run(), hlogym.evaluate(module))
        assert executable.stats["backend"] == "cpu"


def test_stats_name_host_kernels_and_what_runs_on_the_interpreter(corpus_small):
    # cnn_mnist's max-pool gradient (select-and-scatter) is a host kernel, and
    # nothing of it runs on the interpreter.
    cnn = next(p for p in corpus_small if p.stem.startswith("cnn_mnist"))
    stats = hlogym.compile(hlogym.HloModule.from_file(str(cnn))).stats
    assert stats["host_ops"] >= 1
    assert stats["interpreter_ops"] == 0 and stats["interpreter_op_names"] == []


def test_run_takes_inputs_and_checks_their_count():
    module = hlogym.HloModule.from_text(TANH)
    executable = hlogym.compile(module)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(executable.run([x])[0], np.tanh(x), rtol=1e-6)
    with pytest.raises(ValueError, match="expected 1 inputs, got 2"):
        executable.run([x, x])


def test_measure_reports_a_positive_median():
    m = hlogym.compile(hlogym.HloModule.from_text(TANH)).measure()
    assert m["median_s"] > 0 and m["min_s"] <= m["median_s"] and m["runs"] >= 1


def test_profile_times_each_step_beside_the_cost_model():
    # Two kernels in the entry (the dot goes to BLAS, the tanh is compiled),
    # each timed and, where the model counts it, estimated.
    module = hlogym.HloModule.from_text("""HloModule m
ENTRY e {
  a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  d = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[64,16] tanh(d)
}""")
    steps = hlogym.compile(module).profile(runs=3)
    assert [s["instruction"] for s in steps] == ["d", "t"]
    assert [s["kind"] for s in steps] == ["blas-dot", "llvm"]
    model = hlogym.estimate(module, device="cpu")
    assert all(s["seconds"] > 0 for s in steps)
    assert sum(s["estimate_s"] for s in steps) == pytest.approx(model["seconds"])
    assert steps[0]["flops"] == pytest.approx(2 * 64 * 32 * 16)
    assert steps[1]["bytes"] == pytest.approx(2 * 64 * 16 * 4)
    with pytest.raises(ValueError, match="runs must be >= 1, got 0"):
        hlogym.compile(module).profile(runs=0)


def test_a_device_dict_estimates_as_the_named_device_and_can_be_edited(softmax_path):
    module = hlogym.HloModule.from_file(str(softmax_path))
    cpu = hlogym.device_spec("cpu")
    assert hlogym.estimate(module, cpu) == hlogym.estimate(module, "cpu")
    slower = dict(cpu, bandwidth_bytes_per_s=cpu["bandwidth_bytes_per_s"] / 2,
                  cache_bandwidth_bytes_per_s=cpu["cache_bandwidth_bytes_per_s"] / 2, name="half")
    halved = hlogym.estimate(module, slower)
    assert halved["device"] == "half"
    assert halved["seconds"] > hlogym.estimate(module, "cpu")["seconds"]
    with pytest.raises(ValueError, match="lacks 'peak_flops_per_s'"):
        hlogym.estimate(module, {k: v for k, v in cpu.items() if k != "peak_flops_per_s"})
    with pytest.raises(ValueError, match="'launch_seconds' must be at least 0, got -1"):
        hlogym.estimate(module, dict(cpu, launch_seconds=-1))
    with pytest.raises(ValueError, match="unknown device `tpu`"):
        hlogym.device_spec("tpu")


def test_calibrate_fits_the_cpu_model_to_timed_kernels(corpus_small):
    modules = [hlogym.HloModule.from_file(str(p)) for p in corpus_small
               if p.stem.startswith(("softmax", "layernorm_8192", "gelu"))]
    device = hlogym.calibrate(modules, runs=2)
    assert device["name"] == "cpu-calibrated" and device["samples"] >= 3
    for key in ("bandwidth_bytes_per_s", "peak_flops_per_s", "cache_bandwidth_bytes_per_s"):
        assert 0 < device[key] < float("inf")
    assert hlogym.estimate(modules[0], device)["seconds"] > 0
    with pytest.raises(ValueError, match="calibration needs at least 3 measured kernels, got 0"):
        hlogym.calibrate([])


def test_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="unknown backend 'tpu': use 'cpu' or 'gpu'"):
        hlogym.compile(hlogym.HloModule.from_text(TANH), backend="tpu")


def test_emit_ptx_has_one_entry_per_kernel_without_a_gpu(softmax_path):
    ptx = hlogym.emit_ptx(hlogym.HloModule.from_file(str(softmax_path)))
    assert ".target sm_90" in ptx
    kernels = ptx.count("// hlogym_kernel_")
    assert kernels > 0 and ptx.count(".visible .entry") == kernels


def test_gpu_backend_without_a_gpu_says_so():
    try:
        has_gpu = hlogym.cuda_device_count() > 0
    except RuntimeError:
        has_gpu = False
    if has_gpu:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="cpu"):
        hlogym.compile(hlogym.HloModule.from_text(TANH), backend="gpu")


@pytest.mark.gpu
def test_gpu_executable_matches_the_interpreter_on_every_small_twin(corpus_small):
    for path in corpus_small:
        module = hlogym.HloModule.from_file(str(path))
        executable = hlogym.compile(module, backend="gpu")
        _close(executable.run(), hlogym.evaluate(module))
        assert executable.measure()["median_s"] > 0

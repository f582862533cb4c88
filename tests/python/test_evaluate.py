"""The Python interpreter API, checked against the corpus oracle and XLA."""
import json

import numpy as np
import pytest

import hlogym
from conftest import DATA


def test_evaluate_matches_the_small_twin_oracle():
    name = "softmax_4096x1024_small"
    module = hlogym.HloModule.from_file(str(DATA / "corpus" / "small" / "hlo" / f"{name}.hlo"))
    oracle = json.loads((DATA / "corpus" / "small" / "oracle" / f"{name}.json").read_text())
    outputs = hlogym.evaluate(module)
    assert len(outputs) == len(oracle["outputs"])
    record = oracle["outputs"][0]
    assert list(outputs[0].shape) == record["shape"]
    flat = outputs[0].reshape(-1)
    np.testing.assert_allclose(flat[record["sample_index"]], np.array(record["sample"]),
                               rtol=1e-5, atol=1e-7)
    assert abs(flat.sum() - record["sum"]) <= 1e-3 * record["abs_sum"]


def test_evaluate_with_explicit_inputs_and_errors():
    module = hlogym.HloModule.from_text(
        "HloModule m\n\nENTRY main {\n  x = f32[3]{0} parameter(0)\n  ROOT y = f32[3]{0} add(x, x)\n}\n")
    (out,) = hlogym.evaluate(module, [np.array([1, 2, 3], dtype=np.float32)])
    np.testing.assert_array_equal(out, [2, 4, 6])
    # The input's shape as numpy prints it (it read "<NULL>").
    with pytest.raises(ValueError, match=r"input 0 has shape \(4,\) but the parameter is f32\[3\]"):
        hlogym.evaluate(module, [np.zeros(4, dtype=np.float32)])
    with pytest.raises(ValueError, match=r"input 0 has shape \(3, 1\)"):
        hlogym.evaluate(module, [np.zeros((3, 1), dtype=np.float32)])
    with pytest.raises(ValueError, match="expected 1 inputs"):
        hlogym.evaluate(module, [])
    inputs = hlogym.formula_inputs(module)
    np.testing.assert_allclose(inputs[0], np.sin(0.5 * np.arange(3) + 0.3).astype(np.float32))


def test_equivalent_reports_the_first_mismatch():
    base = "HloModule m\n\nENTRY main {\n  x = f32[3]{0} parameter(0)\n  ROOT y = f32[3]{0} %s(x)\n}\n"
    a = hlogym.HloModule.from_text(base % "negate")
    b = hlogym.HloModule.from_text(base % "abs")
    assert hlogym.equivalent(a, a)["equivalent"]
    report = hlogym.equivalent(a, b)
    assert not report["equivalent"]
    assert report["output_index"] == 0 and report["element_index"] == 0
    assert "output 0, element 0" in report["message"]

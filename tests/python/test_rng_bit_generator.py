"""rng-bit-generator against XLA:CPU, bit for bit: every algorithm, output
widths from 2 to 64 bits (integer and float element types), odd and even
shapes, and states whose counters wrap. Skipped where jax is not installed."""
import numpy as np
import pytest

import hlogym

jax = pytest.importorskip("jax")

from xla_oracle import run_xla  # noqa: E402

ALGORITHMS = ["rng_three_fry", "rng_philox", "rng_default"]
SHAPES = ["[]", "[7]", "[3,5]", "[2,3,4]", "[5,1,3]", "[4,6]", "[0,3]"]
MAX = np.iinfo(np.uint64).max
STATES = {
    "small": [5, 7, 9],
    "random": [0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x0F1E2D3C4B5A6978],
    # The counter word overflows during the call (and for Philox with a
    # three-word state the carry reaches the high word).
    "wrapping": [42, MAX - 2, 11],
    "all_ones": [MAX, MAX, MAX],
}
OTHER_TYPES = ["u8", "s8", "u16", "s16", "s32", "s64", "f16", "bf16", "f32", "f64", "u4", "s4",
               "u2", "f8e4m3fn", "f8e5m2"]


# Element types hlogym's numpy bridge does not hand out: the module widens
# them to a type it does (the same instruction in both runs), by value for
# sub-byte integers and by bits for f8.
WIDENED = {"u4": ("u8", "convert"), "s4": ("s8", "convert"), "u2": ("u8", "convert"),
           "f8e4m3fn": ("u8", "bitcast-convert"), "f8e5m2": ("u8", "bitcast-convert")}


def generator(name, algorithm, state, out):
    """HLO lines computing rng-bit-generator `name` on parameter s; returns
    (lines, its output names)."""
    dtype, dims = out[:out.index("[")], out[out.index("["):]
    lines = [f"  {name} = ({state}, {out}) rng-bit-generator(s), algorithm={algorithm}",
             f"  {name}.st = {state} get-tuple-element({name}), index=0",
             f"  {name}.bits = {out} get-tuple-element({name}), index=1"]
    if dtype not in WIDENED:
        return lines, [(f"{name}.st", state), (f"{name}.bits", out)]
    wide, op = WIDENED[dtype]
    lines.append(f"  {name}.w = {wide}{dims} {op}({name}.bits)")
    return lines, [(f"{name}.st", state), (f"{name}.w", wide + dims)]


def module_text(algorithm, state, outs):
    """One module running one generator per requested output on the same
    state, returning every new state and every output (one XLA compile)."""
    lines, results = [], []
    for k, out in enumerate(outs):
        more, names = generator(f"g{k}", algorithm, state, out)
        lines += more
        results += names
    shapes = ", ".join(shape for _, shape in results)
    operands = ", ".join(name for name, _ in results)
    return ("HloModule m\n\nENTRY e {\n  s = " + state + " parameter(0)\n" + "\n".join(lines) +
            f"\n  ROOT t = ({shapes}) tuple({operands})\n}}\n")


def state_shapes(algorithm):
    return ["u64[2]"] if algorithm == "rng_three_fry" else ["u64[2]", "u64[3]"]


def bits_of(array):
    """The raw bits as unsigned integers (XLA:CPU returns the unsigned type
    of the requested width whatever element type the HLO asks for)."""
    array = np.asarray(array)
    return array.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[
        array.dtype.itemsize])


def compare(algorithm, state_shape, outs, state_values):
    text = module_text(algorithm, state_shape, outs)
    words = int(state_shape[4:-1])
    state = np.array(state_values[:words], dtype=np.uint64)
    ours = hlogym.evaluate(hlogym.HloModule.from_text(text), [state])
    with jax.enable_x64(True):
        theirs = run_xla(text, [state])
    assert len(ours) == len(theirs) == 2 * len(outs)
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(ours[2 * k], theirs[2 * k], err_msg=f"new state, {out}")
        a, b = np.asarray(ours[2 * k + 1]), np.asarray(theirs[2 * k + 1])
        assert a.shape == b.shape, out
        if out.startswith("s4"):
            # XLA's builder retypes the generator's result as unsigned (u4
            # here), so its widening convert zero-extends where ours
            # sign-extends the same four bits: compare those bits.
            a, b = a & 0xF, b & 0xF
        np.testing.assert_array_equal(bits_of(a), bits_of(b), err_msg=out)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("state_name", sorted(STATES))
def test_u32_and_u64_match_xla(algorithm, state_name):
    outs = [dtype + shape for dtype in ["u32", "u64"] for shape in SHAPES]
    for state_shape in state_shapes(algorithm):
        compare(algorithm, state_shape, outs, STATES[state_name])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_other_element_types_match_xla(algorithm):
    outs = [dtype + shape for dtype in OTHER_TYPES for shape in ["[3,5]", "[4]"]]
    for state_shape in state_shapes(algorithm):
        compare(algorithm, state_shape, outs, STATES["random"])


def test_large_output_matches_xla():
    for algorithm in ALGORITHMS:
        compare(algorithm, "u64[2]", ["u32[129,257]", "u64[33,65]", "u16[17,31,3]"],
                STATES["wrapping"])


def test_default_is_philox():
    text = module_text("rng_default", "u64[2]", ["u32[3,5]", "u64[7]"])
    philox = module_text("rng_philox", "u64[2]", ["u32[3,5]", "u64[7]"])
    state = np.array(STATES["random"][:2], dtype=np.uint64)
    a = hlogym.evaluate(hlogym.HloModule.from_text(text), [state])
    b = hlogym.evaluate(hlogym.HloModule.from_text(philox), [state])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_unsupported_state_is_a_clear_error():
    text = module_text("rng_three_fry", "u64[3]", ["u32[4]"])
    with pytest.raises(NotImplementedError, match=r"rng_three_fry with state u64\[3\].*`g0`"):
        hlogym.evaluate(hlogym.HloModule.from_text(text), [np.zeros(3, np.uint64)])

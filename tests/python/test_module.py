"""The Python IR API: HloModule, errors, round trips."""
import copy
import pickle

import pytest

import hlogym

SMALL = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY main {
  x = f32[4]{0} parameter(0)
  n = f32[4]{0} negate(x)
  ROOT e = f32[4]{0} exponential(n)
}
"""


def test_from_text_and_properties():
    module = hlogym.HloModule.from_text(SMALL)
    assert module.name == "m"
    assert module.instruction_count == 3
    assert module.computation_count == 1
    assert module.computations() == ["main"]
    assert [row[:3] for row in module.instructions()] == [
        ("x", "parameter", "f32[4]{0}"), ("n", "negate", "f32[4]{0}"),
        ("e", "exponential", "f32[4]{0}")]


def test_round_trip_keeps_the_fingerprint(corpus_small):
    for path in corpus_small:
        module = hlogym.HloModule.from_file(str(path))
        again = hlogym.HloModule.from_text(module.to_text())
        assert again.fingerprint() == module.fingerprint(), path.name
        assert again.to_text() == module.to_text(), path.name


def test_fingerprint_ignores_names_but_not_structure():
    a = hlogym.HloModule.from_text(SMALL)
    b = hlogym.HloModule.from_text(SMALL.replace(" n ", " renamed ").replace("(n)", "(renamed)"))
    c = hlogym.HloModule.from_text(SMALL.replace("negate", "abs"))
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != c.fingerprint()
    assert a.clone().fingerprint() == a.fingerprint()


def test_copy_and_pickle_make_whole_copies():
    module = hlogym.HloModule.from_text(SMALL)
    for twin in (copy.copy(module), copy.deepcopy(module), pickle.loads(pickle.dumps(module))):
        assert twin is not module
        assert twin.fingerprint() == module.fingerprint()
        assert twin.to_text() == module.to_text()
    twin = copy.copy(module)
    hlogym.run_pass(twin, "fusion")
    assert twin.fingerprint() != module.fingerprint()  # the copy is its own module


def test_parse_errors_name_line_and_column():
    with pytest.raises(hlogym.HloParseError, match=r"line 6, column 3"):
        hlogym.HloModule.from_text(SMALL.replace("negate(x)", "negate(x"))
    with pytest.raises(ValueError):  # HloParseError is a ValueError
        hlogym.HloModule.from_text("\x00\xff garbage")


def test_verify_errors_name_the_instruction():
    bad = SMALL.replace("n = f32[4]{0} negate(x)", "n = f32[5]{0} negate(x)")
    with pytest.raises(hlogym.HloVerifyError) as error:
        hlogym.HloModule.from_text(bad)
    assert str(error.value) == (
        "line 5, column 3: computation `main`, instruction `n`: negate's shape does not match "
        "its operands and attributes (expected f32[4], got f32[5])")


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        hlogym.HloModule.from_file(str(tmp_path / "nope.hlo"))


def test_from_file_takes_a_path_object(softmax_path):
    """pathlib.Path is what users (and conftest) hold; str-only failed with
    pybind11's 'incompatible function arguments'."""
    assert softmax_path.__class__.__name__.endswith("Path")
    module = hlogym.HloModule.from_file(softmax_path)
    assert module.fingerprint() == hlogym.HloModule.from_file(str(softmax_path)).fingerprint()


def test_from_file_on_a_directory_is_an_os_error(tmp_path):
    """Not a parse error at 'line 1, column 1' of an empty text."""
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        hlogym.HloModule.from_file(str(tmp_path))

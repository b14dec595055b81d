"""Compiling a program once in the parent: the loaded code is the compiled code."""

from __future__ import annotations

import marshal

import pytest

from factory.program_code import PROGRAM_FILENAME, portable_code, program_code

SOURCE = "def f(x):\n    y = [x, (1, 'a'), -0.0, 2j]\n    assert y\n    return y\n"


def test_loaded_code_is_what_the_worker_would_compile() -> None:
    shipped = portable_code(SOURCE)
    assert shipped is not None
    loaded = program_code(SOURCE, shipped)
    assert marshal.dumps(loaded) == marshal.dumps(program_code(SOURCE))
    assert loaded.co_filename == PROGRAM_FILENAME
    namespace: dict = {}
    exec(loaded, namespace)
    assert namespace["f"](3) == [3, (1, "a"), -0.0, 2j]


def test_asserts_stay_whatever_the_optimization_level() -> None:
    namespace: dict = {}
    exec(program_code("def f():\n    assert False, 'kept'\n"), namespace)
    with pytest.raises(AssertionError, match="kept"):
        namespace["f"]()


def test_shipped_code_is_used_instead_of_compiling() -> None:
    namespace: dict = {}
    exec(program_code("def f():\n    return 1\n", portable_code("def f():\n    return 2\n")), namespace)
    assert namespace["f"]() == 2


@pytest.mark.parametrize("shipped", [b"", b"\x00garbage", marshal.dumps((1, 2)), "text"])
def test_unusable_shipped_bytes_fall_back_to_compiling(shipped: object) -> None:
    namespace: dict = {}
    exec(program_code("def f():\n    return 1\n", shipped), namespace)  # type: ignore[arg-type]
    assert namespace["f"]() == 1


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\n    return x in {'a', 'b', 'c'}\n",  # folded to a frozenset constant
        "def f(x):\n    def g():\n        return [y for y in {'a', 'b'}]\n    return g()\n",
    ],
)
def test_frozenset_constants_are_never_shipped(source: str) -> None:
    # Their iteration order follows the hash seed of the process that builds them.
    assert any(isinstance(c, frozenset) for c in _all_consts(program_code(source)))
    assert portable_code(source) is None


@pytest.mark.parametrize("source", ["def f(:\n", "x = 1\0\n", "x = " + "(" * 300 + ")" * 300])
def test_a_source_that_does_not_compile_is_not_shipped(source: str) -> None:
    assert portable_code(source) is None


def _all_consts(code) -> list:
    out = []
    for c in code.co_consts:
        out.append(c)
        if hasattr(c, "co_consts"):
            out += _all_consts(c)
    return out


def test_compile_time_warnings_stay_out_of_the_parents_console(capfd: pytest.CaptureFixture[str]) -> None:
    import warnings

    source = "def f(x):\n    return x is 'a' or '\\d' == x\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # even where warnings are errors, the program ships
        assert portable_code(source) is not None
    assert capfd.readouterr().err == ""

"""A type's ``strategy`` is checked at load time against the hypothesis.strategies function it names.

Each case copies the real grammar (``grammars/python``), breaks one strategy in one file, and
expects one GrammarError ``<file>:<line>: ...`` at the offending key, never a Hypothesis traceback
later in the inputs stage.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory.errors import UserError
from factory.grammar.loader import GrammarError, load_grammar

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / "grammars" / "python"

# A block-style strategy, so that each argument has its own line (the flow style puts all on one).
INT_BLOCK = """\
strategy:
  kind: integers
  min_value: 0
  max_value: 20
"""


def _broken_copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    folder = tmp_path / "python"
    shutil.copytree(PYTHON, folder)
    path = folder / name
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not once in {name}"
    path.write_text(text.replace(old, new))
    return path


def _int_block(tmp_path: Path, block: str) -> tuple[Path, int]:
    """int.yaml with its strategy written in block style; also the line of the strategy key."""
    path = _broken_copy(
        tmp_path, "int.yaml", "strategy: {kind: integers, min_value: 0, max_value: 20}\n", block
    )
    line = path.read_text().splitlines().index("strategy:") + 1
    return path, line


def _error(folder: Path) -> str:
    with pytest.raises(GrammarError) as info:
        load_grammar(folder)
    assert isinstance(info.value, UserError)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_the_real_grammar_loads() -> None:
    grammar = load_grammar(PYTHON)
    assert grammar.types["int"].strategy == {"kind": "integers", "min_value": 0, "max_value": 20}


def test_unknown_argument_suggests_the_closest(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK.replace("max_value", "max_valu"))
    assert _error(path.parent) == (
        f"{path}:{line + 3}: type 'int': strategy integers: unknown argument 'max_valu' "
        "(did you mean 'max_value'?)"
    )


def test_unknown_argument_without_a_close_name_lists_the_known_ones(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK + "  colour: red\n")
    message = _error(path.parent)
    assert message.startswith(f"{path}:{line + 4}: type 'int': strategy integers: unknown argument 'colour'")
    assert "integers takes min_value, max_value" in message


def test_element_strategy_is_checked_too(tmp_path: Path) -> None:
    old = 'element_strategy: {kind: text, alphabet: "abcde", min_size: 1, max_size: 2}'
    path = _broken_copy(tmp_path, "str.yaml", old, old.replace("max_size", "maxsize"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("element_strategy"))
    assert _error(path.parent) == (
        f"{path}:{line}: type 'str': element_strategy text: unknown argument 'maxsize' "
        "(did you mean 'max_size'?)"
    )


def test_tuples_takes_no_named_arguments(tmp_path: Path) -> None:
    path = _broken_copy(
        tmp_path, "pair.yaml", "strategy: {kind: tuples}", "strategy: {kind: tuples, min_size: 1}"
    )
    assert "strategy tuples: unknown argument 'min_size' (tuples takes no named arguments)" in _error(
        path.parent
    )


def test_missing_required_argument_points_at_kind(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path, "bool.yaml", "strategy: {kind: booleans}", "strategy:\n  kind: just\n")
    line = path.read_text().splitlines().index("  kind: just") + 1
    assert (
        _error(path.parent) == f"{path}:{line}: type 'bool': strategy just: missing required argument 'value'"
    )


def test_a_wrong_value_is_hypothesis_message_at_its_key(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK.replace("  kind: integers\n", "  kind: floats\n  width: 7\n"))
    message = _error(path.parent)
    assert message.startswith(f"{path}:{line + 2}: type 'int': strategy floats: Got width=7"), message
    old = 'element_strategy: {kind: text, alphabet: "abcde", min_size: 1, max_size: 2}'
    path = _broken_copy(tmp_path / "b", "str.yaml", old, old.replace("max_size: 2", "max_size: two"))
    assert "element_strategy text: Expected int but got max_size='two'" in _error(path.parent)


def test_a_type_parameter_argument_that_is_no_strategy(tmp_path: Path) -> None:
    old = "keys: K,"
    path = _broken_copy(tmp_path, "dict.yaml", old, "keys: 5,")
    assert "strategy dictionaries: Expected a SearchStrategy but got keys=5" in _error(path.parent)


def test_strategy_kind_and_convert_suggest_the_closest(tmp_path: Path) -> None:
    path = _broken_copy(
        tmp_path / "a", "int.yaml", "{kind: integers, min_value: 0, max_value: 10}", "{kind: intgers}"
    )
    assert (
        "strategy kind 'intgers' is not a hypothesis.strategies function (did you mean 'integers'?)"
        in _error(path.parent)
    )
    path = _broken_copy(
        tmp_path / "b", "bool.yaml", "strategy: {kind: booleans}", "strategy: {kind: composite}"
    )
    assert "strategy kind 'composite' is not a hypothesis.strategies function" in _error(path.parent)
    path = _broken_copy(tmp_path / "c", "tuple.yaml", "convert: tuple", "convert: tupel")
    line = path.read_text().splitlines().index("convert: tupel") + 1
    assert (
        _error(path.parent)
        == f"{path}:{line}: type 'tuple': convert 'tupel' is not a Python builtin (did you mean 'tuple'?)"
    )


def _execverify(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from factory.cli import main; main(sys.argv[1:])"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def test_cli_grammar_check_one_line_exit_2(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK.replace("max_value", "max_valu"))
    result = _execverify("grammar", "check", str(path.parent))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"execverify: error: {path}:{line + 3}: type 'int': strategy integers: unknown argument 'max_valu' "
        "(did you mean 'max_value'?)"
    ]
    assert result.stdout == ""
    ok = _execverify("grammar", "check", str(PYTHON))
    assert ok.returncode == 0 and ": ok — " in ok.stdout, ok.stderr

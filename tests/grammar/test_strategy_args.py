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

# A block-style element strategy, so that each argument has its own line (the flow style puts all
# on one).
INT_BLOCK = """\
element_strategy:
  kind: integers
  min_value: -5
  max_value: 20
"""
INT_ELEMENT = "element_strategy: {kind: integers, min_value: -5, max_value: 20}\n"
STR_LETTERS = '{weight: 3, kind: text, alphabet: "abcdex", min_size: 1, max_size: 1}'


def _broken_copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    folder = tmp_path / "python"
    shutil.copytree(PYTHON, folder)
    path = folder / name
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} is not once in {name}"
    path.write_text(text.replace(old, new))
    return path


def _int_block(tmp_path: Path, block: str) -> tuple[Path, int]:
    """int.yaml with its element strategy written in block style; also the line of its key."""
    path = _broken_copy(tmp_path, "int.yaml", INT_ELEMENT, block)
    line = path.read_text().splitlines().index("element_strategy:") + 1
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
    assert grammar.types["int"].element_strategy == {"kind": "integers", "min_value": -5, "max_value": 20}
    mixture = grammar.types["int"].strategy
    assert mixture["kind"] == "mixture" and [b["weight"] for b in mixture["of"]] == [80.0, 15.0, 5.0]
    # a word list file is read into its words
    words = next(b for b in grammar.types["str"].strategy["of"] if b["kind"] == "words")["words"]
    assert isinstance(words, tuple) and len(words) >= 200 and "apple" in words


def test_unknown_argument_suggests_the_closest(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK.replace("max_value", "max_valu"))
    assert _error(path.parent) == (
        f"{path}:{line + 3}: type 'int': element_strategy integers: unknown argument 'max_valu' "
        "(did you mean 'max_value'?)"
    )


def test_unknown_argument_without_a_close_name_lists_the_known_ones(tmp_path: Path) -> None:
    path, line = _int_block(tmp_path, INT_BLOCK + "  colour: red\n")
    message = _error(path.parent)
    assert message.startswith(
        f"{path}:{line + 4}: type 'int': element_strategy integers: unknown argument 'colour'"
    )
    assert "integers takes min_value, max_value" in message


def test_element_strategy_branches_are_checked_too(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path, "str.yaml", STR_LETTERS, STR_LETTERS.replace("max_size", "maxsize"))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "maxsize" in t)
    assert _error(path.parent) == (
        f"{path}:{line}: type 'str': element_strategy mixture branch 2 text: unknown argument 'maxsize' "
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
    assert message.startswith(f"{path}:{line + 2}: type 'int': element_strategy floats: Got width=7"), message
    path = _broken_copy(tmp_path / "b", "str.yaml", STR_LETTERS, STR_LETTERS.replace('"abcdex"', "5"))
    expected = "element_strategy mixture branch 2 text: Expected one of Collection, SearchStrategy"
    assert f"{expected} but got alphabet=5" in _error(path.parent)
    path = _broken_copy(
        tmp_path / "c", "str.yaml", STR_LETTERS, STR_LETTERS.replace("max_size: 1", "max_size: two")
    )
    assert "element_strategy mixture branch 2 max_size must be a number" in _error(path.parent)


def test_a_type_parameter_argument_that_is_no_strategy(tmp_path: Path) -> None:
    old = "keys: K, values: V, min_size: 2,"
    path = _broken_copy(tmp_path, "dict.yaml", old, "keys: 5, values: V, min_size: 2,")
    message = _error(path.parent)
    assert "strategy mixture branch 1 dictionaries: Expected a SearchStrategy but got keys=5" in message


def test_strategy_kind_and_convert_suggest_the_closest(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path / "a", "int.yaml", INT_ELEMENT, "element_strategy: {kind: intgers}\n")
    assert _error(path.parent).endswith(
        "element_strategy kind 'intgers' is not a hypothesis.strategies function nor one of mixture, "
        "readable_floats, words (did you mean 'integers'?)"
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
        f"execverify: error: {path}:{line + 3}: type 'int': element_strategy integers: unknown argument "
        "'max_valu' "
        "(did you mean 'max_value'?)"
    ]
    assert result.stdout == ""
    ok = _execverify("grammar", "check", str(PYTHON))
    assert ok.returncode == 0 and ": ok — " in ok.stdout, ok.stderr


# --- the project's strategy kinds: words, readable_floats, mixture -------------------------------

WORD_BRANCH = "{weight: 12, kind: words, words: words.txt}"


def test_a_bad_word_points_at_its_line_in_the_word_list(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path, "str.yaml", WORD_BRANCH, "{weight: 12, kind: words, words: few.txt}")
    (path.parent / "few.txt").write_text("# a comment\nred green\nblue Teal\n")
    assert _error(path.parent) == f"{path.parent / 'few.txt'}:3: word 'Teal' must be lower-case ASCII letters"
    (path.parent / "few.txt").write_text("red green\n\nblue red\n")
    assert _error(path.parent) == f"{path.parent / 'few.txt'}:3: word 'red' is listed twice (first at line 1)"


def test_words_arguments_are_checked(tmp_path: Path) -> None:
    path = _broken_copy(tmp_path / "a", "str.yaml", WORD_BRANCH, WORD_BRANCH[:-1] + ", case: shouty}")
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "shouty" in t)
    assert _error(path.parent) == (
        f"{path}:{line}: type 'str': strategy mixture branch 3 words: case 'shouty' is not one of "
        "lower, upper, title, capitalize, mixed"
    )
    path = _broken_copy(tmp_path / "b", "str.yaml", WORD_BRANCH, WORD_BRANCH[:-1] + ", max_length: 1}")
    assert "words: no word of at most max_length=1 letters in the word list" in _error(path.parent)
    path = _broken_copy(tmp_path / "c", "str.yaml", WORD_BRANCH, "{weight: 12, kind: words, words: ../x.txt}")
    assert "words: 'words' must name a file of the grammar folder, got '../x.txt'" in _error(path.parent)


def test_readable_floats_and_mixture_arguments_are_checked(tmp_path: Path) -> None:
    path = _broken_copy(
        tmp_path / "a", "float.yaml", "denominators: [1, 2, 4, 10, 100]", "denominators: [4, 0]"
    )
    assert (
        "strategy mixture branch 1 readable_floats: denominators must be positive integers, got [4, 0]"
        in _error(path.parent)
    )
    old = "    - {weight: 5, kind: lists, elements: T, max_size: 0}"
    path = _broken_copy(tmp_path / "b", "list.yaml", old, "    - {weight: 5, kind: mixture, of: []}")
    assert "strategy mixture branch 3 mixture: 'of' must be a non-empty list of strategies" in _error(
        path.parent
    )
    path = _broken_copy(tmp_path / "c", "list.yaml", old, "    - {weight: 5, kind: lists, elements: U}")
    assert "strategy mixture branch 3 elements must name a type parameter ['T']" in _error(path.parent)


def test_the_grammar_hash_covers_the_word_lists(tmp_path: Path) -> None:
    folder = tmp_path / "python"
    shutil.copytree(PYTHON, folder)
    before = load_grammar(folder).grammar_hash
    words = folder / "words.txt"
    words.write_text(words.read_text() + "zebra\n")
    assert load_grammar(folder).grammar_hash != before
    assert load_grammar(PYTHON).grammar_hash == before


# --- names by role, identity arguments, output weights ------------------------------------------


def test_every_operation_with_a_result_has_names_by_role() -> None:
    grammar = load_grammar(PYTHON)
    for op in grammar.operations:
        if op.returns is not None:
            assert 3 <= len(op.names) <= 6, op.op_id
        else:
            assert op.names == (), op.op_id
    for spec in grammar.types.values():
        assert 6 <= len(spec.names) <= 15, spec.name
    assert grammar.op("str.len").names[:2] == ("length", "size")


def test_identity_arguments_and_output_weights_load() -> None:
    grammar = load_grammar(PYTHON)
    identity = {(op.op_id, a.name): a.identity for op in grammar.operations for a in op.args if a.identity}
    assert identity[("str.removeprefix", "prefix")] == ("''",)
    assert identity[("int.mul", "other")] == ("0", "1")
    assert identity[("list.add", "other")] == ("[]",)
    assert identity[("set.union", "other")] == ("set()",)
    assert grammar.output_weight("str") == 10.0 and grammar.output_weight("bool") == 0.25
    assert grammar.output_weight("no_such_type") == 1.0

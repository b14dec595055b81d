"""The language registry: Python is built in, others register or are named in the environment; an
unknown name lists the known; a grammar folder names its language."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from factory.grammar.loader import GrammarError, load_grammar
from factory.languages import (
    LANGUAGES_ENV,
    UnknownLanguage,
    grammar_language,
    known_languages,
    language,
    language_of_file,
    register,
    unregister,
)
from factory.languages.python import PYTHON, PythonLanguage

REPO = Path(__file__).resolve().parents[2]


class Other(PythonLanguage):
    name = "other"


def test_python_is_built_in() -> None:
    assert language("python") is PYTHON
    assert "python" in known_languages()


def test_an_unknown_language_names_the_known_ones() -> None:
    with pytest.raises(UnknownLanguage, match=r"unknown language 'cobol' \(known: javascript, python\)"):
        language("cobol")


def test_a_file_s_extension_names_its_language() -> None:
    assert language_of_file("dir/prog.py") is PYTHON
    assert language_of_file(Path("prog.js")) is language("javascript")
    for path, shown in (
        ("prog.txt", "extension '.txt'"),
        ("prog.mjs", "extension '.mjs'"),
        ("prog", "no extension"),
    ):
        with pytest.raises(
            UnknownLanguage, match=re.escape(f"{path}: {shown} names no language (known: javascript")
        ):
            language_of_file(path)
    register(Other())  # claims ".py" too, as a subclass of Python's: the built-in comes first
    try:
        assert language_of_file("prog.py") is PYTHON
    finally:
        unregister("other")


def test_register_and_unregister() -> None:
    other = Other()
    register(other)
    try:
        assert language("other") is other
        assert known_languages() == ["javascript", "other", "python"]
        with pytest.raises(ValueError, match="already registered"):
            register(Other())
    finally:
        unregister("other")
    with pytest.raises(UnknownLanguage):
        language("other")
    with pytest.raises(ValueError, match="built in"):
        unregister("python")


def test_the_environment_names_languages_every_process_can_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LANGUAGES_ENV, "other=factory.languages.python:PYTHON")
    try:
        assert language("other") is PYTHON  # imported by name, as a worker process would
        assert known_languages() == ["javascript", "other", "python"]
    finally:
        unregister("other")
    monkeypatch.setenv(LANGUAGES_ENV, "other")
    with pytest.raises(ValueError, match="not name=module:attribute"):
        language("other")


def test_grammar_language_reads_the_statements_key(tmp_path: Path) -> None:
    assert grammar_language(REPO / "grammars" / "python") == "python"
    folder = tmp_path / "cobol"
    shutil.copytree(REPO / "grammars" / "python", folder)
    statements = folder / "statements.yaml"
    statements.write_text(statements.read_text().replace("statements: python", "statements: cobol"))
    with pytest.raises(GrammarError) as raised:
        grammar_language(folder)
    with pytest.raises(GrammarError) as loaded:
        load_grammar(folder)
    assert str(raised.value) == str(loaded.value)
    assert re.fullmatch(
        r".*statements\.yaml:\d+: statements: unknown language 'cobol' \(known: javascript, python\)",
        str(raised.value),
    )
    with pytest.raises(GrammarError, match="grammar folder not found"):
        grammar_language(tmp_path / "missing")

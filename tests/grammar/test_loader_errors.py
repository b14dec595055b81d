"""A broken grammar file gives one GrammarError, ``<file>:<line>: message``, naming the right spot.

Each file in ``fixtures/broken/`` is dropped into a copy of the valid ``fixtures/minimal/`` grammar
(under its own name, or the name its ``# as:`` header gives) and its ``# expect: LINE: TEXT`` header
says where the error must point and what it must say.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from factory.grammar.loader import GrammarError, load_grammar

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = sorted((FIXTURES / "broken").glob("*.yaml"))


def _header(path: Path, key: str) -> str | None:
    for line in path.read_text().splitlines():
        match = re.match(rf"#\s*{key}:\s*(.*)", line)
        if match:
            return match.group(1).strip()
    return None


def _grammar_with(tmp_path: Path, broken: Path) -> tuple[Path, Path, int, str]:
    folder = tmp_path / "python"
    shutil.copytree(FIXTURES / "minimal", folder)
    target = folder / (_header(broken, "as") or broken.name)
    shutil.copy(broken, target)
    expect = _header(broken, "expect")
    assert expect, f"{broken.name} needs an '# expect: LINE: TEXT' header"
    line, _, text = expect.partition(":")
    return folder, target, int(line), text.strip()


def test_minimal_fixture_grammar_is_valid() -> None:
    grammar = load_grammar(FIXTURES / "minimal")
    assert grammar.targets() == ["int.add", "list.pop"]
    assert grammar.language == "python"  # named by the statements file, not by the folder


@pytest.mark.parametrize("broken", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_grammar_points_at_file_and_line(tmp_path: Path, broken: Path) -> None:
    folder, target, line, text = _grammar_with(tmp_path, broken)
    with pytest.raises(GrammarError) as info:
        load_grammar(folder)
    message = str(info.value)
    assert message.startswith(f"{target}:{line}: "), message
    assert text in message, message
    assert "\n" not in message


def test_missing_folder_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(GrammarError, match=r"nope:0: grammar folder not found"):
        load_grammar(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(GrammarError, match=r"empty:0: no \*\.yaml grammar files"):
        load_grammar(tmp_path / "empty")


def test_two_files_defining_one_type(tmp_path: Path) -> None:
    folder = tmp_path / "python"
    shutil.copytree(FIXTURES / "minimal", folder)
    shutil.copy(folder / "int.yaml", folder / "z_int.yaml")
    where = re.escape(str(folder / "z_int.yaml"))
    with pytest.raises(GrammarError, match=rf"^{where}:1: type 'int' is defined twice"):
        load_grammar(folder)


# --- the command line: `execverify grammar check PATH` ------------------------------------------


def _execverify(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from factory.cli import main; main(sys.argv[1:])"
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def grammar_check_available() -> None:
    result = _execverify("grammar", "check", str(FIXTURES / "minimal"))
    missing = ("No such command", "ModuleNotFoundError", "ImportError")
    if result.returncode != 0 and any(m in result.stderr for m in missing):
        pytest.skip("`execverify grammar check` is not available yet")


def test_cli_grammar_check_accepts_the_python_grammar(grammar_check_available: None) -> None:
    result = _execverify("grammar", "check", "grammars/python")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "name", ["unknown_key.yaml", "yaml_syntax.yaml", "unknown_source.yaml", "unknown_language.yaml"]
)
def test_cli_grammar_check_reports_one_line(tmp_path: Path, name: str, grammar_check_available: None) -> None:
    folder, target, line, text = _grammar_with(tmp_path, FIXTURES / "broken" / name)
    result = _execverify("grammar", "check", str(folder))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{target}:{line}: " in lines[0] and text in lines[0]
    assert "Traceback" not in result.stderr

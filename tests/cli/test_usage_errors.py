"""Usage mistakes (an unknown command or option, a bad or missing value) through the installed
console script: one line on stderr naming the mistake, with where help is, and exit code 2."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(execverify: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], capture_output=True, text=True, timeout=120, cwd=REPO)


def assert_one_line_exit_2(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), proc.stderr
    line = lines[0]
    assert line.startswith("execverify: error: "), line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    assert proc.stdout == ""
    return line


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text("def f(x):\n    return x\n")
    return path


def test_unknown_command(execverify: str) -> None:
    line = assert_one_line_exit_2(run(execverify, "frobnicate"), "No such command", "'frobnicate'")
    assert line.endswith("see 'execverify --help'"), line


def test_unknown_command_with_help_flag(execverify: str) -> None:
    assert_one_line_exit_2(run(execverify, "frobnicate", "--help"), "No such command", "'frobnicate'")


def test_unknown_option_names_it_and_the_close_one(execverify: str, program: Path) -> None:
    line = assert_one_line_exit_2(
        run(execverify, "run", "--argz", "1", str(program)), "No such option: --argz", "--args"
    )
    assert line.endswith("see 'execverify run --help'"), line


def test_missing_required_option(execverify: str) -> None:
    assert_one_line_exit_2(run(execverify, "score"), "Missing option", "--task", "execverify score --help")


def test_bad_option_value(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "--args", "1", "--timeout", "abc")
    assert_one_line_exit_2(proc, "Invalid value", "'--timeout'", "execverify run --help")


def test_option_without_its_value(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "--args")
    assert_one_line_exit_2(proc, "'--args'", "requires an argument", "execverify run --help")


def test_extra_positional_argument(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "extra.py", "--args", "1")
    assert_one_line_exit_2(proc, "unexpected extra argument", "extra.py", "execverify run --help")


def test_unknown_subcommand_of_a_group(execverify: str) -> None:
    proc = run(execverify, "grammar", "frob")
    assert_one_line_exit_2(proc, "No such command", "'frob'", "execverify grammar --help")


def test_unknown_option_of_a_subcommand_of_a_group(execverify: str) -> None:
    proc = run(execverify, "grammar", "check", "--frob")
    assert_one_line_exit_2(proc, "No such option: --frob", "execverify grammar check --help")


def test_a_long_bad_value_is_cut(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "--args", "1", "--workers", "9" * 5000 + "x")
    line = assert_one_line_exit_2(proc, "'--workers'")
    assert len(line) < 500


def test_help_still_exits_0(execverify: str) -> None:
    for args in (["--help"], ["run", "--help"], ["grammar", "--help"], ["grammar", "check", "--help"]):
        proc = run(execverify, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Usage" in proc.stdout and proc.stderr == "", args


def test_no_arguments_print_the_help(execverify: str) -> None:
    for args in ([], ["grammar"], ["phase2"]):
        proc = run(execverify, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Usage" in proc.stdout and "Traceback" not in proc.stderr, args
        assert proc.stderr == "", args


def test_usage_line_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    """``main`` called with an argv (not the console script) says the same one line."""
    from factory.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--argz", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "execverify: error: No such option: --argz (Possible options: --args) — see 'execverify run --help'"
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["traces", "--params", "p.yaml"], "stage trace"),
        (["phase2", "build"], "stage phase2"),
        (["sft"], "stage sft"),
    ],
)
def test_a_stage_command_of_0_2_names_its_new_place(old: list[str], new: str, capsys) -> None:
    from factory.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(old)
    assert exit_info.value.code == 2
    old_name = " ".join(old[:2] if old[0] == "phase2" else old[:1])
    expected = f"execverify: error: 'execverify {old_name}' is now 'execverify {new}' "
    expected += "(the stages are under 'execverify stage')"
    assert capsys.readouterr().err.strip().splitlines() == [expected]

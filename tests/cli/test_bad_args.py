"""Argument text that cannot be parsed: short messages that say the real cause (Python's limit on
the digits of an integer literal among them), on every path that parses args; and the message of
the exception behind an ``error:<Type>`` status in ``execverify run``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from factory.errors import UserError
from factory.literals import MAX_SHOWN_ARGS, parse_args

BIG = "1" * 4301  # one digit past Python's default int max str digits (4300)
LIMIT_REASON = "an integer literal has more than 4300 digits"


def run(execverify: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], input=stdin, capture_output=True, text=True, timeout=120)


def one_line_exit_2(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[:500])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[:500]
    return lines[0]


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text("def f(x):\n    return x\n")
    return path


@pytest.mark.parametrize("args", [BIG, f"[1, {BIG}]", f"1, {{'k': -{BIG}}}"])
def test_parse_args_names_the_int_digit_limit_briefly(args: str) -> None:
    with pytest.raises(UserError) as info:
        parse_args(args)
    message = str(info.value)
    assert LIMIT_REASON in message, message
    assert len(message) < 250, len(message)
    assert "…" in message


@pytest.mark.parametrize(
    "args",
    [
        "[" + "1, " * 5000,  # not valid Python
        "x + " + "1" * 5000,  # not literals
        "*" + "[1]" * 2000,  # starred
        "1, y=" + "2" * 3000,  # keywords
        "0x" + "f" * 5000 + " + x",  # a huge hex literal in an expression
        "1\x00" + "2" * 3000,  # a null byte
    ],
)
def test_parse_args_echoes_a_bounded_part_of_the_text(args: str) -> None:
    with pytest.raises(UserError) as info:
        parse_args(args)
    message = str(info.value)
    assert message.startswith("args ")
    assert len(message) < 150 + MAX_SHOWN_ARGS, message


def test_a_short_text_is_echoed_whole() -> None:
    with pytest.raises(UserError, match=r"args are not literals: 'len\(\[1\]\)'"):
        parse_args("1, len([1])")


def test_worker_paths_say_the_same() -> None:
    from factory.sandbox.trusted.worker import BadProgram, call_args, eval_args

    for call in (lambda: call_args(BIG), lambda: eval_args(BIG, {})):
        with pytest.raises(BadProgram) as info:
            call()
        assert LIMIT_REASON in str(info.value) and len(str(info.value)) < 250


def test_run_with_a_4301_digit_integer(execverify: str, program: Path) -> None:
    line = one_line_exit_2(run(execverify, "run", str(program), "--args", BIG))
    assert line.startswith("execverify: error: args are not valid Python: ")
    assert LIMIT_REASON in line
    assert len(line) < 250, len(line)


def test_trace_with_a_4301_digit_integer(execverify: str, program: Path) -> None:
    line = one_line_exit_2(run(execverify, "trace", str(program), "--args", f"[{BIG}]"))
    assert LIMIT_REASON in line and len(line) < 250


def test_cruxeval_batch_input_with_a_4301_digit_integer(execverify: str) -> None:
    case = {"code": "def f(x):\n    return x\n", "input": BIG}
    proc = run(execverify, "run", "--batch", "-", "--json", stdin=json.dumps(case) + "\n")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "bad_program"
    assert LIMIT_REASON in result["detail"] and len(result["detail"]) <= 200


def test_error_status_carries_its_message(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "boom.py"
    path.write_text("def f(x):\n    return x + 'a'\n")
    proc = run(execverify, "run", str(path), "--args", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "status": "error:TypeError",
        "output_repr": None,
        "output_type": None,
        "detail": "unsupported operand type(s) for +: 'int' and 'str'",
    }
    proc = run(execverify, "run", str(path), "--args", "1")
    assert proc.returncode == 0, proc.stderr
    assert "error:TypeError" in proc.stdout and "unsupported operand" in proc.stdout


def test_error_message_is_bounded_and_plain(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "long.py"
    path.write_text("def f(x):\n    raise ValueError('[bold]' + 'y' * 1000)\n")
    proc = run(execverify, "run", str(path), "--args", "1", "--json")
    detail = json.loads(proc.stdout)["detail"]
    assert detail.startswith("[bold]yyy") and detail.endswith("…") and len(detail) == 200
    proc = run(execverify, "run", str(path), "--args", "1")
    assert "[bold]y" in proc.stdout  # shown as text, never read as markup


def test_an_exception_without_a_message(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "bare.py"
    path.write_text("def f(x):\n    raise KeyError\n")
    result = json.loads(run(execverify, "run", str(path), "--args", "1", "--json").stdout)
    assert (result["status"], result["detail"]) == ("error:KeyError", None)

"""``execverify run`` and ``execverify stage execute`` through the installed console script."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.literals import strict_equal


def run(execverify: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], input=stdin, capture_output=True, text=True, timeout=120)


def assert_usage_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("execverify: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text("def f(xs, s):\n    return sorted(set(xs)) + [s]\n")
    return path


def test_batch_reproduces_all_cruxeval_outputs(execverify: str, cruxeval_path: Path) -> None:
    cruxeval = cruxeval_path
    records = [json.loads(line) for line in cruxeval.read_text().splitlines() if line.strip()]
    assert len(records) == 800
    proc = run(execverify, "run", "--batch", str(cruxeval), "--json")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(records)
    wrong = []
    for record, result in zip(records, results, strict=True):
        if result["status"] != "ok" or not strict_equal(
            ast.literal_eval(result["output_repr"]), ast.literal_eval(record["output"])
        ):
            wrong.append((record["id"], result))
    assert wrong == []


def test_single_run_json(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "--entry", "f", "--args", "[3, 1, 3], 'ab'", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "status": "ok",
        "output_repr": "[1, 3, 'ab']",
        "output_type": "list",
        "detail": None,
    }
    assert proc.stdout.count("\n") == 1


def test_single_run_table(execverify: str, program: Path) -> None:
    proc = run(execverify, "run", str(program), "--args", "[2], 'x'")
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout and "[2, 'x']" in proc.stdout


def test_single_run_drop_statuses_are_results(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "loop.py"
    path.write_text("def f(x):\n    while True:\n        x += 1\n")
    proc = run(execverify, "run", str(path), "--args", "1", "--json", "--timeout", "0.3")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "status": "resource_limit",
        "detail": "timeout",
        "output_repr": None,
        "output_type": None,
    }
    path.write_text("def f(xs):\n    return list(set(xs))\n")
    words = "[" + ", ".join(repr(f"w{i}") for i in range(30)) + "]"
    proc = run(execverify, "run", str(path), "--args", words, "--json")
    assert json.loads(proc.stdout)["status"] == "nondeterministic"


def test_batch_from_stdin_mixed_keys_and_runtime_failures(execverify: str) -> None:
    lines = [
        {"source": "def g(a, b):\n    return a * b\n", "entry": "g", "args": "6, 7"},
        {"code": "def f(x):\n    return x[::-1]\n", "input": "'abc'", "output": "'cba'"},
        {"source": "def f(x):\n    return 1 / x\n", "args": "0"},
        {"source": "def f(x):\n    return x\n", "args": "not_a_literal"},
        {"source": "def f(x:\n", "args": "1"},
    ]
    stdin = "\n".join(json.dumps(x) for x in lines) + "\n\n"
    proc = run(execverify, "run", "--batch", "-", "--json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["status"] for r in results] == [
        "ok",
        "ok",
        "error:ZeroDivisionError",
        "bad_program",
        "bad_program",
    ]
    assert results[0]["output_repr"] == "42" and results[1]["output_repr"] == "'cba'"
    assert all(set(r) == {"status", "output_repr", "output_type", "detail"} for r in results)
    assert results[2]["detail"] == "division by zero"
    assert "not_a_literal" in results[3]["detail"] and "syntax error" in results[4]["detail"]
    assert results[0]["detail"] is None


def test_missing_file(execverify: str, tmp_path: Path) -> None:
    assert_usage_error(
        run(execverify, "run", str(tmp_path / "nope.py"), "--args", "1"), "nope.py", "not found"
    )


def test_syntax_error(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("def f(x):\n    return (x\n")
    assert_usage_error(run(execverify, "run", str(path), "--args", "1"), "broken.py", "syntax")


@pytest.mark.parametrize("args", ["x", "len([1])", "1, y=2", "[1,", "*[1]"])
def test_args_not_literals(execverify: str, program: Path, args: str) -> None:
    assert_usage_error(run(execverify, "run", str(program), "--args", args), "args")


def test_missing_entry_function(execverify: str, program: Path) -> None:
    assert_usage_error(run(execverify, "run", str(program), "--entry", "nope", "--args", "1"), "'nope'")


def test_missing_args_and_file(execverify: str, program: Path) -> None:
    assert_usage_error(run(execverify, "run", str(program)), "--args")
    assert_usage_error(run(execverify, "run", "--args", "1"), "FILE")


def test_bad_jsonl_line_is_named(execverify: str, tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    good = json.dumps({"source": "def f(x):\n    return x\n", "args": "1"})
    path.write_text(f"{good}\n{good}\n{{not json\n")
    assert_usage_error(run(execverify, "run", "--batch", str(path), "--json"), "cases.jsonl:3")
    path.write_text(f"{good}\n[1, 2]\n")
    assert_usage_error(run(execverify, "run", "--batch", str(path), "--json"), ":2")
    path.write_text(f'{good}\n{{"source": "def f(): pass"}}\n')
    assert_usage_error(run(execverify, "run", "--batch", str(path), "--json"), ":2", "args")
    path.write_text('{"neither": 1}\n')
    assert_usage_error(run(execverify, "run", "--batch", str(path), "--json"), ":1")


def test_missing_batch_file(execverify: str, tmp_path: Path) -> None:
    assert_usage_error(run(execverify, "run", "--batch", str(tmp_path / "no.jsonl"), "--json"), "not found")


def test_bad_timeout(execverify: str, program: Path) -> None:
    assert_usage_error(
        run(execverify, "run", str(program), "--args", "[1], 'a'", "--timeout", "0"), "--timeout"
    )


def test_execute_stage_command(execverify: str, tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    rows = [
        {
            "case_id": f"c{i}",
            "program_id": "p",
            "source": "def f(x):\n    return [x] * 2\n",
            "entry": "f",
            "args": str(i),
            "tier": 1,
            "target": "list",
        }
        for i in range(5)
    ]
    pq.write_table(pa.Table.from_pylist(rows), cases / "part-00000.parquet")
    params = tmp_path / "params.yaml"
    params.write_text("execute:\n  timeout_s: 1.0\n  workers: 1\n")
    out, stats = tmp_path / "executions", tmp_path / "metrics" / "execute.json"
    args = ["stage", "execute", "--cases", str(cases), "--out", str(out), "--stats", str(stats)]
    proc = run(execverify, *args, "--params", str(params))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out / "part-00000.parquet").to_pylist()
    assert [r["output_repr"] for r in table] == [f"[{i}, {i}]" for i in range(5)]
    assert json.loads(stats.read_text())["out"] == 5

    missing = ["stage", "execute", "--cases", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]
    assert_usage_error(run(execverify, *missing, "--params", str(params)), "nope")
    params.write_text("execute:\n  timeout_s: -1\n")
    assert_usage_error(run(execverify, *args, "--params", str(params)), "timeout_s")

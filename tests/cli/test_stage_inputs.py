"""A stage given the wrong table (or no table) says so in one line, exit 2, before it runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.errors import UserError
from factory.io import require_columns

REPO = Path(__file__).resolve().parents[2]

PROGRAM_ROW = {
    "program_id": "p0",
    "index": 0,
    "source": "def f(x):\n    return x\n",
    "entry": "f",
    "tier": 1,
    "target": "int",
    "param_types": '[["x", "int"]]',
    "n_lines": 2,
    "grammar_hash": "h",
}


def run(execverify: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([execverify, *args], capture_output=True, text=True, timeout=300, cwd=REPO)


def one_line_exit_2(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture()
def programs(tmp_path: Path) -> Path:
    """A programs table (the synthesize stage's columns), made here with pyarrow."""
    folder = tmp_path / "programs"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist([PROGRAM_ROW]), folder / "part-00000.parquet")
    return folder


def outputs(tmp_path: Path) -> list[str]:
    return ["--out", str(tmp_path / "out"), "--stats", str(tmp_path / "stats.json")]


def test_tasks_given_a_programs_table(execverify: str, programs: Path, tmp_path: Path) -> None:
    proc = run(execverify, "stage", "tasks", "--traces", str(programs), *outputs(tmp_path))
    line = one_line_exit_2(proc, str(programs), "not a traces table", "trace stage")
    assert "missing columns: case_id, args, trace" in line
    assert not (tmp_path / "out").exists() and not (tmp_path / "stats.json").exists()


def test_tasks_given_a_traces_table_runs(execverify: str, tmp_path: Path) -> None:
    from factory.contracts import TRACES_SCHEMA

    traces = tmp_path / "traces"
    traces.mkdir()
    pq.write_table(TRACES_SCHEMA.empty_table(), traces / "part-00000.parquet")
    proc = run(execverify, "stage", "tasks", "--traces", str(traces), *outputs(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "part-00000.parquet").is_file()


def test_trace_stage_given_a_programs_table(execverify: str, programs: Path, tmp_path: Path) -> None:
    proc = run(execverify, "stage", "trace", "--executions", str(programs), *outputs(tmp_path))
    one_line_exit_2(proc, "not an executions table", "status", "execute stage")


def test_execute_given_a_programs_table(execverify: str, programs: Path, tmp_path: Path) -> None:
    proc = run(execverify, "stage", "execute", "--cases", str(programs), *outputs(tmp_path))
    one_line_exit_2(proc, "not a cases table", "case_id", "args", "inputs stage")


def test_difficulty_given_a_programs_table(execverify: str, programs: Path, tmp_path: Path) -> None:
    proc = run(
        execverify, "stage", "difficulty", "--tasks", str(programs), "--pass-stats", str(tmp_path / "pass"),
        *outputs(tmp_path),
    )  # fmt: skip
    one_line_exit_2(proc, "not a tasks table", "task_id", "prompt", "tasks stage")


def test_assemble_given_a_programs_table(execverify: str, programs: Path, tmp_path: Path) -> None:
    proc = run(execverify, "stage", "assemble", "--tasks", str(programs), *outputs(tmp_path))
    one_line_exit_2(proc, "not a tasks table", "task_id, family")


def test_phase2_given_programs_as_executions(execverify: str, programs: Path, tmp_path: Path) -> None:
    args = ["stage", "phase2", "--programs", str(programs), "--executions", str(programs)]
    one_line_exit_2(run(execverify, *args, *outputs(tmp_path)), "not an executions table")


def test_inputs_given_a_cases_table(execverify: str, tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    row = {"case_id": "c", "program_id": "p", "source": "x", "entry": "f", "args": "1", "tier": 1}
    pq.write_table(pa.Table.from_pylist([row]), cases / "part-00000.parquet")
    proc = run(execverify, "stage", "inputs", "--programs", str(cases), *outputs(tmp_path))
    one_line_exit_2(proc, "not a programs table", "param_types", "synthesize stage")


def test_a_folder_without_shards(execverify: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = run(execverify, "stage", "tasks", "--traces", str(tmp_path / "empty"), *outputs(tmp_path))
    one_line_exit_2(proc, "empty", "no part-*.parquet", "not a traces table")


def test_require_columns(tmp_path: Path, programs: Path) -> None:
    require_columns(programs, ["program_id", "source"], "programs")  # present: no error
    with pytest.raises(UserError, match=r"not found"):
        require_columns(tmp_path / "nope", ["x"], "traces")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "part-00000.parquet").write_bytes(b"not parquet")
    with pytest.raises(UserError, match=r"part-00000\.parquet: not a parquet file"):
        require_columns(broken, ["x"], "traces")
    many = [f"c{i}" for i in range(12)]
    with pytest.raises(UserError) as info:
        require_columns(programs, many, "items", "pass something else")
    message = str(info.value)
    assert message.startswith(f"{programs}: not an items table (missing columns: c0, c1,")
    assert "and 4 more" in message and message.endswith("; pass something else")

"""The trace stage: traces agree under two hash seeds, outputs match the execute stage, reruns
are byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

from factory.contracts import CASES_SCHEMA
from factory.execute.stage import run_execute_stage
from factory.inputs.stage import case_id
from factory.io import ShardWriter, read_table, shard_paths
from factory.params import ExecuteParams, TraceParams
from factory.trace.stage import run_trace_stage

PROGRAMS = {
    "loop": (
        "def f(nums):\n    total = 0\n    for n in nums:\n        total += n\n    return total\n",
        "[1, 2, 3]",
    ),
    # The returned value is deterministic, but the intermediate state (the popped element) is not.
    "set_pop": (
        "def f(words):\n    s = set(words)\n    w = s.pop()\n    return len(s)\n",
        "['ab', 'cd', 'ef', 'gh']",
    ),
    "long": ("def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n", "5000"),
}


def _cases(tmp: Path) -> Path:
    rows = [
        {
            "case_id": case_id(name, args),
            "program_id": name,
            "source": source,
            "entry": "f",
            "args": args,
            "tier": 3,
            "target": "list.len",
            "lines_covered": 0,
            "grammar_hash": "test",
        }
        for name, (source, args) in PROGRAMS.items()
    ]
    with ShardWriter(tmp / "cases", CASES_SCHEMA) as w:
        w.write_many(rows)
    execute = ExecuteParams(workers=1)
    run_execute_stage(tmp / "cases", tmp / "executions", tmp / "execute.json", execute)
    return tmp / "executions"


def test_trace_stage_keeps_deterministic_traces_only(tmp_path: Path) -> None:
    executions = _cases(tmp_path)
    params = TraceParams(max_steps=1000)
    stats = run_trace_stage(
        executions, tmp_path / "t1", tmp_path / "t1.json", params, ExecuteParams(workers=1)
    )
    rows = {r["program_id"]: r for r in read_table(tmp_path / "t1").to_pylist()}
    assert set(rows) == {"loop"}
    assert stats.to_dict()["dropped"] == {"nondeterministic": 1, "too_many_steps": 1}
    trace = json.loads(rows["loop"]["trace"])
    assert trace["output_repr"] == rows["loop"]["output_repr"] == "6"
    assert rows["loop"]["trace_length"] == len(trace["steps"]) == 9
    run_trace_stage(executions, tmp_path / "t2", tmp_path / "t2.json", params, ExecuteParams(workers=1))
    a, b = shard_paths(tmp_path / "t1"), shard_paths(tmp_path / "t2")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_max_state_bytes_reaches_the_traced_runs(tmp_path: Path) -> None:
    """``trace.max_state_bytes`` is a param of the stage, not only of ``trace_call``: a list
    growing past a small bound ends the trace as ``state_too_large``."""
    executions = _cases(tmp_path)
    small = TraceParams(max_steps=100_000, max_state_bytes=1024)
    stats = run_trace_stage(executions, tmp_path / "t", tmp_path / "t.json", small, ExecuteParams(workers=1))
    assert stats.to_dict()["dropped"] == {"nondeterministic": 1}  # "long" holds only ints
    grows = "def f(n):\n    xs = []\n    for i in range(n):\n        xs.append(i)\n    return len(xs)\n"
    rows = [
        {
            "case_id": case_id("grows", "500"),
            "program_id": "grows",
            "source": grows,
            "entry": "f",
            "args": "500",
            "tier": 3,
            "target": "list.append",
            "lines_covered": 0,
            "grammar_hash": "test",
        }
    ]
    with ShardWriter(tmp_path / "cases2", CASES_SCHEMA) as w:
        w.write_many(rows)
    one = ExecuteParams(workers=1)
    run_execute_stage(tmp_path / "cases2", tmp_path / "ex2", tmp_path / "e2.json", one)
    stats = run_trace_stage(tmp_path / "ex2", tmp_path / "t2", tmp_path / "t2.json", small, one)
    assert stats.to_dict()["dropped"] == {"state_too_large": 1}
    default = TraceParams(max_steps=100_000)
    stats = run_trace_stage(tmp_path / "ex2", tmp_path / "t3", tmp_path / "t3.json", default, one)
    assert stats.items_out == 1

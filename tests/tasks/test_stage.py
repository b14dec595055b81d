"""The tasks stage: streams traces into item shards, byte-identical on reruns, stats that add up."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.contracts import TASKS_SCHEMA
from factory.errors import UserError
from factory.io import read_table
from factory.params import TasksParams
from factory.scoring import score_item
from factory.tasks.prompts import gold_completion
from factory.tasks.stage import build_items_for_case, run_tasks_stage
from factory.trace import trace_call

HAND = [
    "def helper(a):\n    return a * 2\n\ndef f(xs):\n    t = 0\n    for x in xs:\n        if x > 1:\n"
    "            t += helper(x)\n    return t\n",
    "def f(x):\n    return x\n",  # one statement: no coverage item
]


def traces_rows(crux: list[dict], n_crux: int = 60) -> list[dict]:
    rows = []
    programs = [(r["code"], r["input"]) for r in crux[:n_crux]] + [(HAND[0], "[1, 2, 3]"), (HAND[1], "5")]
    for i, (source, args) in enumerate(programs):
        try:
            trace = trace_call(source, "f", args)
        except UserError:
            continue
        if trace["status"] != "ok":
            continue
        rows.append(
            {
                "case_id": f"c{i:03d}",
                "program_id": f"p{i:03d}",
                "source": source,
                "entry": "f",
                "args": args,
                "tier": 1 + i % 3,
                "target": "list.append",
                "lines_covered": len({s["line"] for s in trace["steps"]}),
                "grammar_hash": "g",
                "status": "ok",
                "output_repr": trace["output_repr"],
                "output_type": trace["output_type"],
                "trace": json.dumps(trace),
                "trace_length": len(trace["steps"]),
            }
        )
    return rows


@pytest.fixture(scope="module")
def rows(cruxeval_records: list[dict]) -> list[dict]:
    return traces_rows(cruxeval_records)


def write_traces(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    half = len(rows) // 2
    pq.write_table(pa.Table.from_pylist(rows[:half]), folder / "part-00000.parquet")
    pq.write_table(pa.Table.from_pylist(rows[half:]), folder / "part-00001.parquet")
    return folder


def test_stage_output_and_stats(tmp_path: Path, rows: list[dict]) -> None:
    bad = [
        {**rows[0], "case_id": "bad_json", "trace": "{not json"},
        {**rows[0], "case_id": "not_ok", "status": "timeout"},
    ]
    traces = write_traces(tmp_path / "traces", rows + bad)
    params = TasksParams(rows_per_shard=100)
    stats = run_tasks_stage(traces, tmp_path / "tasks", tmp_path / "stats.json", 42, params)
    table = read_table(tmp_path / "tasks")
    assert table.schema.remove_metadata() == TASKS_SCHEMA
    assert len(list((tmp_path / "tasks").glob("part-*.parquet"))) > 1
    out = table.to_pylist()
    saved = json.loads((tmp_path / "stats.json").read_text())

    # Stats add up: cases in = cases out + cases dropped; items by family and tier = rows.
    assert saved["in"] == len(rows) + 2 == stats.items_in
    assert saved["in"] == saved["out"] + saved["dropped_total"]
    assert saved["dropped"] == {"bad_trace_json": 1, "status_timeout": 1}
    assert saved["items"] == len(out) == sum(saved["items_by_family"].values())
    assert sum(sum(c.values()) for c in saved["items_by_tier"].values()) == len(out)
    for family in ("white_box", "output", "input", "coverage"):
        assert saved["items_by_family"][family] == sum(r["family"] == family for r in out)
    assert saved["items_by_family"]["output"] == len(rows)
    assert saved["items_skipped"]["coverage:no_informative_line"] >= 1
    assert saved["items_by_family"]["coverage"] + saved["items_skipped"].get(
        "coverage:no_informative_line", 0
    ) == len(rows)
    n_questions = {
        f: sum(r["n_questions"] for r in out if r["family"] == f) for f in saved["items_by_family"]
    }
    assert sum(saved["questions_by_family"].values()) == sum(n_questions.values())
    answers = saved["answers"]
    assert 0 < answers["next_line_minus_one_share"] <= 0.5
    assert 0 < answers["state_nil_share"] <= 0.5
    assert sum(answers["output_types"].values()) == saved["questions_by_family"]["output"]
    nil = answers["state_nil"]
    assert sum(answers["state_types"].values()) + nil == saved["questions_by_family"]["state"]
    assert sum(answers["coverage"].values()) == saved["questions_by_family"]["coverage"]
    assert saved["params"]["rows_per_shard"] == 100 and saved["seed"] == 42

    # Rows are scoreable items: their gold completions score the maximum.
    for row in out:
        if row["family"] != "input":
            best = 2.0 if row["family"] == "white_box" else 1.0
            assert score_item(row, gold_completion(row)).reward == best
    # The stage and the one-case function agree.
    first = rows[0]
    expected = build_items_for_case(first, json.loads(first["trace"]), seed=42, params=params)
    assert [r for r in out if r["case_id"] == first["case_id"]] == expected


def test_byte_identical_reruns(tmp_path: Path, rows: list[dict]) -> None:
    traces = write_traces(tmp_path / "traces", rows)
    params = TasksParams(rows_per_shard=100)
    run_tasks_stage(traces, tmp_path / "a", tmp_path / "a.json", 7, params)
    run_tasks_stage(traces, tmp_path / "b", tmp_path / "b.json", 7, params)
    files_a = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files_a == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files_a:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    run_tasks_stage(traces, tmp_path / "c", tmp_path / "c.json", 8, params)
    a, c = read_table(tmp_path / "a").to_pylist(), read_table(tmp_path / "c").to_pylist()
    assert [r["task_id"] for r in a] != [r["task_id"] for r in c]  # the seed matters


def test_families_param(tmp_path: Path, rows: list[dict]) -> None:
    traces = write_traces(tmp_path / "traces", rows[:10])
    params = TasksParams(families=["output"])
    stats = run_tasks_stage(traces, tmp_path / "out", tmp_path / "s.json", 0, params)
    out = read_table(tmp_path / "out").to_pylist()
    assert {r["family"] for r in out} == {"output"} and len(out) == 10
    assert stats.items_out == 10 and stats.extra["items_by_family"] == {"output": 10}


def test_empty_and_missing_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    stats = run_tasks_stage(tmp_path / "empty", tmp_path / "out", tmp_path / "s.json", 0, TasksParams())
    assert stats.items_in == 0 and read_table(tmp_path / "out").num_rows == 0
    with pytest.raises(UserError):
        run_tasks_stage(tmp_path / "missing", tmp_path / "out2", tmp_path / "s2.json", 0, TasksParams())

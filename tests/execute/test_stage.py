"""The execute stage: every case kept with its status, stats per reason and tier, stable bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factory.errors import UserError
from factory.execute.stage import run_execute_stage, validate_params
from factory.io import read_table

WORDS = "[" + ", ".join(repr(f"w{i}") for i in range(25)) + "]"
PARAMS = {"timeout_s": 0.5, "memory_mb": 256, "workers": 1, "hash_seeds": [1, 2], "rows_per_shard": 100}

CASES = [
    # (source, args, tier, expected status)
    ("def f(x):\n    return x + 1\n", "1", 1, "ok"),
    ("def f(xs):\n    return sorted(xs)\n", "[3, 1, 2]", 1, "ok"),
    ("def f(x):\n    return x / 0\n", "1", 1, "error:ZeroDivisionError"),
    ("def f(xs):\n    return list(set(xs))\n", WORDS, 2, "nondeterministic"),
    ("def f(x):\n    while True:\n        pass\n", "1", 2, "resource_limit"),
    ("def f(x):\n    return object()\n", "1", 2, "non_literal"),
    ("def f(xs):\n    return set(xs)\n", WORDS, 2, "ok"),
]


def write_cases(folder: Path, rows: list[dict] | None = None) -> Path:
    if rows is None:
        rows = [
            {
                "case_id": f"c{i}",
                "program_id": f"p{i}",
                "source": source,
                "entry": "f",
                "args": args,
                "tier": tier,
                "target": "list.sort",
                "extra_column": i * 10,
            }
            for i, (source, args, tier, _) in enumerate(CASES)
        ]
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-00000.parquet")
    return folder


def test_every_case_is_kept_with_its_status(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases")
    stats = run_execute_stage(cases, tmp_path / "out", tmp_path / "stats.json", PARAMS)
    table = read_table(tmp_path / "out")
    rows = table.to_pylist()
    assert [r["status"] for r in rows] == [c[3] for c in CASES]
    assert [r["case_id"] for r in rows] == [f"c{i}" for i in range(len(CASES))]
    assert rows[0]["output_repr"] == "2" and rows[0]["output_type"] == "int"
    assert rows[1]["output_repr"] == "[1, 2, 3]"
    assert rows[2]["output_repr"] is None and rows[2]["output_type"] is None
    assert [r["extra_column"] for r in rows] == [i * 10 for i in range(len(CASES))]
    assert table.schema.field("tier").type == pa.int32()
    assert table.schema.field("output_repr").nullable

    assert stats.items_in == len(CASES) and stats.items_out == 3
    assert dict(stats.dropped) == {
        "error:ZeroDivisionError": 1,
        "nondeterministic": 1,
        "resource_limit": 1,
        "non_literal": 1,
    }
    written = json.loads((tmp_path / "stats.json").read_text())
    assert written["in"] == 7 and written["out"] == 3
    assert written["yield_by_tier"] == {
        "1": {"in": 3, "ok": 2, "share": round(2 / 3, 6)},
        "2": {"in": 4, "ok": 1, "share": 0.25},
    }


def test_same_input_gives_byte_identical_output(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases")
    shards = []
    for run in ("a", "b"):
        run_execute_stage(cases, tmp_path / run, tmp_path / f"{run}.json", PARAMS)
        shards.append({p.name: p.read_bytes() for p in sorted((tmp_path / run).iterdir())})
    assert shards[0] == shards[1]
    assert list(shards[0]) == ["part-00000.parquet"]


def test_shards_and_empty_input(tmp_path: Path) -> None:
    rows = [
        {
            "case_id": f"c{i}",
            "program_id": "p",
            "source": "def f(x):\n    return -x\n",
            "entry": "f",
            "args": str(i),
            "tier": 3,
            "target": "int",
        }
        for i in range(250)
    ]
    cases = write_cases(tmp_path / "cases", rows)
    params = {**PARAMS, "rows_per_shard": 100}
    run_execute_stage(cases, tmp_path / "out", tmp_path / "s.json", params)
    assert len(list((tmp_path / "out").glob("part-*.parquet"))) == 3
    out = read_table(tmp_path / "out").to_pylist()
    assert [r["output_repr"] for r in out] == [str(-i) for i in range(250)]

    empty = tmp_path / "empty"
    empty.mkdir()
    stats = run_execute_stage(empty, tmp_path / "out2", tmp_path / "s2.json", PARAMS)
    assert stats.items_in == 0
    assert read_table(tmp_path / "out2").num_rows == 0


def test_missing_columns_and_folder_are_user_errors(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases", [{"case_id": "c", "source": "x"}])
    with pytest.raises(UserError, match="lacks column"):
        run_execute_stage(cases, tmp_path / "out", tmp_path / "s.json", PARAMS)
    with pytest.raises(UserError, match="not found"):
        run_execute_stage(tmp_path / "nope", tmp_path / "out", tmp_path / "s.json", PARAMS)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": "2"}, "timeout_s"),
        ({"memory_mb": 10}, "memory_mb"),
        ({"memory_mb": 1.5}, "memory_mb"),
        ({"max_output_repr": 0}, "max_output_repr"),
        ({"workers": -1}, "workers"),
        ({"workers": True}, "workers"),
        ({"hash_seeds": [1, 1]}, "hash_seeds"),
        ({"hash_seeds": [1]}, "hash_seeds"),
        ({"hash_seeds": [1, 2**32]}, "hash_seeds"),
        ({"hash_seeds": "1,2"}, "hash_seeds"),
        ({"rows_per_shard": 0}, "rows_per_shard"),
        ({"timeout": 2}, "timeout"),
    ],
)
def test_bad_params_name_the_param(params: dict, named: str) -> None:
    with pytest.raises(UserError, match=named):
        validate_params(params)


def test_params_defaults() -> None:
    p = validate_params({"workers": 0})
    assert p.workers == 0 and p.hash_seeds == [1, 2] and p.timeout_s == 2.0

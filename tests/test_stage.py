"""The one stage runner: accounting in the stage's unit, skipped units, side outputs, atomicity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from factory.io import read_table
from factory.stage import Outcome, Output, Tally, chunks, run_stage

SCHEMA = pa.schema([("n", pa.int64()), ("copy", pa.int64())])
SIDE = pa.schema([("n", pa.int64())])


def _outcomes(units: Iterator[int]) -> Iterator[Outcome]:
    """Odd numbers are dropped; an even number n writes n // 2 rows (0: kept with no row)."""
    for n in units:
        if n % 2:
            yield Outcome(drop="odd", tier=n % 3, side_rows=[{"n": n}])
        else:
            yield Outcome([{"n": n, "copy": i} for i in range(n // 2)], tier=n % 3)


def test_in_is_out_plus_dropped_in_units_and_rows_are_written_in_order(tmp_path: Path) -> None:
    stats_path = tmp_path / "metrics" / "x.json"
    seen: list[Tally] = []

    def extra(tally: Tally) -> dict:
        seen.append(tally)
        return {"rows": tally.rows, "kept_by_tier": tally.by_tier(tally.tiers_out)}

    stats = run_stage(
        "x",
        range(10),
        _outcomes,
        Output(tmp_path / "out", SCHEMA, rows_per_shard=3),
        stats_path,
        total=10,
        extra=extra,
        side_output=Output(tmp_path / "side", SIDE),
    )
    assert (stats.items_in, stats.items_out, dict(stats.dropped)) == (10, 5, {"odd": 5})
    table = read_table(tmp_path / "out").to_pylist()
    assert [(r["n"], r["copy"]) for r in table] == [(n, i) for n in (2, 4, 6, 8) for i in range(n // 2)]
    assert len(list((tmp_path / "out").glob("part-*.parquet"))) == 4  # 10 rows, 3 a shard
    assert read_table(tmp_path / "side").column("n").to_pylist() == [1, 3, 5, 7, 9]
    written = json.loads(stats_path.read_text())
    assert written["in"] == written["out"] + written["dropped_total"]
    assert written["rows"] == 10 and seen[0].side_rows == 5
    assert written["kept_by_tier"] == {"0": 2, "1": 1, "2": 2}  # 0, 6 | 4 | 2, 8
    assert json.loads((tmp_path / "metrics" / "summary" / "x.json").read_text())["yield"] == 0.5


def test_units_the_stage_does_not_take_are_not_counted(tmp_path: Path) -> None:
    taken: list[int] = []

    def outcomes(units: Iterator[int]) -> Iterator[Outcome]:
        for n in units:
            taken.append(n)
            yield Outcome([{"n": n, "copy": 0}])

    stats = run_stage(
        "y", range(6), outcomes, Output(tmp_path / "out", SCHEMA), tmp_path / "y.json",
        total=6, accept=lambda n: n != 3,
    )  # fmt: skip
    assert taken == [0, 1, 2, 4, 5]
    assert (stats.items_in, stats.items_out) == (5, 5)


def test_a_failing_stage_changes_no_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_stage("z", [2], _outcomes, Output(out, SCHEMA), tmp_path / "z.json", total=1)
    before = read_table(out).to_pylist()
    closed: list[bool] = []

    def failing(units: Iterator[int]) -> Iterator[Outcome]:
        try:
            for n in units:
                if n == 5:
                    raise RuntimeError("boom")
                yield Outcome([{"n": n, "copy": 0}])
        finally:
            closed.append(True)  # the stage's resources (a worker pool) are released

    with pytest.raises(RuntimeError, match="boom"):
        run_stage("z", range(10), failing, Output(out, SCHEMA), tmp_path / "z.json", total=10)
    assert read_table(out).to_pylist() == before
    assert closed == [True]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp folder left
    assert json.loads((tmp_path / "z.json").read_text())["in"] == 1  # the last good stats stay


def test_chunks() -> None:
    assert list(chunks(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunks([], 3)) == []

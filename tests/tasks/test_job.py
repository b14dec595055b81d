"""Items built in the items worker pool: the same rows as in-process, in order, whatever the
chunking and the number of workers; rows that cannot give items are dropped with a reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from factory.params import TasksParams, TraceParams
from factory.tasks import job
from factory.tasks.items import build_items_with_reasons
from factory.trace.jobs import payload_limits, trace_row_job

PARAMS = TasksParams()


@pytest.fixture(scope="module")
def rows(cruxeval_traced: list[tuple[int, dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for index, record, _ in cruxeval_traced[:70]:
        payload = {"source": record["code"], "entry": "f", "args": record["input"]}
        traced = trace_row_job({**payload, **payload_limits(TraceParams())})
        assert traced["status"] == "ok"
        out.append(
            {
                "case_id": f"c{index}",
                "source": record["code"],
                "entry": "f",
                "args": record["input"],
                "tier": 1,
                "status": "ok",
                "output_repr": traced["output_repr"],
                "output_type": traced["output_type"],
                "trace": traced["trace"],
                "trace_length": traced["trace_length"],
            }
        )
    broken = {**out[0], "case_id": "broken", "trace": "{not json"}
    missing = {**out[1], "case_id": "missing", "source": None}
    return out[:33] + [broken, missing] + out[33:]


def expected(row: dict[str, Any], seed: int) -> dict[str, Any]:
    """The in-process result, as the tasks stage computed it before the pool existed."""
    if row["source"] is None:
        return {"items": [], "reasons": [], "drop": "missing_source"}
    try:
        trace = json.loads(row["trace"])
    except json.JSONDecodeError:
        return {"items": [], "reasons": [], "drop": "bad_trace_json"}
    items, reasons = build_items_with_reasons(row, trace, seed=seed, params=PARAMS)
    return {"items": items, "reasons": [r for r in reasons if not r.startswith("case:")], "drop": None}


@pytest.mark.parametrize("workers, chunk", [(1, 16), (2, 5)])
def test_pool_gives_the_in_process_items_in_order(
    rows: list[dict[str, Any]], workers: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job, "CHUNK_ROWS", chunk)
    with job.items_pool(workers) as pool:
        got = list(job.build_all(rows, pool, seed=7, params=PARAMS))
    assert got == [expected(row, 7) for row in rows]
    assert sum(len(r["items"]) for r in got) > 150
    assert [r["drop"] for r in got if r["drop"]] == ["bad_trace_json", "missing_source"]


def test_a_failing_builder_is_loud(rows: list[dict[str, Any]]) -> None:
    """A bug in item building (here: params that the worker cannot read) stops the stage with the
    worker's message, instead of dropping cases quietly."""

    class Unreadable:
        def model_dump_json(self) -> str:
            return "{not json"

    with job.items_pool(1) as pool, pytest.raises(RuntimeError, match="building items failed: job 'items'"):
        list(job.build_all(rows[:3], pool, seed=0, params=Unreadable()))  # type: ignore[arg-type]


def test_chunks_keep_a_programs_rows_together() -> None:
    """A chunk is closed at a program boundary once it holds CHUNK_ROWS rows; a program with more
    than 4 × CHUNK_ROWS rows is split anyway. Every row is sent once, in order."""
    sizes = [3, 5, 10, 1, 1, 40, 100, 2]
    rows = [{"source": f"p{p}", "n": i} for p, size in enumerate(sizes) for i in range(size)]
    chunks = list(job._chunks(iter(rows)))
    assert [r for chunk in chunks for r in chunk] == rows
    assert all(len(chunk) <= 4 * job.CHUNK_ROWS for chunk in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        split = before[-1]["source"] == after[0]["source"]
        assert len(before) == 4 * job.CHUNK_ROWS if split else len(before) >= job.CHUNK_ROWS
    assert [len(c) for c in chunks] == [18, 42, 64, 36, 2]


def test_building_items_leaves_no_reference_cycles(rows: list[dict[str, Any]]) -> None:
    """What an items worker keeps is frozen instead of scanned by the cyclic collector, which is
    sound only if building items makes no cycles: a collection afterwards finds no garbage."""
    import gc

    def build(seed: int) -> int:
        return sum(len(job.case_items(row, seed, PARAMS)["items"]) for row in rows)

    build(0)  # imports and caches first
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        assert build(1) + build(2) > 300  # items_job would freeze them: the builder itself
        assert gc.collect() == 0
        cycle: list[Any] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() == 1  # the check itself can fail
    finally:
        if was_enabled:
            gc.enable()


def test_an_items_worker_still_collects_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    monkeypatch.setattr(job, "CHUNKS_PER_SWEEP", 2)
    monkeypatch.setattr(job, "_chunks_done", 0)
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(a) or 0)
    try:
        for _ in range(5):
            job._after_chunk(True)
        assert len(collected) == 2 and gc.get_freeze_count() > 0 and gc.isenabled()
    finally:
        gc.unfreeze()


def test_rows_of_the_traces_table_need_no_second_parse(
    cruxeval_traced: list[tuple[int, dict[str, Any], dict[str, Any]]],
) -> None:
    """The items job trusts the trace stage (``verified=True``): an ``ok`` trace has literal args
    and a literal output. On every CRUXEval case the items are the very ones the checks give."""
    from factory.literals import literal_eval, parse_args

    assert len(cruxeval_traced) > 750
    for index, record, trace in cruxeval_traced:
        parse_args(record["input"])  # what the tracer did before running it
        literal_eval(trace["output_repr"])  # an ok trace's output is a literal
        row = {"case_id": f"c{index}", "source": record["code"], "entry": "f", "args": record["input"]}
        checked = build_items_with_reasons(row, trace, seed=3, params=PARAMS)
        assert build_items_with_reasons(row, trace, seed=3, params=PARAMS, verified=True) == checked

"""The trace stage: every ``ok`` execution traced in the sandbox pool, under both hash seeds.

A case is kept only when the two traces agree (docs/design.md §4): the same steps, and the same states
(values of sets compared as sets, everything else exactly). The recorded trace is the first
seed's. Executions that are not ``ok`` are skipped (they were counted by the execute stage).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from factory.execute.runner import Executor, same_value
from factory.inputs.stage import CASES_SCHEMA
from factory.io import ShardWriter, count_rows, iter_rows
from factory.literals import literal_eval
from factory.params import ExecuteParams, TraceParams
from factory.progress import progress
from factory.stats import StageStats
from factory.trace.tracer import MAX_STATE_BYTES, one_line_statements

# A trace row: the case (as the inputs stage wrote it) and its recorded output, then the trace.
CASE_COLUMNS = [(f.name, f.type) for f in CASES_SCHEMA if f.name != "lines_covered"] + [
    ("output_repr", pa.string()),
    ("output_type", pa.string()),
]
TRACES_SCHEMA = pa.schema(
    [*CASE_COLUMNS, ("trace", pa.string()), ("trace_length", pa.int32()), ("n_states", pa.int32())]
)


def same_trace(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two ``ok`` traces of one case agree: identical steps, and states whose values are equal
    (reprs equal, or literals equal with sets compared as sets)."""
    if a["status"] != "ok" or b["status"] != "ok":
        return a["status"] == b["status"]  # a drop: its reason is what counts (no trace to compare)
    if a["steps"] != b["steps"] or len(a["states"]) != len(b["states"]):
        return False
    for x, y in zip(a["states"], b["states"], strict=True):
        if (x["step"], x["var"], x["type"]) != (y["step"], y["var"], y["type"]):
            return False
        if x["repr"] == y["repr"]:
            continue
        if not (x.get("literal") and y.get("literal")):
            return False
        try:
            if not same_value(literal_eval(x["repr"]), literal_eval(y["repr"])):
                return False
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
    return True


def trace_payloads(
    rows: Iterable[dict[str, Any]], max_steps: int, max_repr: int, max_state_bytes: int = MAX_STATE_BYTES
) -> Iterator[dict[str, Any]]:
    """The trace jobs of ``rows`` (cases with ``source``, ``entry``, ``args``), made as the pool
    reads them, each with ``one_line``: ``one_line_statements`` of its program, checked here once
    for the workers of every hash seed (the rows of a program come together)."""
    source, one_line = None, False
    for r in rows:
        if r["source"] != source:
            source = r["source"]
            one_line = isinstance(source, str) and one_line_statements(source)
        yield {
            "source": source,
            "entry": r["entry"],
            "args": r["args"],
            "max_steps": max_steps,
            "max_repr": max_repr,
            "max_state_bytes": max_state_bytes,
            "one_line": one_line,
        }


#: Job kinds per hash seed: the first seed's run gives the stored trace, the others its digest.
FIRST_KIND, OTHER_KIND = "trace_row", "trace_digest"


def same_digest(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two runs of ``trace_row`` / ``trace_digest`` agree: equal trace digests (see
    ``factory.trace.tracer.trace_digest``, which compares as ``same_trace`` does)."""
    if a["status"] != "ok" or b["status"] != "ok":
        return a["status"] == b["status"]
    return a["digest"] is not None and a["digest"] == b["digest"]


def trace_rows(
    rows: Iterable[dict[str, Any]], executor: Executor, params: TraceParams
) -> Iterator[tuple[dict[str, Any] | None, str | None]]:
    """Trace every row (a case with its recorded output) under every hash seed of ``executor``.

    Yields, in order, ``(trace_row, None)`` for a kept case (a row of ``TRACES_SCHEMA``) or
    ``(None, reason)`` for a dropped one. The first seed's worker builds the stored trace JSON;
    the other seeds' workers send only a digest of theirs, so the parent never decodes a trace.
    A row without ``output_repr`` (a benchmark case never executed) skips the output check.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    payloads = trace_payloads(rows, params.max_steps, params.max_repr, params.max_state_bytes)
    kinds = [FIRST_KIND] + [OTHER_KIND] * (len(executor.hash_seeds) - 1)
    for row, result in zip(rows, executor.run(payloads, kind=kinds, agree=same_digest), strict=True):
        if result["status"] != "ok":
            yield None, result["status"]
            continue
        expected = row.get("output_repr")
        if expected is not None and result["output_repr"] != expected:
            yield None, "trace_output_differs"  # the traced run must return what ran
            continue
        out = {name: row.get(name) for name, _ in CASE_COLUMNS}
        if expected is None:
            out["output_repr"], out["output_type"] = result["output_repr"], result["output_type"]
        out["trace"] = result["trace"]
        out["trace_length"] = result["trace_length"]
        out["n_states"] = result["n_states"]
        yield out, None


def run_trace_stage(
    executions_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: TraceParams,
    execute: ExecuteParams,
) -> StageStats:
    """Trace the ``ok`` executions; keep the cases whose traces agree under both hash seeds."""
    stats = StageStats("trace")
    per_tier: Counter = Counter()
    lengths: list[int] = []
    with (
        Executor.from_params(execute) as executor,
        ShardWriter(out_dir, TRACES_SCHEMA, params.rows_per_shard, group_rows=256) as out,  # traces are big
        progress("trace", count_rows(executions_dir)) as advance,
    ):
        for batch in iter_rows(executions_dir, batch_rows=1024):
            advance(len(batch))
            rows = [r for r in batch if r["status"] == "ok"]
            for row, reason in trace_rows(rows, executor, params):
                stats.items_in += 1
                if row is None:
                    assert reason is not None  # trace_rows gives the reason of every row it drops
                    stats.drop(reason)
                    continue
                out.write(row)
                stats.items_out += 1
                per_tier[row["tier"]] += 1
                lengths.append(row["trace_length"])
    stats.extra["traced_by_tier"] = {str(t): per_tier[t] for t in sorted(per_tier)}
    if lengths:
        lengths.sort()
        stats.extra["trace_length"] = {
            "median": lengths[len(lengths) // 2],
            "p90": lengths[int(len(lengths) * 0.9)],
            "max": lengths[-1],
        }
    stats.write(stats_path)
    return stats

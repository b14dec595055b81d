"""The trace stage: every ``ok`` execution traced in the sandbox pool, under both hash seeds.

A case is kept only when the two traces agree (docs/design.md §4): the same steps, and the same states
(values of sets compared as sets, everything else exactly). The recorded trace is the first
seed's. A language whose steps cannot depend on the hash seed (``Language.hash_seed_matters``:
JavaScript) is traced once, on every core. Executions that are not ``ok`` are skipped (they were
counted by the execute stage).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import TRACE_CASE_COLUMNS, TRACES_SCHEMA
from factory.execute.runner import Executor, same_value, with_cpus
from factory.io import count_rows, iter_rows
from factory.languages import Language
from factory.params import ExecuteParams, TraceParams
from factory.stage import Outcome, Output, Tally, by_language, chunks, run_stage
from factory.stats import StageStats
from factory.trace.statements import one_line_statements
from factory.trace.tracer import MAX_STATE_BYTES


def same_trace(a: dict[str, Any], b: dict[str, Any], values: Language | None = None) -> bool:
    """Two ``ok`` traces of one case agree: identical steps, and states whose values are equal
    (reprs equal, or literals equal with sets compared as sets, read with the value model of
    ``values``, a language; default Python)."""
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
        values = values or languages.language("python")
        try:
            if not same_value(values.literal_value(x["repr"]), values.literal_value(y["repr"]), values):
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
    ``factory.trace.stored.trace_digest``, which compares as ``same_trace`` does)."""
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
        out = {name: row.get(name) for name, _ in TRACE_CASE_COLUMNS}
        if expected is None:
            out["output_repr"], out["output_type"] = result["output_repr"], result["output_type"]
        out["trace"] = result["trace"]
        out["trace_length"] = result["trace_length"]
        out["n_states"] = result["n_states"]
        yield out, None


def trace_executor(execute: ExecuteParams, lang: Language, cpus: int | None = None) -> Executor:
    """An Executor serving ``lang``'s tracer job kinds on ``cpus`` (None: ``execute.workers``):
    of both hash seeds, or of the first alone on every core for a language whose steps cannot
    depend on the seed (``Language.hash_seed_matters``)."""
    kinds = lang.facet("tracer").KINDS
    if not lang.hash_seed_matters:
        once = execute if cpus is None else execute.model_copy(update={"workers": cpus})
        return Executor.from_params(once, kinds=kinds, language=lang, once=True)
    return Executor.from_params(with_cpus(execute, cpus), kinds=kinds, language=lang)


def _open(config: tuple[ExecuteParams, TraceParams, str], cpus: int | None) -> Executor:
    """The per-process state of the trace stage: the Executor of ``trace_executor``."""
    execute, _, language = config
    return trace_executor(execute, languages.language(language), cpus)


def _trace(
    config: tuple[ExecuteParams, TraceParams, str], executor: Executor, executions: Iterable[dict[str, Any]]
) -> Iterator[tuple[dict[str, Any] | None, str | None]]:
    """(trace row, None) or (None, drop reason) for every execution, in order (``trace_rows``)."""
    for batch in chunks(executions, 1024):
        yield from trace_rows(batch, executor, config[1])


def run_trace_stage(
    executions_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    params: TraceParams,
    execute: ExecuteParams,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Trace the ``ok`` executions; keep the cases whose traces agree under both hash seeds (one
    trace where the language's steps cannot depend on it). Each case is traced by the job kinds
    (``trace_row``, ``trace_digest``) of its ``language`` (``factory.stage.language_of``).
    ``backend``: where they run (default local)."""
    lengths: list[int] = []

    def outcomes(executions: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        for language, group in by_language(executions):
            languages.language(language)  # an unknown name fails here, not in every worker
            job = Shards((execute, params, language), _open, _trace)
            for _, (row, reason) in run_shards(backend, job, group):
                if row is None:
                    yield Outcome(drop=reason)
                    continue
                lengths.append(row["trace_length"])
                yield Outcome([row], tier=row["tier"])

    def extra(tally: Tally) -> dict[str, Any]:
        stats: dict[str, Any] = {"traced_by_tier": tally.by_tier(tally.tiers_out)}
        if lengths:
            lengths.sort()
            stats["trace_length"] = {
                "median": lengths[len(lengths) // 2],
                "p90": lengths[int(len(lengths) * 0.9)],
                "max": lengths[-1],
            }
        return stats

    rows = (row for batch in iter_rows(executions_dir, batch_rows=1024) for row in batch)
    output = Output(out_dir, TRACES_SCHEMA, params.rows_per_shard, group_rows=256)  # traces are big
    return run_stage(
        "trace",
        rows,
        outcomes,
        output,
        stats_path,
        total=count_rows(executions_dir),
        extra=extra,
        accept=lambda row: row["status"] == "ok",
    )

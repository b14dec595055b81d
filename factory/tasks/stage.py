"""The tasks stage: traces → tasks, one row per item (docs/design.md §2, §5).

Reads the traces table (the execution columns plus ``trace``, the JSON of the trace with
states, and ``trace_length``), builds each case's items with ``build_items_for_case`` and streams
them into shards with a fixed schema. Stats count *cases*: ``in`` cases read, ``out`` cases that
gave at least one item, ``dropped`` cases that gave none, by reason (so in = out + dropped);
``extra`` holds items per family and per tier, families skipped per reason, and the distribution
of gold answers. Same input, seed and params give byte-identical output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from factory import languages
from factory.backend import Backend, Shards, run_shards
from factory.contracts import TASKS_SCHEMA
from factory.io import count_rows, iter_rows
from factory.params import TasksParams
from factory.sandbox.trusted.pool import WorkerPool
from factory.stage import Outcome, Output, Tally, by_language, run_stage
from factory.stats import StageStats
from factory.tasks.items import build_items_for_case
from factory.tasks.job import build_all, items_pool
from factory.tasks.tally import ItemTally

__all__ = ["build_items_for_case", "run_tasks_stage"]


def _open(config: tuple[int, TasksParams, str], cpus: int | None) -> WorkerPool:
    """The per-process state of the tasks stage: the items pool (``tasks.workers``, or ``cpus``)."""
    return items_pool(cpus or config[1].workers)


def _build(
    config: tuple[int, TasksParams, str], pool: WorkerPool, rows: Iterable[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """The items of every traces row, in order (``build_all``)."""
    seed, params, language = config
    return build_all(rows, pool, seed, params, language=language)


def run_tasks_stage(
    traces_dir: str | Path,
    out_dir: str | Path,
    stats_path: str | Path,
    seed: int,
    params: TasksParams | None = None,
    *,
    backend: Backend | None = None,
) -> StageStats:
    """Build the items of every traced case of ``traces_dir``; write the tasks table to
    ``out_dir`` and the stats JSON to ``stats_path``. Each case is read in its ``language``
    (``factory.stage.language_of``), which its prompts name. ``backend``: where the items are
    built (default local)."""
    p = params if params is not None else TasksParams()
    items = ItemTally()

    def outcomes(rows: Iterator[dict[str, Any]]) -> Iterator[Outcome]:
        for language, group in by_language(rows):
            languages.language(language)  # an unknown name fails here, not in every worker
            job = Shards((seed, p, language), _open, _build)
            for _, result in run_shards(backend, job, group):
                items.skipped.update(result["reasons"])
                for item in result["items"]:
                    items.add(item)
                yield Outcome(result["items"], None if result["items"] else result["drop"])

    def extra(tally: Tally) -> dict[str, Any]:
        extra_params = p.model_dump()
        del extra_params["workers"]  # how many processes built the items is no part of them
        return {**items.to_dict(), "params": extra_params, "seed": seed}

    # Trace JSON is large: small batches from the shards, read as the workers need them.
    rows = (row for batch in iter_rows(traces_dir, batch_rows=1_000) for row in batch)
    output = Output(out_dir, TASKS_SCHEMA, rows_per_shard=p.rows_per_shard)
    return run_stage("tasks", rows, outcomes, output, stats_path, total=count_rows(traces_dir), extra=extra)

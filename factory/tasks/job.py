"""Items built in worker processes: the tasks stage's parallel half (DESIGN §3).

``items_job`` is a job kind of the sandbox worker pool (``factory.sandbox.pool``): one traced case
in, its item rows out. The work is trusted (no program runs), the pool is used for its reused
processes and its in-order results; ``build_all`` feeds it and yields one result per case, in
order, so the output does not depend on the number of workers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from factory.params import TasksParams
from factory.sandbox.pool import WorkerPool
from factory.tasks.items import build_items_with_reasons

ITEMS_KIND = "items"
ITEMS_TIMEOUT_S = 120.0  # one case's items; a 2,000-step trace takes milliseconds
ITEMS_MEMORY_MB = 2048


def items_pool(workers: int | None = None) -> WorkerPool:
    """A worker pool that serves ``items_job`` (``workers``: None or 0 is one per CPU)."""
    return WorkerPool(
        workers=workers or None,
        hash_seed=0,  # item building must not depend on it; fixed anyway
        timeout_s=ITEMS_TIMEOUT_S,
        memory_mb=ITEMS_MEMORY_MB,
        kinds={ITEMS_KIND: "factory.tasks.job:items_job"},
    )


def build_all(
    rows: Iterable[dict[str, Any]], pool: WorkerPool, seed: int, params: TasksParams
) -> Iterator[dict[str, Any]]:
    """One result per traces row, in order: ``items`` (rows of the tasks table), ``reasons``
    (families the case could not give) and ``drop`` (why the case gave nothing, else None)."""
    params_json = params.model_dump_json()
    payloads = ({"row": row, "seed": seed, "params": params_json} for row in rows)
    for result in pool.map(ITEMS_KIND, payloads):
        status = result.get("status")
        if status == "ok":
            yield result
        elif status in ("timeout", "memory"):
            yield {"items": [], "reasons": [], "drop": f"items_{status}"}
        else:  # a bug in the item builder: fail loudly, with the worker's message
            raise RuntimeError(f"building a case's items failed: {result.get('detail') or status}")


def items_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``items``: ``payload`` holds ``row`` (a traces row), ``seed`` and ``params``
    (TasksParams as JSON)."""
    row = payload["row"]
    trace = load_trace(row)
    if isinstance(trace, str):
        return {"status": "ok", "items": [], "reasons": [], "drop": trace}
    items, reasons = build_items_with_reasons(
        row, trace, seed=payload["seed"], params=_params(payload["params"])
    )
    drop = None
    if not items:
        drop = reasons[0].removeprefix("case:") if reasons else "no_item"
    return {
        "status": "ok",
        "items": items,
        "reasons": [r for r in reasons if not r.startswith("case:")],
        "drop": drop,
    }


@functools.lru_cache(maxsize=8)
def _params(text: str) -> TasksParams:
    return TasksParams.model_validate_json(text)


def load_trace(row: dict[str, Any]) -> dict[str, Any] | str:
    """The trace of a traces row, or the reason the row cannot give items."""
    status = row.get("status", "ok")
    if status is not None and status != "ok":
        return f"status_{status}"
    for key in ("source", "entry", "args", "trace"):
        if not isinstance(row.get(key), str):
            return f"missing_{key}"
    try:
        trace = json.loads(row["trace"])
    except json.JSONDecodeError:
        return "bad_trace_json"
    if not isinstance(trace, dict) or not isinstance(trace.get("steps"), list):
        return "bad_trace_json"
    return trace

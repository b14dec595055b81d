"""Items built in worker processes: the tasks stage's parallel half (docs/design.md §2).

``items_job`` is a job kind of the sandbox worker pool (``factory.sandbox.trusted.pool``): one traced case
in, its item rows out. The work is trusted (no program runs), the pool is used for its reused
processes and its in-order results; ``build_all`` feeds it and yields one result per case, in
order, so the output does not depend on the number of workers. A payload names the programs'
language (a registered name): a worker resolves it itself (``factory.languages``: a language a
worker must see is built in or named in ``LANGUAGES_ENV``).
"""

from __future__ import annotations

import functools
import gc
import json
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from factory.params import TasksParams
from factory.sandbox.trusted.pool import WorkerPool
from factory.sandbox.trusted.worker import RESOURCE_LIMIT
from factory.tasks.items import build_items_with_reasons

ITEMS_KIND = "items"
#: The tasks stage's job kinds, for ``WorkerPool(kinds=...)`` (as ``factory.trace.jobs.KINDS``).
KINDS = {ITEMS_KIND: "factory.tasks.job:items_job"}
CHUNK_ROWS = 16
ITEMS_TIMEOUT_S = 300.0  # one chunk's items; a 2,000-step trace takes milliseconds
ITEMS_MEMORY_MB = 2048


def items_pool(workers: int | None = None) -> WorkerPool:
    """A worker pool that serves ``items_job`` (``workers``: None or 0 is one per CPU)."""
    return WorkerPool(
        workers=workers or None,
        hash_seed=0,  # item building must not depend on it; fixed anyway
        timeout_s=ITEMS_TIMEOUT_S,
        memory_mb=ITEMS_MEMORY_MB,
        kinds=KINDS,
        # A chunk is long work: two queued per worker keep it busy, and the rest wait in the
        # parent, where an idle worker can take them (the end of a run stays balanced).
        window=2,
    )


def build_all(
    rows: Iterable[dict[str, Any]],
    pool: WorkerPool,
    seed: int,
    params: TasksParams,
    *,
    language: str = "python",
) -> Iterator[dict[str, Any]]:
    """One result per traces row, in order: ``items`` (rows of the tasks table), ``reasons``
    (families the case could not give) and ``drop`` (why the case gave nothing, else None).
    ``language``: the registered name of the programs' language.

    Rows travel in chunks of about ``CHUNK_ROWS`` (one job each: the per-job cost of the pipes is
    then shared); results do not depend on the chunking or on the number of workers.
    """
    params_json = params.model_dump_json()
    sizes: deque[int] = deque()

    def payloads() -> Iterator[dict[str, Any]]:
        for chunk in _chunks(rows):
            sizes.append(len(chunk))
            yield {"rows": chunk, "seed": seed, "params": params_json, "language": language}

    for result in pool.map(ITEMS_KIND, payloads(), affinity=_first_source):
        size = sizes.popleft()
        status = result.get("status")
        if status == "ok":
            yield from result["cases"]
        elif status == RESOURCE_LIMIT:
            # Which case of the chunk was at fault is unknown: the whole chunk is dropped.
            for _ in range(size):
                yield {"items": [], "reasons": [], "drop": f"items_{status}"}
        else:  # a bug in the item builder: fail loudly, with the worker's message
            raise RuntimeError(f"building items failed: {result.get('detail') or status}")


def _first_source(payload: dict[str, Any]) -> str:
    """The program a chunk starts with: its worker has likely analysed it already."""
    return str(payload["rows"][0].get("source"))


def _chunks(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Chunks of about ``CHUNK_ROWS`` rows that keep a program's rows together: a full chunk
    still takes the rows of the program it ends with (up to 4 × ``CHUNK_ROWS``), so that one
    worker parses and analyses that program once (the per-program work is cached per process,
    and a program split over two chunks is often split over two workers)."""
    chunk: list[dict[str, Any]] = []
    most = 4 * CHUNK_ROWS  # a program with many cases is still split
    for row in rows:
        if len(chunk) >= most or (len(chunk) >= CHUNK_ROWS and row.get("source") != chunk[-1].get("source")):
            yield chunk
            chunk = []
        chunk.append(row)
    if chunk:
        yield chunk


def items_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``items``: ``payload`` holds ``rows`` (traces rows), ``seed``, ``params``
    (TasksParams as JSON) and ``language`` (a registered name; default Python); the result's
    ``cases`` holds one result per row, in order."""
    params = _params(payload["params"])
    seed = payload["seed"]
    lang = payload.get("language", "python")
    enabled = gc.isenabled()
    gc.disable()
    try:
        return {"status": "ok", "cases": [case_items(row, seed, params, lang) for row in payload["rows"]]}
    finally:
        _after_chunk(enabled)


#: Chunks between two full collections of an items worker (see ``_after_chunk``).
CHUNKS_PER_SWEEP = 256
_chunks_done = 0


def _after_chunk(enabled: bool) -> None:
    """Building items allocates many objects that form no cycles (questions, prompts, parsed
    trees and what the per-program caches keep; a test checks that a collection after building
    finds nothing). The cyclic collector is paused during a chunk, and what the chunk leaves is
    frozen (``gc.freeze``) rather than scanned: the collector would otherwise go through every
    program's cached analysis again and again (about 5% of the work). A full collection every
    ``CHUNKS_PER_SWEEP`` chunks still finds any cycle that would have slipped in."""
    global _chunks_done
    _chunks_done += 1
    if _chunks_done % CHUNKS_PER_SWEEP == 0:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    if enabled:
        gc.enable()


def case_items(
    row: dict[str, Any], seed: int, params: TasksParams, language: str = "python"
) -> dict[str, Any]:
    """The result of one traces row: ``items``, ``reasons`` and ``drop`` (see ``build_all``)."""
    trace = load_trace(row)
    if isinstance(trace, str):
        return {"items": [], "reasons": [], "drop": trace}
    items, reasons = build_items_with_reasons(
        row, trace, seed=seed, params=params, verified=True, language=language
    )
    drop = None
    if not items:
        drop = reasons[0].removeprefix("case:") if reasons else "no_item"
    skipped = [r for r in reasons if not r.startswith("case:")]
    return {"items": items, "reasons": skipped, "drop": drop}


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

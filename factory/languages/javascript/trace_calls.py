"""Trace JavaScript calls from Python (tests, benches, single programs): the tracer facet's ``trace``
job kind on a pool of node workers, each call in a fresh ``vm`` context.

``trace_call_js`` gives what ``factory.trace.tracer.trace_call`` gives for Python (status,
``output_repr``, ``output_type``, ``steps``, ``states``, ``error``), with JavaScript's canonical text
and type names; docs/languages.md §6.3 has the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factory.errors import UserError
from factory.languages.javascript.runner import WORKER
from factory.languages.javascript.tracer import KINDS, LIMITS, check_call
from factory.sandbox.trusted.pool import WorkerPool
from factory.sandbox.trusted.worker import RESOURCE_LIMIT

#: ``node``'s heap limit for a tracing worker (MiB): a call past it ends as ``memory``.
HEAP_MB = 1024
#: CPU seconds a call may take (its worker is killed past it: ``timeout``).
CASE_TIMEOUT_S = 10.0


def trace_call_js(
    source: str,
    entry: str,
    args: str,
    *,
    capture: bool = True,
    max_steps: int | None = None,
    max_repr: int | None = None,
    max_state_bytes: int | None = None,
) -> dict[str, Any]:
    """Run ``entry(<args>)`` of the JavaScript ``source`` under the tracer and return the trace,
    in the shape of ``factory.trace.tracer.trace_call``'s result. A limit left out is
    ``TraceParams``' default. Raises UserError on bad args or limits."""
    return trace_calls_js(
        [(source, entry, args)],
        capture=capture,
        max_steps=max_steps,
        max_repr=max_repr,
        max_state_bytes=max_state_bytes,
    )[0]


def trace_calls_js(
    cases: Sequence[tuple[str, str, str]],
    *,
    capture: bool = True,
    max_steps: int | None = None,
    max_repr: int | None = None,
    max_state_bytes: int | None = None,
    timeout_s: float = CASE_TIMEOUT_S,
    workers: int = 1,
) -> list[dict[str, Any]]:
    """``trace_call_js`` of each ``(source, entry, args)``, on ``workers`` node workers. A call
    that kills its worker (its heap past ``HEAP_MB``: status ``memory``; past ``timeout_s`` CPU
    seconds: ``timeout``) ends only itself. Raises UserError on bad args or limits."""
    limits = _limits(max_steps, max_repr, max_state_bytes)
    payloads = [{"source": s, "entry": e, "args": a, "capture": capture, **limits} for s, e, a in cases]
    for payload in payloads:
        check_call(payload)
    if not payloads:
        return []
    pool = WorkerPool(workers=workers, timeout_s=timeout_s, memory_mb=HEAP_MB, worker=WORKER, kinds=KINDS)
    with pool:
        results = [_as_trace(result) for result in pool.map("trace", payloads)]
    for result in results:
        if result["status"] == "bad_args":  # as trace_call raises
            raise UserError(f"bad args or limits: {result['error']}")
    return results


def _as_trace(result: dict[str, Any]) -> dict[str, Any]:
    """A pool's answer as a trace: the worker's, or the pool's drop of a worker that died."""
    if "steps" in result:
        return result
    status, detail = result["status"], result.get("detail")
    if status == RESOURCE_LIMIT and detail in ("memory", "timeout"):
        status = detail
        detail = f"node ran out of heap ({HEAP_MB} MiB)" if status == "memory" else "the call ran out of time"
    return {
        "status": status,
        "output_repr": None,
        "output_type": None,
        "steps": [],
        "states": [],
        "error": detail,
    }


def _limits(max_steps: int | None, max_repr: int | None, max_state_bytes: int | None) -> dict[str, int]:
    """The limits, ``TraceParams``' defaults for those left out."""
    from factory.params import TraceParams

    defaults = TraceParams()
    given = {"max_steps": max_steps, "max_repr": max_repr, "max_state_bytes": max_state_bytes}
    return {name: getattr(defaults, name) if given[name] is None else given[name] for name in LIMITS}  # type: ignore[misc]

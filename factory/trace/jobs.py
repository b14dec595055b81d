"""The trace stage's job kinds for the trusted worker pool: the tracer run on a payload dict.

``KINDS`` maps each kind to its entry point; they are Python's tracing job kinds
(the ``tracer`` facet, ``Language.facet``), which the trace stage's ``Executor`` takes from the language
(``execverify trace`` hands ``KINDS`` to it itself). A payload holds ``source``, ``entry``,
``args``, the limits ``max_steps``, ``max_repr`` and ``max_state_bytes`` (the parent takes them
from ``TraceParams``: a worker never loads the params), and optionally ``capture``,
``eval_args``, ``code`` (the program compiled by the parent:
``factory.program_code.portable_code``) and ``one_line`` (the parent's ``one_line_statements``
of the source). The program's stdout is left as the worker set it (its bounded sink).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from factory.errors import UserError
from factory.trace.stored import stored_json, tracer_digest
from factory.trace.tracer import Tracer, trace_result, traced, with_lists

if TYPE_CHECKING:
    from factory.params import TraceParams

#: kind -> "module:function", for ``WorkerPool(kinds=...)``.
KINDS = {
    "trace": "factory.trace.jobs:trace_job",
    "trace_row": "factory.trace.jobs:trace_row_job",
    "trace_digest": "factory.trace.jobs:trace_digest_job",
}
#: The limits every payload holds.
LIMITS = ("max_steps", "max_repr", "max_state_bytes")


def payload_limits(params: TraceParams) -> dict[str, int]:
    """A payload's ``LIMITS``, from the trace params."""
    return {name: getattr(params, name) for name in LIMITS}


def trace_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``trace``: ``trace_call`` on a payload dict. Bad args or limits give status
    ``bad_args`` instead of raising."""
    return with_lists(*_job(payload))


def trace_digest_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``trace_digest``: ``trace_job`` without the trace, only its ``digest`` (the second
    hash seed's run of the trace stage; comparing digests is comparing traces). The digest is
    taken from the tracer's tuples: no list of dicts is built."""
    result, tracer = _job(payload)
    if result["status"] != "ok" or tracer is None:
        return _summary(result, None)
    return _summary(result, tracer_digest(tracer))


def trace_row_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``trace_row``: ``trace_job`` with the trace as the trace stage stores it (``trace``:
    compact JSON of status, output, steps and states), its ``digest``, ``trace_length`` and
    ``n_states``, instead of the lists (one string crosses the pipe)."""
    result, tracer = _job(payload)
    if result["status"] != "ok" or tracer is None:
        return _summary(result, None)
    out = _summary(result, tracer_digest(tracer))
    out["trace"] = stored_json(result, tracer)
    out["trace_length"] = len(tracer.lines)
    out["n_states"] = len(tracer.states)
    return out


def _job(payload: dict[str, Any]) -> tuple[dict[str, Any], Tracer | None]:
    """``trace_job`` with the steps and states left in the tracer (see ``traced``)."""
    try:
        result, tracer = traced(
            payload["source"],
            payload.get("entry", "f"),
            payload.get("args", ""),
            payload.get("capture", True),
            payload["max_steps"],
            payload["max_repr"],
            eval_args=payload.get("eval_args", False),
            quiet=False,  # the worker already points stdout at its bounded sink
            max_state_bytes=payload["max_state_bytes"],
            shipped=payload.get("code"),
            one_line=payload.get("one_line"),
        )
    except UserError as exc:
        return trace_result("bad_args", error=str(exc)), None
    if result["status"] == "memory":
        result["retire"] = True  # the worker exits after this job: its heap may be fragmented
    return result, tracer


def _summary(result: dict[str, Any], digest: str | None) -> dict[str, Any]:
    """A trace result without its steps and states, with ``digest``."""
    keys = ("status", "output_repr", "output_type", "error")
    out: dict[str, Any] = {k: result[k] for k in keys if k in result}
    out["digest"] = digest
    if result.get("retire"):
        out["retire"] = True
    return out

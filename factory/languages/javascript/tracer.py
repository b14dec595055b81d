"""JavaScript's ``tracer`` facet: the job kinds ``trace``, ``trace_row`` and ``trace_digest`` of the
node worker (``runner.WORKER``), run by ``tracer.js`` (docs/languages.md §6.3).

They take the payloads of Python's kinds (``factory.trace.jobs``: ``source``, ``entry``, ``args``,
the limits ``max_steps``, ``max_repr``, ``max_state_bytes``, optionally ``capture``; ``code`` and
``one_line``, Python's, are ignored) and give the same result shapes: ``trace`` the result of
``factory.trace.tracer.trace_call``, ``trace_row`` the stored trace JSON with its ``digest``,
``trace_length`` and ``n_states``, ``trace_digest`` only the digest. So the trace stage's
``Executor.from_params(..., kinds=lang.facet("tracer").KINDS, language=lang)`` traces JavaScript.

Node cannot parse JavaScript with tree-sitter, so the parent instruments the program before it
sends a job: importing this module adds ``job_payload`` to ``runner.PAYLOAD_MAKERS`` for these
kinds (cached per program by ``instrument``: the rows of a program come together). A call the
parent finds it cannot trace (the program does not instrument, bad limits) travels as its
refusal, which the worker answers in the kind's shape; the worker checks the arguments.
"""

from __future__ import annotations

from typing import Any

from factory.errors import UserError
from factory.languages.javascript import runner
from factory.languages.javascript.instrument import IDENTIFIER, InstrumentError, instrument

#: kind -> "file.js:function" of the node worker (worker.js resolves it next to itself).
KINDS = {
    "trace": "tracer.js:traceJob",
    "trace_row": "tracer.js:traceRowJob",
    "trace_digest": "tracer.js:traceDigestJob",
}
#: The limits every payload holds (``factory.trace.jobs.LIMITS``).
LIMITS = ("max_steps", "max_repr", "max_state_bytes")


def check_call(payload: dict[str, Any]) -> None:
    """Raise UserError when a limit of the payload is not a positive int or it asks for
    ``eval_args``. Its ``args`` are checked by the worker, as the runner's are: the values the
    argument text gives in the program's context must each have a literal (``bad_args``
    otherwise; parsing them here cost the parent more than the rest of a job)."""
    for name in LIMITS:
        value = payload.get(name)
        if type(value) is not int or value < 1:
            raise UserError(f"{name} must be a positive int, got {value!r}")
    if payload.get("eval_args"):
        raise UserError("eval_args: JavaScript arguments are literals only")


def job_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload ``tracer.js`` runs for a stage's payload: the instrumented program (``code``,
    ``sites``), ``entry``, ``args``, ``capture`` and the limits; or ``{"refused": {status, error}}``
    (``bad_args``, ``bad_program``)."""
    try:
        check_call(payload)
    except UserError as exc:
        return _refused("bad_args", str(exc))
    entry = payload.get("entry", "f")
    source = payload.get("source")
    if not isinstance(source, str) or not isinstance(entry, str):
        return _refused("bad_program", "source and entry must be strings")
    try:
        program = instrument(source)
    except InstrumentError as exc:
        return _refused("bad_program", str(exc))
    if not IDENTIFIER.match(entry):
        return _refused("bad_program", f"no function {entry!r} in the program")
    return {
        "code": program.code,
        "sites": program.sites,
        "entry": entry,
        "args": payload.get("args", ""),
        "capture": payload.get("capture", True),
        **{name: payload[name] for name in LIMITS},
    }


def _refused(status: str, error: str) -> dict[str, Any]:
    return {"refused": {"status": status, "error": error}}


runner.PAYLOAD_MAKERS.update(dict.fromkeys(KINDS, job_payload))

__all__ = ["KINDS", "LIMITS", "check_call", "job_payload"]

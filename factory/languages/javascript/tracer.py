"""The JavaScript tracer: the Python tracer's semantics (docs/design.md §4) for JavaScript programs,
by instrumenting the source (``instrument``) and running it with ``tracer.js`` under ``node``.

``trace_call_js`` gives the result ``factory.trace.tracer.trace_call`` gives (status,
``output_repr``, ``output_type``, ``steps``, ``states``, ``error``), with JavaScript's canonical
text and type names; docs/languages.md §6.3 has the rules and where they differ from Python's.
``trace_payload`` is the job a worker runs (``traceJob`` of ``tracer.js``, in a fresh ``vm``
context); ``trace_calls_js`` runs many in one ``node`` process (a fresh ``node`` costs ~40 ms).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factory.errors import UserError
from factory.languages.javascript.instrument import IDENTIFIER, InstrumentError, instrument
from factory.languages.javascript.values import parse_args

#: The runtime (package data, like ``canonical.js``, which it loads).
TRACER_JS = Path(__file__).with_name("tracer.js")
#: ``node``'s heap limit for a tracing process (MiB): a run past it ends as ``memory``.
HEAP_MB = 1024
#: Seconds a case may take in ``trace_calls_js`` (the process is killed past it: ``timeout``).
CASE_TIMEOUT_S = 10.0

_LIMITS = ("max_steps", "max_repr", "max_state_bytes")


def trace_payload(
    source: str,
    entry: str,
    args: str,
    *,
    max_steps: int,
    max_repr: int,
    max_state_bytes: int,
    capture: bool = True,
) -> dict[str, Any]:
    """The payload of ``traceJob`` (``tracer.js``) for one call, or, when the program cannot be
    traced, the ``bad_program`` result itself (it has a ``status``). Raises UserError when
    ``args`` are not JavaScript literals or a limit is not a positive int."""
    limits = {"max_steps": max_steps, "max_repr": max_repr, "max_state_bytes": max_state_bytes}
    for name, value in limits.items():
        if type(value) is not int or value < 1:
            raise UserError(f"{name} must be a positive int, got {value!r}")
    try:
        parse_args(args)
    except (ValueError, SyntaxError) as exc:
        raise UserError(f"args are not JavaScript literals: {args[:200]!r} ({exc})") from None
    try:
        program = instrument(source)
    except InstrumentError as exc:
        return bad_program(str(exc))
    if not IDENTIFIER.match(entry):
        return bad_program(f"no function {entry!r} in the program")
    return {
        "code": program.code,
        "sites": program.sites,
        "entry": entry,
        "args": args,
        "capture": capture,
        **limits,
    }


def bad_program(error: str) -> dict[str, Any]:
    """The result for a program that cannot be traced."""
    return {
        "status": "bad_program",
        "output_repr": None,
        "output_type": None,
        "steps": [],
        "states": [],
        "error": error,
    }


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
) -> list[dict[str, Any]]:
    """``trace_call_js`` of each ``(source, entry, args)``, in one ``node`` process (each call
    in a fresh ``vm`` context). A case that kills the process (its heap past ``HEAP_MB``: status
    ``memory``) or outlasts ``timeout_s`` (``timeout``) ends only itself: the rest run in a new
    process."""
    limits = _limits(max_steps, max_repr, max_state_bytes)
    payloads = [trace_payload(s, e, a, capture=capture, **limits) for s, e, a in cases]
    results: list[dict[str, Any] | None] = [p if "status" in p else None for p in payloads]
    todo = [i for i, r in enumerate(results) if r is None]
    while todo:
        done = _run_node([payloads[i] for i in todo], timeout_s * len(todo) + 5)
        for i, result in zip(todo, done, strict=False):
            results[i] = result
        todo = todo[len(done) :]
    return [r for r in results if r is not None]


def _limits(max_steps: int | None, max_repr: int | None, max_state_bytes: int | None) -> dict[str, int]:
    """The limits, ``TraceParams``' defaults for those left out."""
    from factory.params import TraceParams

    defaults = TraceParams()
    given = {"max_steps": max_steps, "max_repr": max_repr, "max_state_bytes": max_state_bytes}
    return {name: getattr(defaults, name) if given[name] is None else given[name] for name in _LIMITS}  # type: ignore[misc]


def node_binary() -> str:
    """The ``node`` executable (Node.js ≥ 20, a requirement of the project: README)."""
    node = shutil.which("node")
    if node is None:
        raise UserError("node (Node.js >= 20) is not on PATH: the JavaScript tracer needs it")
    return node


def _run_node(payloads: list[dict[str, Any]], timeout_s: float) -> list[dict[str, Any]]:
    """Results of ``payloads`` run in order by one ``node tracer.js``: all of them, or those
    before the case that ended the process followed by that case's ``memory``/``timeout``."""
    command = [node_binary(), f"--max-old-space-size={HEAP_MB}", str(TRACER_JS)]
    stdin = "".join(json.dumps(p) + "\n" for p in payloads)
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout_s)
        out, failed = done.stdout, done.returncode != 0
        status = "memory" if "heap out of memory" in done.stderr else "tracer_error"
        detail = (
            [f"node ran out of heap ({HEAP_MB} MiB)"] if status == "memory" else done.stderr.splitlines()[-1:]
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        failed, status, detail = True, "timeout", []
    results = [json.loads(line) for line in out.splitlines() if line.strip()]
    if failed and len(results) < len(payloads):
        results.append({**bad_program(detail[0] if detail else status), "status": status})
    elif len(results) != len(payloads):
        raise RuntimeError(f"tracer.js gave {len(results)} results for {len(payloads)} payloads")
    return results

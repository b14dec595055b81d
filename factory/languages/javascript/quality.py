"""JavaScript's ``quality`` facet: the inputs stage's job kinds ``arcs`` and ``ablation`` on the
node worker (``runner.WORKER``), run by ``quality.js`` (docs/languages.md §6.5).

They take the payloads of Python's kinds (``factory.quality.jobs``) and give the same result
shapes, counting the tracer's steps as the line events: a step is a statement's execution at its
first line (§6.3), so an ``if`` test at line L went both ways when two different lines followed L
in its frame. As the tracer facet does, importing this module adds the parent's payload makers
to ``runner.PAYLOAD_MAKERS``: node cannot parse JavaScript with tree-sitter, so the parent sends
the programs instrumented by ``instrument`` (the tracer's hooks, its states not captured).
"""

from __future__ import annotations

from typing import Any

from factory.languages.javascript import runner
from factory.languages.javascript.instrument import IDENTIFIER, InstrumentError, instrument

#: kind -> "file.js:function" of the node worker (worker.js resolves it next to itself).
KINDS = {
    "arcs": "quality.js:arcsJob",
    "ablation": "quality.js:ablationJob",
}
#: The ablation payload's keys that travel as they are (``factory.quality.ablation.ablation_payload``).
_ABLATION_KEYS = ("inputs", "full", "stop", "first_hit", "factor", "slack", "total")


def _program(source: Any, entry: Any, *, cache: bool = True) -> dict[str, Any]:
    """``{"code": ...}``: ``source`` instrumented (through the tracer's cache when ``cache``: the
    candidates of a program come together; a program's variants are each run once); or
    ``{"refused": why}`` when it cannot run."""
    if not isinstance(source, str) or not isinstance(entry, str) or not IDENTIFIER.match(entry):
        return {"refused": "source and entry must be a string and a name"}
    try:
        program = instrument(source) if cache else instrument.__wrapped__(source)
    except InstrumentError as exc:
        return {"refused": str(exc)}
    return {"code": program.code}


def arcs_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """What ``quality.js``'s ``arcsJob`` runs for an ``arcs`` payload (``source``, ``entry``,
    ``args``, ``tests``, ``budget``)."""
    entry = payload.get("entry", "f")
    return {
        **_program(payload.get("source"), entry),
        "entry": entry,
        "args": payload.get("args", ""),
        "tests": payload.get("tests"),
        "budget": payload.get("budget"),
    }


def ablation_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """What ``quality.js``'s ``ablationJob`` runs for an ``ablation`` payload: the program and its
    variants instrumented (a variant that cannot be is refused: its runs fail, a changed outcome)."""
    entry = payload.get("entry", "f")
    return {
        "entry": entry,
        "program": _program(payload["source"], entry),
        "variants": [_program(v, entry, cache=False) for v in payload["variants"]],
        **{key: payload[key] for key in _ABLATION_KEYS if key in payload},
    }


runner.PAYLOAD_MAKERS.update({"arcs": arcs_payload, "ablation": ablation_payload})

__all__ = ["KINDS", "ablation_payload", "arcs_payload"]

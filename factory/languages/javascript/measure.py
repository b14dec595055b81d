"""JavaScript's ``measure`` facet: the quality figures of ``factory.quality.measure`` on the node
worker (``runner.WORKER``), docs/quality.md.

``KINDS``: ``quality`` (``quality.js``'s ``qualityJob``: ``if`` outcomes through the ``arcs`` runs,
random runs and item solves, each bounded by ``RUN_STEPS`` steps) and ``ablation`` (the inputs
stage's). The parent makes the ``quality`` payload (``quality_payload``): node has no tree-sitter,
so the static facts (``static.analyse``) and the program's instrumentation are worked out here and
the job hands the facts back with its answer, in the result shape of Python's ``quality`` job.
``shape_args``: an argument text's values as stand-ins ``factory.quality.signature`` can shape
(``stand_in``), to find a program's pool from its arguments as Python's are found.
"""

from __future__ import annotations

from typing import Any

from factory.languages.javascript import quality, runner, values
from factory.languages.javascript.static import analyse
from factory.quality.probe import MAX_SLOW, plain_facts
from factory.quality.signature import shape_of

#: Steps a random or item run may take: far above a released case's (the trace stage keeps runs
#: of at most 2,000), so that only a run that runs away on a random input is stopped; a count, so
#: the verdict is the same under any load (Python's runs have a CPU timer instead).
RUN_STEPS = 100_000
KINDS = {"quality": "quality.js:qualityJob", "ablation": quality.KINDS["ablation"]}
WORKER = runner.WORKER


def quality_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """What ``qualityJob`` runs for a ``quality`` payload (``factory.quality.probe``'s)."""
    source, entry = payload.get("source"), payload.get("entry", "f")
    try:
        facts = analyse(source) if isinstance(source, str) else None
    except SyntaxError:
        facts = None
    tests = [[t.line, t.body_line] for t in facts.if_tests if t.body_line] if facts else []
    return {
        **quality.arcs_payload({"source": source, "entry": entry}),
        "inputs": payload.get("inputs", []),
        "tests": tests,
        "random": payload.get("random", []),
        "items": payload.get("items", []),
        "budget": RUN_STEPS,
        "max_slow": MAX_SLOW,
        "static": None if facts is None else plain_facts(facts),
    }


def stand_in(value: Any) -> Any:
    """A Python value with the shape of a JavaScript one: a number is a float (one type), an
    array of mixed types a tuple (a pair), a ``Set`` ``("Set", [items])``, a ``Map`` ``("Map",
    {key: value})`` (object stand-ins otherwise would look alike); ``undefined`` and what cannot
    stand in (a Map with array keys) have no shape."""
    if isinstance(value, bool) or isinstance(value, str) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        items = [stand_in(v) for v in value]
        return items if shape_of(items) is not None else tuple(items)  # a pair [1, "a"]: a fixed tuple
    if isinstance(value, dict):
        return {k: stand_in(v) for k, v in value.items()}
    if isinstance(value, values.JsSet):
        return ("Set", [stand_in(v) for v in value.items])
    if isinstance(value, values.JsMap):
        try:
            return ("Map", {stand_in(k): stand_in(v) for k, v in value.entries})
        except TypeError:  # an unhashable key
            return object()
    return object()


def shape_args(text: str) -> tuple[Any, ...]:
    """The stand-ins of an argument text's values; UserError when it is not literals."""
    from factory.languages.javascript import JAVASCRIPT

    return tuple(stand_in(v) for v in JAVASCRIPT.parse_args(text))


runner.PAYLOAD_MAKERS["quality"] = quality_payload

__all__ = ["KINDS", "RUN_STEPS", "WORKER", "quality_payload", "shape_args", "stand_in"]

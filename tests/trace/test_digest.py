"""The trace digest: what the second hash seed's run sends instead of its trace (docs/design.md §4).

Two runs agree exactly when their digests are equal: same steps, same states, values of sets
compared as sets (a set of strings iterates in hash-seed order), everything else by repr.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from factory.errors import UserError
from factory.execute.runner import Executor
from factory.params import TraceParams
from factory.trace.jobs import KINDS, payload_limits, trace_digest_job, trace_job, trace_row_job
from factory.trace.stage import same_digest, same_trace, trace_payloads
from factory.trace.stored import trace_digest
from factory.trace.tracer import trace_call

LIMITS = payload_limits(TraceParams())
WORDS = repr([f"w{i}" for i in range(12)])
#: Hand-written cases whose runs under two hash seeds differ, or only seem to (name -> expected).
HASH_CASES = {
    "def f(ws):\n    s = set(ws)\n    w = s.pop()\n    return len(s)\n": "nondeterministic",
    "def f(ws):\n    d = {w: 1 for w in set(ws)}\n    return len(d)\n": "nondeterministic",
    "def f(ws):\n    s = set(ws)\n    t = {'k': s}\n    return len(t['k'])\n": "ok",  # sets as sets
}

SOURCE = "def f(words):\n    s = set(words)\n    d = {'k': s, 'n': [s]}\n    n = len(s)\n    return n\n"


def _trace() -> dict[str, Any]:
    trace = trace_call(SOURCE, "f", "['ab', 'cd', 'ef']")
    assert trace["status"] == "ok"
    return trace


def _with_repr(trace: dict[str, Any], var: str, text: str) -> dict[str, Any]:
    other = copy.deepcopy(trace)
    state = next(s for s in other["states"] if s["var"] == var)
    state["repr"] = text
    return other


def test_sets_compare_as_sets() -> None:
    trace = _trace()
    reordered = _with_repr(trace, "s", "{'ef', 'cd', 'ab'}")
    nested = _with_repr(reordered, "d", "{'k': {'cd', 'ab', 'ef'}, 'n': [{'ef', 'ab', 'cd'}]}")
    assert same_trace(trace, nested)
    assert trace_digest(trace) == trace_digest(reordered) == trace_digest(nested)


def test_any_other_difference_changes_the_digest() -> None:
    trace = _trace()
    digest = trace_digest(trace)
    changed_value = _with_repr(trace, "s", "{'ab', 'cd', 'xx'}")
    dict_order = _with_repr(trace, "d", "{'n': [{'ab', 'cd', 'ef'}], 'k': {'ab', 'cd', 'ef'}}")
    changed_type = copy.deepcopy(trace)
    changed_type["states"][-1]["type"] = "bool"
    changed_line = copy.deepcopy(trace)
    changed_line["steps"][1]["line"] = 4
    fewer_states = copy.deepcopy(trace)
    fewer_states["states"].pop()
    for other in (changed_value, dict_order, changed_type, changed_line, fewer_states):
        assert not same_trace(trace, other)
        assert trace_digest(other) != digest


def test_job_kinds_carry_the_same_trace() -> None:
    payload = {
        "source": SOURCE,
        "entry": "f",
        "args": "['ab', 'cd']",
        **LIMITS,
        "max_steps": 100,
        "max_repr": 50,
    }
    full = trace_job(payload)
    row = trace_row_job(payload)
    digest_only = trace_digest_job(payload)
    stored = {k: full[k] for k in ("status", "output_repr", "output_type", "steps", "states")}
    assert json.loads(row["trace"]) == stored
    assert row["trace_length"] == len(full["steps"]) and row["n_states"] == len(full["states"])
    assert row["digest"] == digest_only["digest"] == trace_digest(full)
    assert "steps" not in digest_only and "states" not in digest_only
    failed = trace_digest_job({**payload, "source": "def f(x):\n    return 1 / 0\n"})
    assert failed["status"] == "error:ZeroDivisionError" and failed["digest"] is None


def test_digest_verdicts_equal_trace_verdicts_on_cruxeval(cruxeval_records: list[dict[str, Any]]) -> None:
    """Across two real hash seeds, comparing digests keeps and drops exactly what comparing the
    traces does, for every CRUXEval case (with hash-dependent ones among them)."""
    cases = []
    for record in cruxeval_records:
        try:
            trace_call(record["code"], "f", record["input"], max_steps=1)
        except UserError:
            continue  # an argument expression, not literals
        cases.append({"source": record["code"], "entry": "f", "args": record["input"]})
    cases += [{"source": source, "entry": "f", "args": WORDS} for source in HASH_CASES]
    payloads = list(trace_payloads(cases, 2000, 300))
    with Executor(workers=2, kinds=KINDS) as executor:
        by_trace = [r["status"] for r in executor.run(payloads, kind="trace", agree=same_trace)]
        kinds = ["trace_row", "trace_digest"]
        by_digest = [r["status"] for r in executor.run(payloads, kind=kinds, agree=same_digest)]
    assert by_digest == by_trace
    assert by_trace[-len(HASH_CASES) :] == list(HASH_CASES.values())
    assert by_trace.count("ok") > 750


def test_stored_json_is_json_dumps_of_the_trace(cruxeval_records: list[dict[str, Any]]) -> None:
    """``trace_row``'s hand-written JSON is byte for byte ``json.dumps`` of the trace's dicts: on
    every CRUXEval case and on values that need escaping (non-ASCII, quotes, backslashes, line
    breaks, a lone surrogate, an emoji, bools and -0.0 inside literals)."""
    escapes = (
        "def f(x):\n    y = {'a\u00e9': [1.5, -0.0, None, True]}\n"
        "    z = 'q\"\\\\' + chr(10) + chr(0xd800) + chr(0x1F600)\n    return (x, z)\n"
    )
    payloads = [{"source": escapes, "entry": "f", "args": "'h\u00e9'"}]
    payloads += [
        {"source": r["code"], "entry": "f", "args": r["input"], "eval_args": True} for r in cruxeval_records
    ]
    checked = 0
    for payload in payloads:
        full = trace_job({**payload, **LIMITS})
        if full["status"] != "ok":
            continue
        row = trace_row_job({**payload, **LIMITS})
        stored = {k: full[k] for k in ("status", "output_repr", "output_type", "steps", "states")}
        assert row["trace"] == json.dumps(stored, separators=(",", ":"))
        checked += 1
    assert checked > 750


def test_the_tracers_canonical_forms_give_the_digest_of_the_stored_trace() -> None:
    """The jobs digest sets from the values they saw; ``trace_digest`` parses the stored reprs
    back: both give one digest (empty sets, sets nested in dicts, tuples and lists included)."""
    source = (
        "def f(ws):\n    a = [set(), {1}]\n    b = {'k': ({'x', 'y'}, [set(ws)])}\n"
        "    c = (1, 'a{b}', {'z': 2})\n    s = set()\n    s.add(ws[0])\n    return len(b)\n"
    )
    payload = {"source": source, "entry": "f", "args": WORDS, **LIMITS}
    full = trace_job(payload)
    assert full["status"] == "ok"
    assert trace_row_job(payload)["digest"] == trace_digest_job(payload)["digest"] == trace_digest(full)

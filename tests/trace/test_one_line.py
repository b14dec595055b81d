"""The tracer's lexical shortcut: a program whose statements each sit on one line is compiled
without its syntax tree (no continuation lines to fold). It must never change a trace."""

from __future__ import annotations

from typing import Any

import pytest

from factory.trace import jobs, statements, tracer

CASES = {
    "def f(x):\n    return x\n": True,
    "def f(x):\n    return {'a': [1, 2]}  # a comment\n": True,
    "def f(x):\n    s = ')'  # (\n    return s\n": True,
    'def f(x):\n    s = "it\'s # not"\n    return s\n': True,
    "def f(x):\n    s = '\\\\'\n    return s\n": True,
    "def f(x):\n    s = r'\\''\n    return s\n": True,
    "def f(x):\n    y = (x +\n        1)\n    return y\n": False,
    "def f(x):\n    y = x + \\\n 1\n    return y\n": False,
    "def f(x):\n    s = '''a\nb'''\n    return s\n": False,
    "def f(x):\n    s = 'a\\\nb'\n    return s\n": False,
    "def f(x):\n    @staticmethod\n    def g(): pass\n    return 1\n": False,
    "def f(x):\n    return [\n        x]\n": False,
}


@pytest.mark.parametrize("source, expected", CASES.items())
def test_one_line_statements(source: str, expected: bool) -> None:
    assert statements.one_line_statements(source) is expected
    if expected:  # then every statement starts on its own line: no line maps to another
        assert all(line == start for line, start in statements.statement_starts(source).items())


def test_traces_do_not_depend_on_the_shortcut(
    cruxeval_records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = [r["code"] for r in cruxeval_records] + list(CASES)
    calls = [(r["code"], r["input"]) for r in cruxeval_records] + [(s, "3") for s in CASES]
    assert sum(map(statements.one_line_statements, sources)) > 700  # the shortcut is the common case

    def trace_all() -> list[dict[str, Any]]:
        tracer._prepare.cache_clear()
        return [tracer.trace_call(source, "f", args, eval_args=True) for source, args in calls]

    fast = trace_all()
    monkeypatch.setattr(tracer, "one_line_statements", lambda source: False)
    assert trace_all() == fast
    tracer._prepare.cache_clear()


def test_the_trace_stage_checks_once_and_the_workers_take_its_word(monkeypatch: pytest.MonkeyPatch) -> None:
    from factory.trace.stage import trace_payloads

    rows = [{"source": source, "entry": "f", "args": "3"} for source in CASES for _ in range(2)]
    checked: list[str] = []
    real = statements.one_line_statements
    monkeypatch.setattr(
        "factory.trace.stage.one_line_statements", lambda source: checked.append(source) or real(source)
    )
    payloads = list(trace_payloads(rows, 2000, 300))
    assert checked == list(CASES)  # once per program, its rows being together
    assert [p["one_line"] for p in payloads] == [expected for expected in CASES.values() for _ in range(2)]

    # A worker given the flag does not check again, and traces as it would have without it.
    tracer._prepare.cache_clear()
    expected = [jobs.trace_job(dict(p, one_line=None)) for p in payloads]
    tracer._prepare.cache_clear()

    def refuse(source: str) -> bool:
        raise AssertionError("checked again in the worker")

    monkeypatch.setattr(tracer, "one_line_statements", refuse)
    assert [jobs.trace_job(p) for p in payloads] == expected
    tracer._prepare.cache_clear()

"""All 800 CRUXEval cases trace without error, their traced outputs equal the benchmark's, and
every question derived from their traces is well formed."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from factory.errors import UserError
from factory.literals import parse_args, strict_equal
from factory.tasks.questions import questions_from_trace
from factory.trace.tracer import trace_call


def _needs_eval(args: str) -> bool:
    """CRUXEval writes 12 of its inputs as expressions (``dict(a=1)``, ``xs[:]``, lambdas)."""
    try:
        parse_args(args)
    except UserError:
        return True
    return False


@pytest.fixture(scope="module")
def cases(cruxeval_records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**row, "eval_args": _needs_eval(row["input"])} for row in cruxeval_records]


@pytest.fixture(scope="module")
def traces(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [trace_call(case["code"], "f", case["input"], eval_args=case["eval_args"]) for case in cases]


def test_all_800_cases_trace_ok_with_the_benchmarks_output(
    cases: list[dict[str, Any]], traces: list[dict[str, Any]]
) -> None:
    assert len(cases) == 800
    assert sum(case["eval_args"] for case in cases) == 12
    problems = []
    for case, trace in zip(cases, traces, strict=True):
        if trace["status"] != "ok":
            problems.append((case["id"], trace["status"], trace["error"]))
        elif not strict_equal(ast.literal_eval(trace["output_repr"]), ast.literal_eval(case["output"])):
            problems.append((case["id"], trace["output_repr"], case["output"]))
    assert problems == []


def test_traces_are_well_formed(cases: list[dict[str, Any]], traces: list[dict[str, Any]]) -> None:
    for case, trace in zip(cases, traces, strict=True):
        n_lines = len(case["code"].splitlines())
        steps = trace["steps"]
        assert steps, case["id"]
        assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
        assert all(1 <= s["line"] <= n_lines for s in steps), case["id"]
        assert steps[0]["func"] == "f"
        for state in trace["states"]:
            assert 1 <= state["step"] <= len(steps)
            if state["literal"]:
                value = ast.literal_eval(state["repr"])
                assert type(value).__name__ == state["type"], (case["id"], state)


def test_capture_off_gives_the_same_steps(cases: list[dict[str, Any]], traces: list[dict[str, Any]]) -> None:
    for case, trace in list(zip(cases, traces, strict=True))[::10]:
        cheap = trace_call(case["code"], "f", case["input"], eval_args=case["eval_args"], capture=False)
        assert cheap["steps"] == trace["steps"], case["id"]


def test_questions_of_every_case(cases: list[dict[str, Any]], traces: list[dict[str, Any]]) -> None:
    families: dict[str, int] = {}
    for case, trace in zip(cases, traces, strict=True):
        n_lines = len(case["code"].splitlines())
        for question in questions_from_trace(case["code"], trace):
            families[question["family"]] = families.get(question["family"], 0) + 1
            if question["family"] == "next_line":
                assert question["answer"] == -1 or 1 <= question["answer"] <= n_lines
            elif question["family"] == "state" and question["answer"] != "Nil":
                value, _, type_name = question["answer"].rpartition("; ")
                assert type(ast.literal_eval(value)).__name__ == type_name
            elif question["family"] == "coverage":
                assert question["answer"] in ("YES", "NO")
    assert families["output"] == 800
    assert families["next_line"] > 8000 and families["state"] > 2000 and families["coverage"] > 3000


def test_through_the_worker_pool(cases: list[dict[str, Any]]) -> None:
    """The same cases through the sandbox pool's ``trace`` job kind, when the pool exists."""
    from factory.params import TraceParams
    from factory.sandbox.trusted.pool import WorkerPool
    from factory.trace.jobs import KINDS, payload_limits

    limits = payload_limits(TraceParams())
    payloads = [
        {"source": c["code"], "entry": "f", "args": c["input"], "eval_args": c["eval_args"], **limits}
        for c in cases
    ]
    with WorkerPool(workers=2, timeout_s=10.0, kinds=KINDS) as pool:
        results = list(pool.map("trace", payloads))
    problems = []
    for case, result in zip(cases, results, strict=True):
        if result["status"] != "ok":
            problems.append((case["id"], result["status"], result.get("error") or result.get("detail")))
        elif not strict_equal(ast.literal_eval(result["output_repr"]), ast.literal_eval(case["output"])):
            problems.append((case["id"], result["output_repr"], case["output"]))
        elif not result["steps"]:
            problems.append((case["id"], "no steps"))
    assert problems == []

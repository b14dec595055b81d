"""JavaScript's ``quality`` facet: the inputs stage's ``arcs`` and ``ablation`` jobs on the node
worker, with the payloads and result shapes of Python's (``factory.quality.jobs``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from factory import languages
from factory.languages.javascript import quality
from factory.languages.javascript.runner import KINDS as RUN_KINDS
from factory.languages.javascript.runner import WORKER
from factory.quality.ablation import ablation_of, ablation_payload
from factory.quality.jobs import INCOMPLETE, TOO_MANY_STEPS, arcs_job
from factory.sandbox.trusted.pool import WorkerPool

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js >= 20) is not on PATH")

JS = languages.language("javascript")
# The same program in both languages, line for line (Python's blank lines stand for the braces).
PROGRAM = (
    "function g(x) {\n"  # 1
    "  return x * 2;\n"  # 2
    "}\n"  # 3
    "function f(a, b) {\n"  # 4
    "  let t = 0;\n"  # 5
    "  if (a > b) {\n"  # 6
    "    t = g(a);\n"  # 7
    "  }\n"  # 8
    "  return t;\n"  # 9
    "}\n"
)
PYTHON = (
    "def g(x):\n    return x * 2\n\n"  # 1-3
    "def f(a, b):\n    t = 0\n    if a > b:\n        t = g(a)\n\n    return t\n"  # 4-9
)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    kinds = {**JS.facet("quality").KINDS, **RUN_KINDS}
    with WorkerPool(workers=1, kinds=kinds, worker=WORKER, memory_mb=256) as started:
        yield started


def _arcs(pool: WorkerPool, source: str, args: str, **extra: Any) -> dict[str, Any]:
    payload = {"source": source, "entry": "f", "args": args, **extra}
    return next(iter(pool.map("arcs", [payload])))


def test_the_facet_names_both_kinds_and_makes_their_payloads() -> None:
    assert set(quality.KINDS) == {"arcs", "ablation"}
    assert "code" in quality.arcs_payload({"source": PROGRAM, "entry": "f", "args": "1, 2"})
    assert "refused" in quality.arcs_payload({"source": "class A {}\n", "entry": "f", "args": ""})


def test_arcs_give_the_lines_and_the_arcs_of_each_frame(pool: WorkerPool) -> None:
    taken = _arcs(pool, PROGRAM, "3, 1")
    assert (taken["status"], taken["output_repr"], taken["output_type"]) == ("ok", "6", "number")
    assert taken["lines"] == [2, 5, 6, 7, 9]
    # g's frame: entry -> 2 -> return; f's: entry -> 5 -> 6 -> 7 -> 9 -> return (g's steps between
    # 7 and 9 do not make an arc of f).
    assert [tuple(a) for a in taken["arcs"]] == [(0, 2), (0, 5), (2, 0), (5, 6), (6, 7), (7, 9), (9, 0)]
    assert taken["events"] == 5
    skipped = _arcs(pool, PROGRAM, "1, 3")
    assert [tuple(a) for a in skipped["arcs"]] == [(0, 5), (5, 6), (6, 9), (9, 0)]
    assert skipped["lines"] == [5, 6, 9] and skipped["output_repr"] == "0"


def test_arcs_equal_pythons_on_the_same_program_line_for_line(pool: WorkerPool) -> None:
    for args in ("3, 1", "1, 3"):
        js, py = _arcs(pool, PROGRAM, args), arcs_job({"source": PYTHON, "entry": "f", "args": args})
        assert [tuple(a) for a in js["arcs"]] == py["arcs"]
        assert (js["lines"], js["events"], js["output_repr"]) == (
            py["lines"],
            py["events"],
            py["output_repr"],
        )


def test_arcs_only_from_the_test_lines_when_given(pool: WorkerPool) -> None:
    only = _arcs(pool, PROGRAM, "3, 1", tests=[6])
    assert [tuple(a) for a in only["arcs"]] == [(6, 7)]
    assert only["lines"] == [2, 5, 6, 7, 9]


def test_a_run_past_its_budget_stops_at_the_same_step(pool: WorkerPool) -> None:
    loop = "function f(n) {\n  let i = 0;\n  while (true) {\n    i += n;\n  }\n}\n"
    results = [_arcs(pool, loop, "1", budget=50) for _ in range(3)]
    assert {r["status"] for r in results} == {TOO_MANY_STEPS}
    assert {r["events"] for r in results} == {51}  # the step past the budget, as Python's line event
    assert results[0]["output_repr"] is None and results[0]["lines"] == [2, 3, 4]
    within = _arcs(pool, PROGRAM, "3, 1", budget=5)
    assert within["status"] == "ok"
    assert _arcs(pool, PROGRAM, "3, 1", budget=4)["status"] == TOO_MANY_STEPS


def test_arcs_report_what_the_run_job_reports(pool: WorkerPool) -> None:
    thrower = "function f(xs) {\n  return xs.at(0).length;\n}\n"
    ran = next(iter(pool.map("run", [{"source": thrower, "entry": "f", "args": "[]"}])))
    traced = _arcs(pool, thrower, "[]")
    assert traced["status"] == ran["status"] == "error:TypeError"
    assert _arcs(pool, "function f(x) {\n  return x / 0;\n}\n", "1")["status"] == "non_literal"
    assert _arcs(pool, "class A {}\nfunction f() {}\n", "")["status"] == "bad_program"


def _ablate(pool: WorkerPool, source: str, inputs: list[str], **extra: Any) -> tuple[list, dict]:
    variants = JS.facet("analysis").removal_variants(source)
    payload = ablation_payload(source, "f", [text for _, text in variants], inputs, **extra)
    return variants, next(iter(pool.map("ablation", [payload])))


def test_ablation_flags_a_removable_statement_and_not_a_needed_one(pool: WorkerPool) -> None:
    source = (
        "function f(n) {\n"
        "  const unused = n * 3;\n"  # 2: removable
        "  let m = n + 1;\n"  # 3: needed
        "  if (m > 5) {\n"  # 4: needed on an input that takes it
        "    m = m * 2;\n"  # 5
        "  }\n"
        "  return m;\n"
        "}\n"
    )
    variants, result = _ablate(pool, source, ["1", "10"])
    assert result["status"] == "ok"
    ablation = ablation_of(variants, result)
    assert ablation.lines == (2, 3, 4, 5)
    assert [ablation.lines[v] for v in ablation.irrelevant()] == [2]
    assert ablation.changed[1] == (0, 1) and ablation.changed[2] == (1,)
    _, stopped = _ablate(pool, source, ["1", "10"], stop=4)
    assert stopped["changed"] == [[]] + [None] * 3  # stop: at the first variant that changes nothing
    _, past = _ablate(pool, source, ["1", "10"], stop=0)  # no variant within `stop`: all run
    assert past["changed"] == [[], [0, 1], [1], [1]]


def test_first_hit_as_in_python(pool: WorkerPool) -> None:
    """``first_hit``: each variant stops at its first change on the ``full`` inputs while every
    variant changes one of them; once one does not, the hits are those without ``first_hit``."""
    source = "function f(n) {\n  let a = n + 1;\n  if (n > 5) {\n    a = -a;\n  }\n  return a;\n}\n"
    inputs = ["1", "2", "9", "10"]  # the `if` matters only on the last two
    _, plain = _ablate(pool, source, inputs)
    _, first = _ablate(pool, source, inputs, first_hit=True)
    assert plain["changed"] == [[0, 1, 2, 3], [2, 3], [2, 3]]
    assert first["changed"] == [[0], [2], [2]] and first["events"] < plain["events"]
    _, plain = _ablate(pool, source, inputs, full=2)
    _, first = _ablate(pool, source, inputs, full=2, first_hit=True)
    assert first["changed"] == plain["changed"] == [[0, 1], [2, 3], [2, 3]]


def test_an_endless_variant_is_stopped_by_its_budget_and_the_total_bounds_the_job(pool: WorkerPool) -> None:
    source = "function f(n) {\n  let i = 0;\n  while (i < n) {\n    i += 1;\n  }\n  return i;\n}\n"
    variants, result = _ablate(pool, source, ["3"])
    ablation = ablation_of(variants, result)
    assert ablation.changed[ablation.lines.index(4)] == (0,)  # without the increment: loops, stopped
    payload = ablation_payload(source, "f", [text for _, text in variants], ["3"])
    payload["total"] = 30
    short = next(iter(pool.map("ablation", [payload])))
    assert short["status"] == INCOMPLETE and None in short["changed"]


def test_an_ablation_run_never_sees_what_an_earlier_run_left_behind(pool: WorkerPool) -> None:
    """The runs of one job share a context while they leave its global object as it was: after a
    variant that assigns an undeclared name (a global, in sloppy mode) the runs see none of it,
    and each run's printed characters are counted afresh (the outcomes fresh contexts give)."""
    source = "function f(n) {\n  return typeof leak + n;\n}\n"
    leaking = "function f(n) {\n  leak = 5;\n  return typeof leak + n;\n}\n"
    # 40,000 characters a run: under the 65,536 a run may print, over it in two runs.
    printing = "function f(n) {\n  console.log('x'.repeat(40000));\n  return typeof leak + n;\n}\n"
    payload = ablation_payload(source, "f", [leaking, source, printing, printing], ["1", "2"])
    result = next(iter(pool.map("ablation", [payload])))
    assert result["status"] == "ok"
    # Only the leaking variant changes the outputs ("number1" for "undefined1").
    assert result["changed"] == [[0, 1], [], [], []]


def test_an_arcs_job_never_sees_what_an_earlier_job_left_behind(pool: WorkerPool) -> None:
    """The arcs jobs of a worker share its context the same way (one worker: the jobs run in turn)."""
    leaking = "function f(n) {\n  leak = n;\n  return typeof leak;\n}\n"
    reading = "function f(n) {\n  return typeof leak;\n}\n"
    outputs = [_arcs(pool, source, "1")["output_repr"] for source in (leaking, reading, leaking, reading)]
    assert outputs == ['"number"', '"undefined"', '"number"', '"undefined"']

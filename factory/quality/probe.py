"""The measurement's job kind for the trusted worker pool: everything about one program that
``factory.quality.measure`` reads, in one job (``WorkerPool(kinds=KINDS)``).

Job kind ``quality``. Payload: ``source``, ``entry``, ``eval_args`` (argument texts are
expressions, as CRUXEval's harness runs them), ``inputs`` (the program's own argument texts),
``random`` (argument texts drawn at random for it) and ``items`` (pairs of argument texts drawn at
random and an output literal text: the input-family items to try). The answer (plain data):

- ``static``: ``factory.quality.static.analyse`` of the source, or None when it does not parse;
- ``tests``: per ``if`` test reached on the own inputs, ``[line, went_true, went_false]`` (the
  arcs of ``factory.quality.jobs.arcs_job``: true when the next line is the first of the body);
- ``random_ok`` and ``random_constant``: how many random runs returned, and whether they all
  returned the same value (``strict_equal``); the runs stop at the first value that differs from
  the first one, so ``random_ok`` counts the runs up to there;
- ``solved``: per item, whether its random arguments gave its output.

The program's ``static`` facts are worked out here rather than in the parent so that the workers
share that cost too.
"""

from __future__ import annotations

import random
import signal
from dataclasses import asdict
from typing import Any

from factory.literals import literal_eval, strict_equal
from factory.quality.jobs import _reset_run_state, arcs_job
from factory.quality.static import StaticFacts, analyse
from factory.sandbox.trusted.worker import OK, call_program

KIND = "quality"
#: CPU seconds a random run may take (a run takes well under a millisecond; one that overruns
#: counts as not run), and how many overruns end a job's random runs. Far above a run's time, so
#: that no verdict depends on the load or on a worker's first run (at 0.02 s, the figures moved
#: between runs of the same data).
RUN_CPU_S = 0.2
MAX_SLOW = 3
_SLOW = "error:_RunTooLong"  # what call_program reports for a run stopped by its timer
_RANDOM_STATE = random.Random(0).getstate()  # random.seed(0)'s, what the worker sets before a job
#: kind -> "module:function", for ``WorkerPool(kinds=...)``.
KINDS = {KIND: "factory.quality.probe:quality_job"}


def quality_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``quality`` (see the module docstring)."""
    source, entry = payload["source"], payload.get("entry", "f")
    try:
        facts: StaticFacts | None = analyse(source)
    except (SyntaxError, ValueError):
        facts = None
    base = {"source": source, "entry": entry, "eval_args": payload.get("eval_args", False)}
    tests = _test_outcomes(base, payload.get("inputs", []), facts)
    values = []
    solved = []
    with _Runs(base) as run:
        for args in payload.get("random", []):
            ok, value = run(args)
            if ok:
                values.append(value)
                if not strict_equal(value, values[0]):
                    break  # not constant: the remaining draws cannot change that
        for args, expected in payload.get("items", []):
            ok, value = run(args)
            solved.append(ok and strict_equal(value, _literal(expected)))
    return {
        "status": OK,
        "static": None if facts is None else plain_facts(facts),
        "tests": tests,
        "random_ok": len(values),
        "random_constant": all(
            strict_equal(v, values[0]) for v in values[1:]
        ),  # the last differs or all agree
        "solved": solved,
    }


class _RunTooLong(BaseException):
    """A random run used up its CPU time (a BaseException: ``except Exception`` cannot hide it)."""


def _too_long(signum: int, frame: Any) -> None:
    raise _RunTooLong


class _Runs:
    """Random runs of one program, each under a CPU timer of ``RUN_CPU_S`` (``ITIMER_VIRTUAL``: the
    worker's job timer is ``ITIMER_PROF``); after ``MAX_SLOW`` runs that overran, the rest are not
    run (a program that runs away on random inputs would otherwise cost the whole job). A context
    manager: the timer's handler is installed for the job's runs and taken away after them."""

    def __init__(self, base: dict[str, Any]) -> None:
        self.base = base
        self.slow = 0
        self.previous: Any = None

    def __enter__(self) -> _Runs:
        self.previous = signal.signal(signal.SIGVTALRM, _too_long)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, self.previous)

    def __call__(self, args: str) -> tuple[bool, Any]:
        """(returned, the value) of one call. Whether the value is a literal is not asked (it
        would cost a third of the run): a value that is none compares unequal to the others."""
        if self.slow >= MAX_SLOW:
            return False, None
        # random's state is reset before each run, as the worker does before a job (printed output
        # adds up over the job's runs, to the worker's bound: the generated programs print nothing)
        random.setstate(_RANDOM_STATE)
        failed: dict[str, Any] | None = None
        value = None
        try:
            signal.setitimer(signal.ITIMER_VIRTUAL, RUN_CPU_S)
            failed, value = call_program({**self.base, "args": args})
        except _RunTooLong:  # fired after the call returned
            failed = {"status": _SLOW}
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        if failed is not None and failed["status"] == _SLOW:
            self.slow += 1
        return failed is None, value


def _literal(text: str) -> Any:
    """The value of an output literal; a fresh object (equal to nothing) when it is none."""
    try:
        return literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return object()


def _test_outcomes(base: dict[str, Any], inputs: list[str], facts: StaticFacts | None) -> list[list[int]]:
    if facts is None or not facts.if_tests:
        return []
    body = {t.line: t.body_line for t in facts.if_tests}
    seen: dict[int, list[int]] = {}
    for args in inputs:
        _reset_run_state()
        for line, after in arcs_job({**base, "args": args}).get("arcs") or ():
            if line in body:
                outcome = seen.setdefault(line, [line, 0, 0])
                outcome[1 if after == body[line] else 2] = 1
    return [seen[line] for line in sorted(seen)]


def plain_facts(facts: StaticFacts) -> dict[str, Any]:
    """``facts`` as marshal-able data (tuples, lists, dicts of plain values)."""
    data = asdict(facts)
    data["identifiers"] = sorted(facts.identifiers)
    data["trivial"] = [[t.kind, t.line, t.text] for t in facts.trivial]
    data["if_tests"] = [[t.line, t.body_line] for t in facts.if_tests]
    data["statements"] = [list(s) for s in facts.statements]
    data["dead_stores"] = list(facts.dead_stores)
    data["unread_loops"] = list(facts.unread_loops)
    return data

"""The quality checks' job kinds for the trusted worker pool (``WorkerPool(kinds=KINDS)``).

``arcs``: ``lines_job`` plus the ``arcs``, the (line, next line) pairs executed in each of the
program's frames (next line 0: the frame returned after the line; line 0: the frame's first
line), only those from the payload's ``tests`` lines when it has them, and ``events``, the number
of line events. An ``if`` test at line L went both ways when two different lines followed L. With
a ``budget`` (line events), a run past it stops with the status ``too_many_steps``: at the same
line event under any load, where the pool's CPU timer alone would stop a long run at a point that
depends on the load (and so would the verdict on a run that ends near it).

``ablation``: one program's statement-removal variants (sources made in the parent: this module
imports no parser) run on its inputs, each run bounded by a line-event budget; the answer says on
which inputs each variant's outcome differs from the original's. The worker stays small: it
imports only the worker's building blocks.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from factory.program_code import PROGRAM_FILENAME
from factory.sandbox.trusted import worker
from factory.sandbox.trusted.worker import OK, call_program, describe_output, drop

#: kind -> "module:function", for ``WorkerPool(kinds=...)``.
KINDS = {
    "arcs": "factory.quality.jobs:arcs_job",
    "ablation": "factory.quality.jobs:ablation_job",
}

#: What a run stopped by its line-event budget reports (an outcome no original run has).
BUDGET = "budget"
#: What an ``arcs`` run stopped by its line-event budget reports (the trace stage's name for it).
TOO_MANY_STEPS = "too_many_steps"
#: What an ablation job that ran out of its total budget reports (``changed`` is then partial).
INCOMPLETE = "incomplete"


def arcs_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``arcs``: the result of ``lines_job`` plus ``arcs`` (sorted pairs) and ``events``."""
    arcs: set[tuple[int, int]] = set()
    lines: set[int] = set()
    add, add_line = arcs.add, lines.add
    tests = payload.get("tests")
    kept = None if tests is None else frozenset(tests)
    budget = payload.get("budget")
    events = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != PROGRAM_FILENAME:
            return None
        last = 0

        def local(frame: Any, event: str, arg: Any) -> Any:
            nonlocal last, events
            if event == "line":
                line = frame.f_lineno
                if kept is None or last in kept:
                    add((last, line))
                add_line(line)
                last = line
                events += 1
                if budget is not None and events > budget:
                    raise BudgetExceeded
            elif event == "return" and (kept is None or last in kept):
                add((last, 0))
            return local

        return local

    failed, value = call_program(payload, tracer)
    if budget is not None and events > budget:
        result = drop(TOO_MANY_STEPS)
    else:
        result = failed if failed is not None else describe_output(value)
    result["lines"] = sorted(lines)
    result["arcs"] = sorted(arcs)
    result["events"] = events
    return result


class BudgetExceeded(BaseException):
    """A run passed its line-event budget (a BaseException: ``except Exception`` cannot hide it)."""


def ablation_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Job kind ``ablation``. Payload: ``source``, ``entry``, ``variants`` (sources), ``inputs``
    (argument texts), ``full`` (every variant runs on the first ``full`` inputs; on the others
    only when its outcome changed on none of those, and then on all of them), ``stop`` (stop at
    the first variant among the first ``stop`` that changes no outcome; 0: never), ``first_hit``
    (see below), and the budgets ``factor``, ``slack`` (a variant run may take ``factor`` × the
    original run's line events + ``slack``) and ``total`` (line events for the whole job).

    Answer: ``status`` (``ok``; ``incomplete`` when ``total`` ran out), ``changed`` (per variant,
    the indices of the inputs whose outcome it changed, or None when it was not run), and
    ``events`` used. An outcome is the status and output repr; a run past its budget changed it.

    ``first_hit``: a variant's runs on the first ``full`` inputs stop at the first changed
    outcome, as long as every variant changes one of them (a caller that then keeps those inputs
    needs no more); once one does not, the others' are completed, so that ``changed`` is what it
    would have been (a variant the total left uncompleted: None). On the default programs the
    inputs stage's ablation jobs took 6.2-8.4 s instead of 9.9-12.0 s, with the same outcome.
    """
    source, entry = payload["source"], payload.get("entry", "f")
    inputs: list[str] = payload["inputs"]
    full = min(payload.get("full", len(inputs)), len(inputs))
    factor, slack = payload.get("factor", 2), payload.get("slack", 1000)
    run = _Runner(entry, payload["total"])
    originals: list[tuple[tuple[str, Any], int] | None] = [None] * len(inputs)

    def original(i: int) -> tuple[str, Any]:
        known = originals[i]
        if known is None:
            known = originals[i] = run(source, inputs[i], None)
        return known[0]

    def changed(variant: str, i: int) -> bool:
        expected = original(i)
        budget = factor * originals[i][1] + slack  # type: ignore[index]  # set by original()
        outcome, _ = run(variant, inputs[i], budget)
        return outcome != expected

    variants: list[str] = payload["variants"]
    first_hit = payload.get("first_hit", False)
    results: list[list[int] | None] = [None] * len(variants)
    partial: list[int] = []  # the variants whose runs stopped at their first hit
    status = OK
    try:
        for v, variant in enumerate(variants):
            if first_hit:
                hits = next(([i] for i in range(full) if changed(variant, i)), [])
                partial += [v] if hits else []
            else:
                hits = [i for i in range(full) if changed(variant, i)]
            if not hits:
                first_hit = False  # the caller will look past these inputs: it needs every hit
                hits = [i for i in range(full, len(inputs)) if changed(variant, i)]
            results[v] = hits
            if not hits and v < payload.get("stop", 0):
                break
        else:
            if not first_hit:
                for v in partial:
                    first = results[v]
                    assert first is not None and len(first) == 1
                    results[v] = None  # not run, should the total run out in the runs below
                    results[v] = [
                        first[0],
                        *(i for i in range(first[0] + 1, full) if changed(variants[v], i)),
                    ]
    except _TotalExceeded:
        status = INCOMPLETE
    return {"status": status, "changed": results, "events": run.used}


class _TotalExceeded(Exception):
    """The job's total line-event budget ran out (raised outside the program's code)."""


class _Runner:
    """Runs one call of a source under a line-event budget, counting the job's total."""

    def __init__(self, entry: str, total: int) -> None:
        self.entry = entry
        self.total = total
        self.used = 0

    def __call__(self, source: str, args: str, budget: int | None) -> tuple[tuple[str, Any], int]:
        """(outcome, line events) of one run; ``budget`` None: only the job's total bounds it."""
        left = self.total - self.used
        if left <= 0:
            raise _TotalExceeded
        limit = left if budget is None else min(budget, left)
        counter = _Counter(limit)
        _reset_run_state()
        failed, value = call_program({"source": source, "entry": self.entry, "args": args}, counter.tracer)
        self.used += counter.events
        if counter.exceeded:
            if budget is None or left < budget:  # the job's total, not the run's budget, ran out
                raise _TotalExceeded
            return (BUDGET, None), counter.events
        result = failed if failed is not None else describe_output(value)
        return (result["status"], result["output_repr"]), counter.events


class _Counter:
    """A trace function counting line events in the program's frames, raising past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.events = 0
        self.exceeded = False
        self.tracer = self._make()

    def _make(self) -> Callable[..., Any]:
        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                self.events += 1
                if self.events > self.limit:
                    self.exceeded = True
                    raise BudgetExceeded
            return local

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            return local if frame.f_code.co_filename == PROGRAM_FILENAME else None

        return tracer


def _reset_run_state() -> None:
    """What the worker resets before each job, reset before each run of a job (the printed-output
    bound, ``random``'s seed, the recursion limit): one run never sees another's state."""
    worker._sink.reset()
    random.seed(0)
    sys.setrecursionlimit(worker.DEFAULT_RECURSION_LIMIT)

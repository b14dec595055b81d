"""The Executor's pairs: a program's cases run two per job where a fresh context costs most of a
case (docs/languages.md §6.2).

For a language whose runner facet has ``BATCH_KINDS`` (JavaScript), consecutive cases of one
program go in pairs. The first hash seed's pool runs a pair (a, b) in one fresh context in that
order, the other pools run (b, a): every case runs once first in a fresh context, as it would
alone, and once after its partner. A pair is kept when the runs of each case are equal (status,
output, detail); otherwise, or when the job of the pair died (timeout, memory, crash), both cases
run again alone, a job each, and get that path's verdict. Pairs, not longer batches: with three
cases or more, some case would run first in no pool, and state left by the others could then go
unseen by both of its runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from factory.sandbox.trusted.pool import WorkerPool, map_pools

#: Cases per job (see the module docstring for why two).
GROUP = 2

Verdict = Callable[[list[dict[str, Any]]], dict[str, Any]]


class _Group:
    """Consecutive cases of one program, sent as one job; ``results`` fills in as verdicts come."""

    __slots__ = ("payloads", "results", "left")

    def __init__(self, payloads: list[dict[str, Any]]) -> None:
        self.payloads = payloads
        self.results: list[dict[str, Any] | None] = [None] * len(payloads)
        self.left = len(payloads)

    def settle(self, i: int, result: dict[str, Any]) -> None:
        self.results[i] = result
        self.left -= 1


def run_pairs(
    pools: Sequence[WorkerPool],
    kinds: Sequence[str],
    payloads: Iterable[dict[str, Any]],
    verdict: Verdict,
    affinity: Callable[[dict[str, Any]], str],
) -> Iterator[dict[str, Any]]:
    """One result per payload, in order: pairs of a program's cases on ``kinds`` (``BATCH_KINDS``:
    in order, then reversed), the cases of a pair whose runs differ or died again alone, judged by
    ``verdict`` (the Executor's ``combine``); ``affinity``: see ``map_pools``."""
    lanes = [kinds[0]] + [kinds[1]] * (len(pools) - 1)
    state = _Pairs(iter(payloads))
    for results in map_pools(pools, lanes, state.jobs(), affinity=affinity):
        group, case = state.sent.popleft()
        if case is None:
            state.judge_pair(group, results)
        else:
            group.settle(case, verdict([_case_result(r, 0) for r in results]))
        yield from state.done()


class _Pairs:
    """The groups of a ``run_pairs`` call: those being read, sent, and run again alone."""

    def __init__(self, payloads: Iterator[dict[str, Any]]) -> None:
        self.payloads = payloads
        self.ahead: dict[str, Any] | None = None  # the payload read past the last group
        self.order: deque[_Group] = deque()  # groups not yet given back, in input order
        self.sent: deque[tuple[_Group, int | None]] = deque()  # jobs in map order: (group, case or None)
        self.alone: deque[tuple[_Group, int]] = deque()  # cases to run again alone

    def jobs(self) -> Iterator[dict[str, Any] | None]:
        """The jobs for ``map_pools``: cases to run alone first, then the next group; None while
        only answers in flight may add jobs."""
        while True:
            if self.alone:
                group, case = self.alone.popleft()
                self.sent.append((group, case))
                yield _job(group.payloads[case : case + 1])
            elif (new := self._next_group()) is not None:
                self.order.append(new)
                self.sent.append((new, None if len(new.payloads) > 1 else 0))
                yield _job(new.payloads)
            elif self.sent:
                yield None
            else:
                return

    def _next_group(self) -> _Group | None:
        first = self.ahead if self.ahead is not None else next(self.payloads, None)
        self.ahead = None
        if first is None:
            return None
        group = [first]
        while len(group) < GROUP:
            payload = next(self.payloads, None)
            if payload is None:
                break
            if (payload["source"], payload["entry"]) != (first["source"], first["entry"]):
                self.ahead = payload
                break
            group.append(payload)
        return _Group(group)

    def judge_pair(self, group: _Group, results: list[dict[str, Any]]) -> None:
        """Keep the pair's results when every case ran the same in every pool; else run its cases
        again alone."""
        n = len(group.payloads)
        if all(len(r.get("results") or ()) == n for r in results):
            runs = [r["results"] for r in results]
            if all(run == runs[0] for run in runs[1:]):
                for i, result in enumerate(runs[0]):
                    group.settle(i, result)
                return
        self.alone.extend((group, i) for i in range(n))

    def done(self) -> Iterator[dict[str, Any]]:
        """The results of the leading groups whose every case has its verdict."""
        while self.order and self.order[0].left == 0:
            for result in self.order.popleft().results:
                assert result is not None  # settled
                yield result


def _job(payloads: list[dict[str, Any]]) -> dict[str, Any]:
    first = payloads[0]
    return {"source": first["source"], "entry": first["entry"], "args_list": [p["args"] for p in payloads]}


def _case_result(result: dict[str, Any], i: int) -> dict[str, Any]:
    """Case ``i`` of a batch job's answer; the answer itself when the job died (the pool's verdict
    for it: a job of one case is the single case's run)."""
    results = result.get("results")
    return result if results is None else results[i]

"""The inputs stage's semantic checks on a program's candidate runs, and the choice of the kept
inputs that passes them.

A run (an ``arcs`` job's result) says which (line, next line) pairs it executed; an ``if`` test
at line L has an outcome per different line that followed L. The checks, each a drop reason:

- ``constant_output``: every candidate that ran gave the same output (at least two ran);
- ``one_sided_branch``: no choice of the kept inputs lets every ``if`` test they reach go both
  ways;
- ``irrelevant_statement``: a statement whose removal changes the outcome on no candidate, or on
  none that a valid choice of the kept inputs can include (``factory.quality.ablation``);
- ``idle_repetition``: the same for a loop with a literal count above 1 run once (``for _ in
  range(3):`` → ``range(1)``): a loop whose body does the same work again on each repetition
  (``seen.add(word)``, ``n = min(n, limit)``), whose count decides nothing;
- ``irrelevant_test``: the same for an ``if`` test negated (every outcome of it flipped): a test
  that decides nothing, as when its branches do the same work (``data += xs`` / ``data = data + xs``).

One check only steers the choice and never drops a program (``PREFERENCES``):

- ``inert_operation``: an assignment's value replaced by a variable it reads (``trimmed =
  word.strip()`` → ``trimmed = word``) should change an outcome on the kept inputs: the kept
  inputs are swapped for a choice on which every such operation that acts on some candidate
  acts (whitespace to strip). An operation that acts on no candidate stays (CRUXEval has such
  steps too: a ``replace`` of a letter the text lacks).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import Any

from factory.quality.ablation import Ablation

CONSTANT_OUTPUT = "constant_output"
ONE_SIDED_BRANCH = "one_sided_branch"
IRRELEVANT_STATEMENT = "irrelevant_statement"
IDLE_REPETITION = "idle_repetition"
INERT_OPERATION = "inert_operation"
IRRELEVANT_TEST = "irrelevant_test"
#: The checks that only steer the choice of the kept inputs (never a drop reason).
PREFERENCES = frozenset({INERT_OPERATION})
#: The most choices of the kept inputs a search looks at (combinations, in preference order).
MAX_CHOICES = 4096
#: An output text longer than this is long: CRUXEval's longest output is 50 characters.
LONG_OUTPUT_CHARS = 50

Run = dict[str, Any]


def constant_output(runs: Sequence[Run]) -> bool:
    """Whether at least two runs (of different inputs, all ``ok``) gave one output."""
    return len(runs) >= 2 and len({run["output_repr"] for run in runs}) == 1


def outcomes(run: Run, tests: Collection[int]) -> set[tuple[int, int]]:
    """The (test line, next line) pairs of ``run`` whose line is one of ``tests``."""
    return {(a, b) for a, b in run.get("arcs") or () if a in tests}


def one_sided(runs: Sequence[Run], tests: Collection[int]) -> list[int]:
    """The test lines reached by ``runs`` that only one line ever followed."""
    seen: dict[int, set[int]] = {}
    for run in runs:
        for line, after in outcomes(run, tests):
            seen.setdefault(line, set()).add(after)
    return sorted(line for line, after in seen.items() if len(after) == 1)


def rank(runs: Sequence[Run], tests: Collection[int]) -> list[int]:
    """Indices of ``runs`` in greedy order: each next one adds the most new branch outcomes, then
    the most new lines, then a new output, then an output fewer other runs gave (an input item
    on it is less often solved by a random argument list), then an output that is not long (an
    output question asks for all of it: this halved the cases with an output over 50 characters;
    preferring the shortest would favour empty and one-letter values too), then the later (less
    minimal) draw."""
    left = list(range(len(runs)))
    given = Counter(run["output_repr"] for run in runs)
    ranked: list[int] = []
    covered: set[tuple[int, int]] = set()
    lines: set[int] = set()
    outputs: set[str] = set()
    branch = [outcomes(run, tests) for run in runs]
    own_lines = [set(run.get("lines") or ()) for run in runs]

    def gain(i: int) -> tuple[int, int, bool, int, int, int]:
        output = runs[i]["output_repr"]
        return (
            len(branch[i] - covered),
            len(own_lines[i] - lines),
            output not in outputs,
            -given[output],
            len(output) <= LONG_OUTPUT_CHARS,
            i,
        )

    while left:
        best = max(left, key=gain)
        left.remove(best)
        ranked.append(best)
        covered |= branch[best]
        lines |= own_lines[best]
        outputs.add(runs[best]["output_repr"])
    return ranked


def search(order: Sequence[int], k: int, valid: Callable[[tuple[int, ...]], bool]) -> tuple[int, ...] | None:
    """The first ``k`` of ``order`` (fewer when there are fewer) that ``valid`` accepts, in
    combination order (the earlier ones of ``order`` kept longest); None when none is, among the
    first ``MAX_CHOICES``."""
    k = min(k, len(order))
    for choice in itertools.islice(itertools.combinations(order, k), MAX_CHOICES):
        if valid(choice):
            return choice
    return None


def two_sided_choice(
    runs: Sequence[Run], tests: Collection[int], order: Sequence[int], k: int
) -> tuple[int, ...] | None:
    """``k`` runs (indices, in ``order``'s preference) on which every test they reach goes both
    ways; None when there is none (the program is one-sided)."""
    if one_sided(runs, tests):
        return None  # even all the runs together leave a test one-sided
    return search(order, k, lambda choice: not one_sided([runs[i] for i in choice], tests))


def relevant_choice(
    runs: Sequence[Run],
    tests: Collection[int],
    chosen: tuple[int, ...],
    others: Sequence[int],
    ablation: Ablation,
    reasons: Sequence[str] = (),
) -> tuple[int, ...] | None:
    """The kept inputs after the ablation of ``chosen`` (first) and ``others`` (the job's inputs
    in that order): ``chosen`` when every statement matters on one of them, else another choice
    of as many that still has every test two-sided and on which every statement provably
    matters (a statement that mattered on ``chosen`` was only run there); None when there is none.

    ``reasons[v]`` is the check variant ``v`` serves (none given: ``irrelevant_statement``). The
    variants of a ``PREFERENCES`` check never drop the program: a choice on which each of them
    changes an outcome is taken when there is one (an operation that acts on some candidate is
    shown acting), else the choice the others allow."""
    inputs = [*chosen, *others]
    hits = [None if h is None else {inputs[i] for i in h} for h in ablation.changed]
    preferred = [v < len(reasons) and reasons[v] in PREFERENCES for v in range(len(hits))]
    needed = [h for h, p in zip(hits, preferred, strict=True) if h is not None and not p]
    wanted = [h for h, p in zip(hits, preferred, strict=True) if h and p]  # acts on some candidate
    if any(not h for h in needed):
        return None  # a statement that matters on no candidate at all

    def valid(required: list[set[int]]) -> Callable[[tuple[int, ...]], bool]:
        def check(choice: tuple[int, ...]) -> bool:
            picked = set(choice)
            return all(h & picked for h in required) and not one_sided([runs[i] for i in choice], tests)

        return check

    if all(h & set(chosen) for h in needed + wanted):
        return chosen
    if wanted and (choice := search(inputs, len(chosen), valid(needed + wanted))) is not None:
        return choice
    if all(h & set(chosen) for h in needed):
        return chosen
    return search(inputs, len(chosen), valid(needed))


def irrelevant_reason(ablation: Ablation, reasons: Sequence[str]) -> str:
    """The drop reason of a program ``relevant_choice`` found no choice for: ``reasons[v]`` of the
    first variant ``v`` (not of a ``PREFERENCES`` check) that changed no outcome, else
    ``irrelevant_statement`` (each changed something, but no choice of the kept inputs covers
    them all)."""
    empty = (
        v
        for v, hits in enumerate(ablation.changed)
        if hits is not None and not hits and not (v < len(reasons) and reasons[v] in PREFERENCES)
    )
    first = next(empty, None)
    return IRRELEVANT_STATEMENT if first is None or first >= len(reasons) else reasons[first]

"""Choosing an item's questions among every question a trace supports (docs/design.md §5).

``sample_questions`` picks the next_line and state questions of a white-box item,
``sample_coverage`` the questions of a coverage item. The rules:

- Informative questions first: each question's weight grows with its ``informative`` tags
  (branch points, loop headers, 2nd+ iterations, calls into helpers and returns from them,
  mutations, lines that never run); a weighted draw without replacement (Efraimidis-Spirakis
  keys) then prefers distinct lines, so one loop header does not take every slot.
- ``-1`` next_line and ``Nil`` state answers are capped at a share of the asked count (at least
  one when the share is positive and one exists), so an item neither lacks nor floods with them;
  when too few other questions exist, the item asks fewer questions rather than exceed the cap.
- Questions that need execution: no trivial question (``questions.py`` says which: the next
  physical line after a simple statement, a constant assignment's state, ``-1`` after the entry's
  last statement, ``-1``/``Nil`` for a 2nd execution of a line nothing can run again), and no
  state question on a variable that is never read again (``live`` false). One exception: a
  straight-line program (no branch, loop or call: every next line is the next physical one) gets
  at most ``STRAIGHT_LINE_TRIVIAL`` next-physical-line question per item, drawn only when nothing
  else fills the slots. ``questions.py`` also marks a branch point or loop header ``trivial``
  when the path taken is the next physical line; here those count as informative (the condition
  still has to be evaluated, and leaving them out would tell that a branch's answer is the other
  side).
- Only questions whose gold is a literal: state values are checked with ``ast.literal_eval``.

Everything is deterministic given the ``random.Random`` passed in (the stage seeds it with
``f"{seed}:{case_id}"``).
"""

from __future__ import annotations

import functools
import heapq
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from factory.literals import literal_eval

Question = dict[str, Any]

#: How much each informative tag adds to a question's weight (the base weight is 1).
TAG_WEIGHTS: dict[str, float] = {
    "branch": 3.0,
    "loop_header": 2.0,
    "second_iteration": 2.0,
    "call": 3.0,
    "return": 2.0,
    "exception": 3.0,
    "mutation": 2.0,
    "never_runs": 2.0,
    "last_step": 1.0,
    "conditional": 2.0,
}
#: Tags that make a next-line question worth asking even when the next line is the physical one.
DECISION_TAGS = frozenset({"branch", "loop_header"})
_WHITE_BOX = frozenset({"next_line", "state"})  # the families sample_questions draws from
DEFAULT_MINUS_ONE_SHARE = 0.2
DEFAULT_NIL_SHARE = 0.2
#: Next-physical-line questions per item of a straight-line program. Every next line of such a
#: program is the physical one, so each of them is answered by the same rule: one keeps next_line
#: questions (and the line-numbering format) in the simple tiers, and keeps a model from learning
#: that the answer is never the next line, without letting that rule make up the item.
STRAIGHT_LINE_TRIVIAL = 1


def weight(question: Question) -> float:
    """The sampling weight of a question: 1 plus the weights of its informative tags."""
    tags = question.get("informative") or ()
    key = tuple(tags)
    value = _WEIGHTS.get(key)
    if value is None:
        value = _WEIGHTS[key] = 1.0 + sum(TAG_WEIGHTS.get(tag, 0.0) for tag in tags)
    return value


_WEIGHTS: dict[tuple[str, ...], float] = {}  # by tags: a handful of distinct tag lists exist


def is_trivial(question: Question) -> bool:
    """Whether a question needs no reasoning (``trivial``, unless a branch or loop decides which
    line comes next)."""
    if not question.get("trivial"):
        return False
    if question["family"] == "next_line" and question["answer"] != -1:
        return DECISION_TAGS.isdisjoint(question.get("informative") or ())
    return True


def is_straight_line(questions: Iterable[Question]) -> bool:
    """True when the program has no control flow the trace shows: every next line it took is the
    next physical one (no branch, loop, call or return into a caller) and no line was skipped."""
    for q in questions:
        if q["family"] != "next_line":
            continue
        if q["answer"] != -1:
            if not is_trivial(q):
                return False
        elif q.get("occurrence") == 1 and "never_runs" in (q.get("informative") or ()):
            return False  # a line that never runs: something branched around it
    return True


def special_quota(share: float, n: int, available: int, rng: random.Random | None = None) -> int:
    """How many -1 / Nil answers to ask among ``n``.

    The cap is ``floor(share·n)`` (at least one) and what is available. With ``rng`` the count is
    a binomial draw under that cap (each of the ``n`` questions special with probability
    ``share``), so it varies between items and a model cannot learn "exactly one -1 per item" as a
    prior. Without ``rng``: the cap itself.
    """
    if share <= 0 or n <= 0 or available <= 0:
        return 0
    cap = min(available, max(1, math.floor(share * n + 1e-9)))
    if rng is not None:
        return min(cap, sum(rng.random() < share for _ in range(n)))
    return cap


def literal_state(question: Question) -> bool:
    """A state question's gold is ``Nil`` or ``<literal>; <type>``."""
    answer = question["answer"]
    if answer == "Nil":
        return True
    if not isinstance(answer, str) or ";" not in answer:
        return False
    return _literal_text(answer.rsplit(";", 1)[0].strip())


@functools.lru_cache(maxsize=4096)
def _literal_text(value: str) -> bool:
    """Whether ``value`` is a Python literal (a trace repeats its values: cached)."""
    try:
        literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _key(question: Question) -> tuple[Any, ...]:
    return (question["family"], question.get("line"), question.get("occurrence"), question.get("var"))


def _draw(
    candidates: Sequence[Question],
    k: int,
    rng: random.Random,
    accept: Callable[[Question], bool] | None = None,
    taken: set[Any] | None = None,
    scale: Mapping[int, float] | None = None,
) -> list[Question]:
    """Up to ``k`` questions drawn by weight without replacement, distinct lines preferred.

    Every candidate consumes one ``rng.random()`` in candidate order (so the draw depends only on
    the candidates and the rng state); ``accept`` is checked lazily on the questions reached.
    ``taken`` holds the lines already asked about (updated in place). ``scale``: factors of some
    candidates' weights, by ``id`` of the question.
    """
    if k <= 0 or not candidates:
        return []
    keyed = []
    random_, log = rng.random, math.log
    for index, q in enumerate(candidates):
        u = 1.0 - random_()  # in (0, 1]
        w = weight(q) if scale is None else weight(q) * scale.get(id(q), 1.0)
        keyed.append((log(u) / w, -index))
    # The best few usually suffice; the full order only when they do not give k distinct lines
    # (both give the same result: the first pass walks the same order).
    head = heapq.nlargest(min(len(keyed), 4 * k + 8), keyed)
    chosen = _greedy(candidates, head, k, accept, taken, complete=len(head) == len(keyed))
    if chosen is None:
        chosen = _greedy(candidates, sorted(keyed, reverse=True), k, accept, taken, complete=True)
    assert chosen is not None
    return chosen


def _greedy(
    candidates: Sequence[Question],
    order: list[tuple[float, int]],
    k: int,
    accept: Callable[[Question], bool] | None,
    taken: set[Any] | None,
    *,
    complete: bool,
) -> list[Question] | None:
    """Walk ``order``: distinct lines first, then the skipped ones; None when ``order`` is a
    prefix too short to decide."""
    chosen: list[Question] = []
    lines: set[Any] = set(taken) if taken is not None else set()
    later: list[Question] = []
    for _, neg_index in order:
        if len(chosen) == k:
            break
        q = candidates[-neg_index]
        if accept is not None and not accept(q):
            continue
        if q.get("line") in lines:
            later.append(q)  # a second question at a line waits for the first pass to end
            continue
        lines.add(q.get("line"))
        chosen.append(q)
    if len(chosen) < k and not complete:
        return None
    chosen += later[: k - len(chosen)]
    if taken is not None:
        taken.update(q.get("line") for q in chosen)
    return chosen


def _dedupe(questions: Iterable[Question]) -> list[Question]:
    seen: set[tuple[Any, ...]] = set()
    add = seen.add
    out = []
    for q in questions:
        key = (q["family"], q.get("line"), q.get("occurrence"), q.get("var"))  # _key, inlined
        if key not in seen:
            add(key)
            out.append(q)
    return out


def _sample_family(
    pool: list[Question],
    rng: random.Random,
    n: int,
    share: float,
    special: Any,
    accept: Callable[[Question], bool] | None,
    fill: Sequence[Question] = (),
    fill_cap: int = 0,
    scale: Mapping[int, float] | None = None,
) -> list[Question]:
    """Specials under their quota, then regular questions (weights times ``scale``); ``fill``
    (at most ``fill_cap``) only for the slots left."""
    specials = [q for q in pool if q["answer"] == special]
    regular = [q for q in pool if q["answer"] != special]
    taken: set[Any] = set()
    picked = _draw(specials, special_quota(share, n, len(specials), rng), rng, accept, taken)
    picked += _draw(regular, n - len(picked), rng, accept, taken, scale)
    picked += _draw(fill, min(fill_cap, n - len(picked)), rng, accept, taken)
    return sorted(picked, key=lambda q: (q["line"], q["occurrence"], q.get("var") or ""))


def sample_questions(
    all_questions: Sequence[Question],
    rng: random.Random,
    *,
    next_line: int = 5,
    state: int = 5,
    minus_one_share: float = DEFAULT_MINUS_ONE_SHARE,
    nil_share: float = DEFAULT_NIL_SHARE,
    accept: Callable[[Question], bool] | None = None,
    from_trace: bool = False,
) -> tuple[list[Question], list[Question]]:
    """(next_line questions, state questions) for one white-box item, each sorted by line.

    At most ``next_line`` and ``state`` questions; ``-1`` answers make at most
    ``max(1, floor(minus_one_share·next_line))`` of the next_line ones (``nil_share`` likewise for
    ``Nil``); no trivial question and no state question with ``live`` false, except up to
    ``STRAIGHT_LINE_TRIVIAL`` next-physical-line questions of a straight-line program (a question
    without ``trivial`` or ``live`` counts as not trivial and live). ``accept`` is an extra filter
    (the item builder uses it to refuse golds that would break the answer block).
    ``from_trace=True`` says the questions are as ``questions_from_trace`` gives them: no two
    ask the same thing, and every state gold is ``Nil`` or a value the tracer found literal, so
    neither is checked again (otherwise repeats are dropped and golds parsed).
    """
    for name, value in (("next_line", next_line), ("state", state)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    for name, share in (("minus_one_share", minus_one_share), ("nil_share", nil_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {share!r}")
    # Deduplicating after the family filter gives the same list (the key holds the family).
    asked = [q for q in all_questions if q["family"] in _WHITE_BOX]
    straight = is_straight_line(asked)  # only next_line questions count
    if not from_trace:
        asked = _dedupe(asked)
    pools: dict[str, list[Question]] = {"next_line": [], "state": []}
    physical: list[Question] = []  # a straight-line program's next-physical-line questions
    for q in asked:
        family = q["family"]
        if q.get("trivial") and is_trivial(q):
            if straight and family == "next_line" and q["answer"] != -1:
                physical.append(q)
            continue
        if family == "state" and ("var" not in q or q.get("live") is False):
            continue
        pools[family].append(q)

    def accept_state(q: Question) -> bool:
        return (from_trace or literal_state(q)) and (accept is None or accept(q))

    pool = pools["next_line"]
    scale = _balance_outcomes(pool)
    next_line_qs = _sample_family(
        pool, rng, next_line, minus_one_share, -1, accept, physical, STRAIGHT_LINE_TRIVIAL, scale
    )
    state_qs = _sample_family(pools["state"], rng, state, nil_share, "Nil", accept_state)
    return next_line_qs, state_qs


def _balance_outcomes(pool: Sequence[Question]) -> dict[int, float]:
    """Weight factors (by ``id``) that give, at each branch point or loop header, both outcomes
    the same total weight: falling through to the next physical line (``trivial``) and jumping
    elsewhere. A loop header's questions are mostly "into the body" (every iteration but the last),
    an ``if`` often goes one way: left alone, "the next physical line" would be a prior right most
    of the time at a branch. A line keeps its total weight; a line with one outcome is unchanged.
    """
    groups: dict[int, list[list[Question]]] = {}  # line -> [fall-through questions, the others]
    for q in pool:
        if q["answer"] != -1 and not DECISION_TAGS.isdisjoint(q.get("informative") or ()):
            groups.setdefault(q["line"], [[], []])[0 if q.get("trivial") else 1].append(q)
    scale: dict[int, float] = {}
    for through, other in groups.values():
        if through and other:
            n = len(through) + len(other)
            for group in (through, other):
                for q in group:
                    scale[id(q)] = n / (2 * len(group))
    return scale


def sample_coverage(
    all_questions: Sequence[Question],
    rng: random.Random,
    k: int = 3,
    *,
    accept: Callable[[Question], bool] | None = None,
    from_trace: bool = False,
) -> list[Question]:
    """Up to ``k`` coverage questions, sorted by line: non-trivial lines only (a line that runs
    in every call tells nothing), at least one NO and one YES when both exist and ``k >= 2``.
    ``from_trace=True``: the questions are distinct (see ``sample_questions``)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be an int >= 0, got {k!r}")
    coverage = [q for q in all_questions if q["family"] == "coverage"]
    if not from_trace:
        coverage = _dedupe(coverage)
    pool = [q for q in coverage if not q.get("trivial")]
    if accept is not None:
        pool = [q for q in pool if accept(q)]
    no = [q for q in pool if q["answer"] == "NO"]
    yes = [q for q in pool if q["answer"] == "YES"]
    picked: list[Question] = []
    if k >= 2 and no and yes:
        picked = _draw(no, 1, rng) + _draw(yes, 1, rng)
    rest = [q for q in pool if all(q is not p for p in picked)]
    picked += _draw(rest, k - len(picked), rng)
    return sorted(picked, key=lambda q: q["line"])

"""Reward functions for TRL's ``GRPOTrainer`` over the one scorer (docs/design.md §5, §9).

TRL calls each reward function as ``fn(prompts=..., completions=..., completion_ids=...,
**columns)``: ``columns`` are the dataset's other columns, one value per completion (a prompt's
row repeated for each of its generations), plus ``trainer_state``, ``log_extra`` and
``log_metric`` (TRL 1.13). A function returns one float per completion, or ``None`` for an item
it does not judge; TRL turns ``None`` into NaN, sums the functions' rewards with ``nansum`` and
logs ``rewards/<__name__>/mean`` with ``nanmean``, so each function's log covers only its items.

The item columns read here are those of a released row: ``family``, ``source``, ``entry``,
``args``, ``questions`` (a list or its JSON text) and, for code generation, ``tests``. Missing
columns and ``None`` values are left out of the item; a malformed item raises ``UserError``
(a data bug, not a bad completion). Completions are plain strings or conversations (a list of
messages: the last assistant message is judged).

Every family a release holds is judged by exactly one of the functions below, so the reward
logs are per family:

- ``white_box_reward`` (``make_white_box_reward(alpha, gated)``): white_box and output items,
  ``2·((1−α)·R_io + α·R_wb)`` for white_box, 0 or 1 for output;
- ``input_reward``: input items, the original program run on the proposed arguments;
- ``codegen_reward``: code-generation items, the fraction of unit tests passed;
- ``coverage_reward`` and ``trace_reward``: single coverage, and next_line/state items;
- ``format_reward``: 1.0 for ``<reasoning>…</reasoning>`` then ``<answer>…</answer>`` with one
  line per question (any code for codegen), for every item.

A batch is scored with ``score_batch``: items that run code (input, codegen) run in parallel,
``workers`` sandbox jobs at a time. The default, ``default_workers()``, oversubscribes the cores
(6 per core, 8 to 64): a job spends much of its wall time waiting (for its fork, for the pipe
round trip of each call), so more jobs in flight than cores hides that latency. Jobs are forked
by the sandbox's fork server (about 3 ms of CPU each); with a fresh interpreter per job (the
fallback) code-generation items went from about 55/s with 2 workers to about 100/s with 12.
Each function keeps ``last_results`` (a ``ScoreResult`` or None per completion) and
``last_breakdown`` (per family: ``n``, ``reward``, ``unparsed`` and, for white_box, ``r_io`` and
``r_wb``), and sends the same numbers to TRL's ``log_metric`` as ``scoring/<family>/<key>`` when
the trainer offers it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from factory.scoring import FAMILIES, ScoreResult, score_batch
from factory.scoring.parse import answer_lines, completion_text, extract_code
from factory.scoring.score import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S

ITEM_COLUMNS = ("family", "language", "source", "entry", "args", "questions", "tests")

Reward = float | None


def _column(columns: Mapping[str, Any], key: str, n: int) -> list[Any] | None:
    """A column's values, one per completion (None when the dataset has no such column)."""
    if key not in columns:
        return None
    values = columns[key]
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"column {key!r} must hold one value per completion, got {type(values).__name__}")
    if len(values) != n:
        raise ValueError(f"column {key!r} has {len(values)} values for {n} completions")
    return list(values)


def _families(columns: Mapping[str, Any], n: int) -> list[Any]:
    families = _column(columns, "family", n)
    if families is None:
        raise ValueError(
            "the reward functions need the dataset's 'family' column (keep it: GRPOConfig's "
            "remove_unused_columns must stay False)"
        )
    return families


def items_from_columns(columns: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    """The items (dataset rows) behind ``n`` completions, rebuilt from TRL's column keywords."""
    _families(columns, n)
    present = {key: _column(columns, key, n) for key in ITEM_COLUMNS}
    items = []
    for i in range(n):
        items.append({k: v[i] for k, v in present.items() if v is not None and v[i] is not None})
    return items


def default_workers() -> int:
    """Sandbox jobs in flight for a reward batch: 6 per usable core, at least 8, at most 64."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return min(64, max(8, 6 * cpus))


class FamilyReward:
    """A TRL reward function that judges the items of some families and returns None for others.

    An instance is a callable with a stable ``__name__`` (TRL's log key) and pickles cleanly.
    """

    def __init__(
        self,
        name: str,
        families: Iterable[str],
        *,
        alpha: float = 0.5,
        gated: bool = False,
        workers: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> None:
        families = tuple(families)
        unknown = [f for f in families if f not in FAMILIES]
        if not families or unknown:
            raise ValueError(f"families must be some of {', '.join(FAMILIES)}; got {families!r}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
        if not name.isidentifier():
            raise ValueError(f"name must be an identifier (TRL logs by it), got {name!r}")
        self.__name__ = name
        self.__qualname__ = name
        self.families = families
        self.alpha = alpha
        self.gated = gated
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.last_results: list[ScoreResult | None] = []
        self.last_breakdown: dict[str, dict[str, float]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__!r}, families={self.families!r})"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[Reward]:
        """One reward per completion; None where the item's family is not this function's."""
        n = len(completions)
        families = _families(kwargs, n)
        picked = [i for i, family in enumerate(families) if family in self.families]
        rewards: list[Reward] = [None] * n
        results: list[ScoreResult | None] = [None] * n
        if picked:
            items = items_from_columns(kwargs, n)
            scored = score_batch(
                [items[i] for i in picked],
                [completions[i] for i in picked],
                alpha=self.alpha,
                gated=self.gated,
                workers=self.workers or default_workers(),
                timeout_s=self.timeout_s,
                memory_mb=self.memory_mb,
            )
            for i, result in zip(picked, scored, strict=True):
                rewards[i] = result.reward
                results[i] = result
        self.last_results = results
        self.last_breakdown = breakdown(r for r in results if r is not None)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            for family, numbers in self.last_breakdown.items():
                for key, value in numbers.items():
                    if key != "n":
                        log_metric(f"scoring/{family}/{key}", value)
        return rewards


def breakdown(results: Iterable[ScoreResult]) -> dict[str, dict[str, float]]:
    """Per family: ``n``, mean ``reward``, ``unparsed`` (the share of completions with no usable
    answer) and, for white_box, mean ``r_io`` and ``r_wb``."""
    groups: dict[str, list[ScoreResult]] = {}
    for result in results:
        groups.setdefault(result.family, []).append(result)
    out: dict[str, dict[str, float]] = {}
    for family, group in sorted(groups.items()):
        n = len(group)
        numbers = {
            "n": float(n),
            "reward": sum(r.reward for r in group) / n,
            "unparsed": sum(r.n_right + r.n_wrong == 0 for r in group) / n,
        }
        if family == "white_box":
            numbers["r_io"] = sum(r.r_io or 0.0 for r in group) / n
            numbers["r_wb"] = sum(r.r_wb or 0.0 for r in group) / n
        out[family] = numbers
    return out


def make_white_box_reward(
    alpha: float = 0.5, gated: bool = False, *, name: str = "white_box_reward", **kwargs: Any
) -> FamilyReward:
    """The phase-1 reward: white_box items (``2·((1−α)·R_io + α·R_wb)``, 0 when ``gated`` and the
    output is wrong) and output items (0 or 1); None for others."""
    return FamilyReward(name, ("white_box", "output"), alpha=alpha, gated=gated, **kwargs)


def make_input_reward(*, name: str = "input_reward", **kwargs: Any) -> FamilyReward:
    """Input items: right when the original program, run in the sandbox on the proposed
    arguments, returns the item's output; None for others."""
    return FamilyReward(name, ("input",), **kwargs)


def make_codegen_reward(*, name: str = "codegen_reward", **kwargs: Any) -> FamilyReward:
    """The phase-2 reward: the fraction of unit tests the completion's code passes in the
    sandbox; None for others."""
    return FamilyReward(name, ("codegen",), **kwargs)


def make_coverage_reward(*, name: str = "coverage_reward", **kwargs: Any) -> FamilyReward:
    """Single coverage items (YES/NO); None for others."""
    return FamilyReward(name, ("coverage",), **kwargs)


def make_trace_reward(*, name: str = "trace_reward", **kwargs: Any) -> FamilyReward:
    """Single next_line and state items; None for others."""
    return FamilyReward(name, ("next_line", "state"), **kwargs)


white_box_reward = make_white_box_reward()
input_reward = make_input_reward()
codegen_reward = make_codegen_reward()
coverage_reward = make_coverage_reward()
trace_reward = make_trace_reward()


def reward_funcs(
    alpha: float = 0.5, gated: bool = False, *, with_format: bool = False, **kwargs: Any
) -> list[Callable[..., list[Reward]]]:
    """One reward function per family group, covering every family; ``format_reward`` last when
    ``with_format``. Pass the list as ``GRPOTrainer(reward_funcs=...)``."""
    funcs: list[Callable[..., list[Reward]]] = [
        make_white_box_reward(alpha, gated, **kwargs),
        make_input_reward(**kwargs),
        make_codegen_reward(**kwargs),
        make_coverage_reward(**kwargs),
        make_trace_reward(**kwargs),
    ]
    if with_format:
        funcs.append(format_reward)
    return funcs


_FORMAT_RE = re.compile(
    r"\A\s*<reasoning>(?P<reasoning>.*?)</reasoning>\s*<answer>(?P<answer>.*?)</answer>\s*\Z",
    re.DOTALL | re.IGNORECASE,
)


def _n_questions(questions: Any) -> int | None:
    if isinstance(questions, str):
        try:
            questions = json.loads(questions)
        except json.JSONDecodeError:
            return None
    return len(questions) if isinstance(questions, (list, tuple)) else None


def format_score(completion: Any, family: str | None = None, questions: Any = None) -> float:
    """1.0 when the text is ``<reasoning>…</reasoning>`` then ``<answer>…</answer>`` (nothing
    else around them), the reasoning is not blank and the answer has one line per question
    (for codegen: some code); else 0.0."""
    match = _FORMAT_RE.match(completion_text(completion))
    if match is None or not match.group("reasoning").strip():
        return 0.0
    block = match.group("answer")
    if family == "codegen":
        return 1.0 if extract_code(f"<answer>{block}</answer>").strip() else 0.0
    lines = answer_lines(block)
    expected = _n_questions(questions)
    if expected is None:
        return 1.0 if lines else 0.0
    return 1.0 if len(lines) == expected else 0.0


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[Reward]:
    """A small shaping reward for the answer format, for every item (see ``format_score``)."""
    n = len(completions)
    families = _column(kwargs, "family", n) or [None] * n
    questions = _column(kwargs, "questions", n) or [None] * n
    return [format_score(c, f, q) for c, f, q in zip(completions, families, questions, strict=True)]


__all__ = [
    "ITEM_COLUMNS",
    "FamilyReward",
    "breakdown",
    "default_workers",
    "codegen_reward",
    "coverage_reward",
    "format_reward",
    "format_score",
    "input_reward",
    "items_from_columns",
    "make_codegen_reward",
    "make_coverage_reward",
    "make_input_reward",
    "make_trace_reward",
    "make_white_box_reward",
    "reward_funcs",
    "trace_reward",
    "white_box_reward",
]

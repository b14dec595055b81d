"""A verl reward adapter over the one scorer (docs/design.md §5, §9).

verl's rule-based reward managers call ``compute_score(data_source, solution_str, ground_truth,
extra_info)`` per response (the batch manager calls ``compute_score_batch`` with lists), and
``custom_reward_function.reward_kwargs`` from the config arrive as extra keyword arguments
(``alpha``, ``gated``, ``timeout_s``, ``memory_mb``, ``return_dict`` here). verl itself is not
needed: its contract is this signature.

How a verl row maps onto an item (a released dataset row):

- ``solution_str``: the decoded response, judged like any completion (the last ``<answer>``
  block; the code inside it for codegen).
- ``ground_truth`` (``reward_model.ground_truth``): either the whole item (a dict, or its JSON
  text), or the item's ``questions`` (a list of question dicts, or its JSON text), or, for
  codegen, its ``tests`` (a list of assert lines, or its JSON text).
- ``extra_info``: the item's other columns (``family``, ``language``, ``source``, ``entry``, ``args``, and
  ``questions``/``tests`` when ``ground_truth`` does not carry them); other keys verl adds
  (``split``, ``index``...) are ignored. Values from ``ground_truth`` win over ``extra_info``.
  Arrays (parquet lists read back by pandas) are read as lists; JSON text for ``questions`` and
  ``tests`` is the safest form.
- ``family``: from the item, else from ``extra_info``, else from ``data_source`` when it names a
  family (``"white_box"``, ``"execverify/white_box"``, ``"execverify:white_box"``), else
  ``codegen`` when ``ground_truth`` is a list of test strings.

The result is a dict with the same keys for every family (verl logs every key and needs one
value per response): ``score`` (the reward: ``2·((1−α)·R_io + α·R_wb)`` for white_box, the
fraction right otherwise), ``acc`` (1.0 when every question or test is right), and ``right``,
``wrong``, ``unparsed`` (shares of the questions or tests). ``return_dict=False`` gives the bare
score. A malformed item raises ``UserError``; a malformed response scores 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from factory.errors import UserError
from factory.scoring import FAMILIES, ScoreResult, score_batch, score_item
from factory.scoring.score import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S

ITEM_KEYS = ("family", "language", "source", "entry", "args", "questions", "tests")
_SHAPES = "it must be the item, its questions or its tests (or their JSON text)"


def _plain(value: Any) -> Any:
    """Lists for array-likes (numpy arrays from parquet), everything else as it is."""
    if isinstance(value, (str, bytes, Mapping)):
        return value
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _family_from_source(data_source: Any) -> str | None:
    if not isinstance(data_source, str):
        return None
    for sep in ("/", ":"):
        data_source = data_source.rsplit(sep, 1)[-1]
    return data_source if data_source in FAMILIES else None


def item_from_verl(
    data_source: Any, ground_truth: Any, extra_info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The item (a released row) behind one verl row; see the module docstring for the mapping."""
    item: dict[str, Any] = {}
    for key in ITEM_KEYS:
        if extra_info is not None and extra_info.get(key) is not None:
            item[key] = _plain(extra_info[key])
    truth = _plain(ground_truth)
    if isinstance(truth, str):
        try:
            truth = json.loads(truth)
        except json.JSONDecodeError:
            raise UserError(f"ground_truth is not JSON: {_SHAPES}") from None
    if isinstance(truth, Mapping):
        item.update({k: _plain(v) for k, v in truth.items() if k in ITEM_KEYS and v is not None})
    elif isinstance(truth, list):
        if truth and all(isinstance(t, str) for t in truth):
            item["tests"] = truth
            item.setdefault("family", "codegen")
        else:
            item["questions"] = truth
    elif truth is not None:
        raise UserError(f"ground_truth is a {type(truth).__name__}: {_SHAPES}")
    if "family" not in item:
        family = _family_from_source(data_source)
        if family is None:
            raise UserError(
                f"no family for data_source {data_source!r}: put 'family' in extra_info or ground_truth"
            )
        item["family"] = family
    if item["family"] == "codegen":
        item.setdefault("entry", "f")  # used only to expose a function named like a built-in
    return item


def _as_dict(result: ScoreResult) -> dict[str, float]:
    total = len(result.per_question) or 1
    return {
        "score": float(result.reward),
        "acc": 1.0 if result.n_right == len(result.per_question) and result.per_question else 0.0,
        "right": result.n_right / total,
        "wrong": result.n_wrong / total,
        "unparsed": result.n_unparsed / total,
    }


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    alpha: float = 0.5,
    gated: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
    return_dict: bool = True,
    **_: Any,
) -> float | dict[str, float]:
    """verl's ``compute_score``: the scorer's reward for one response (a dict with ``score``)."""
    item = item_from_verl(data_source, ground_truth, extra_info)
    result = score_item(
        item, solution_str, alpha=alpha, gated=gated, timeout_s=timeout_s, memory_mb=memory_mb
    )
    return _as_dict(result) if return_dict else float(result.reward)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    alpha: float = 0.5,
    gated: bool = False,
    workers: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
    return_dict: bool = True,
    **_: Any,
) -> list[float] | list[dict[str, float]]:
    """verl's batched form (``BatchRewardManager``): the same, with sandboxed items in parallel."""
    n = len(solution_strs)
    infos = list(extra_infos) if extra_infos is not None else [None] * n
    if not len(data_sources) == len(ground_truths) == len(infos) == n:
        raise ValueError("data_sources, solution_strs, ground_truths and extra_infos differ in length")
    items = [item_from_verl(s, g, e) for s, g, e in zip(data_sources, ground_truths, infos, strict=True)]
    results = score_batch(
        items,
        list(solution_strs),
        alpha=alpha,
        gated=gated,
        workers=workers,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
    )
    if return_dict:
        return [_as_dict(r) for r in results]
    return [float(r.reward) for r in results]


__all__ = ["compute_score", "compute_score_batch", "item_from_verl"]

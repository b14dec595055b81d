"""Run a solver over benchmark items and score every sample with ``factory.scoring``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from factory.evaluate.metrics import incremental_consistency, summarize
from factory.scoring import ScoreResult, score_batch
from factory.solvers.base import Solver


def score_samples(
    items: Sequence[Mapping[str, Any]], samples: Sequence[Sequence[str]]
) -> list[list[ScoreResult]]:
    """Score ``samples[i]`` (the completions of item i) with the one scorer, in parallel where
    judging runs code; results keep the shape of ``samples``."""
    flat_items = [item for item, texts in zip(items, samples, strict=True) for _ in texts]
    scored = iter(score_batch(flat_items, [t for texts in samples for t in texts]))
    return [[next(scored) for _ in texts] for texts in samples]


def evaluate(
    items: Sequence[Mapping[str, Any]],
    solver: Solver,
    *,
    n: int = 1,
    temperature: float = 0.0,
    top_p: float = 1.0,
    max_tokens: int = 512,
    seed: int = 0,
    consistency: bool = False,
) -> dict[str, Any]:
    """The accuracy report of ``solver`` on ``items`` (``consistency``: add REval's score)."""
    texts = solver.generate([item["prompt"] for item in items], n, temperature, top_p, max_tokens, seed)
    results = score_samples(items, texts)
    report = summarize(items, results)
    report["model"] = solver.model_id
    report["sampling"] = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed}
    if consistency:
        report["incremental_consistency"] = incremental_consistency(items, results)
    return report

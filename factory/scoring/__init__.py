"""The one scoring module (docs/design.md §5): rewards, the difficulty filter and evaluation all call it.

``score_item(item, completion)`` judges one completion; ``score_batch`` many, running the
families that execute code (input, codegen) in parallel through the untrusted sandbox.
"""

from __future__ import annotations

from factory.scoring.score import (
    FAMILIES,
    QUESTION_FAMILIES,
    ScoreResult,
    needs_execution,
    score_batch,
    score_item,
)

__all__ = [
    "FAMILIES",
    "QUESTION_FAMILIES",
    "ScoreResult",
    "needs_execution",
    "score_batch",
    "score_item",
]

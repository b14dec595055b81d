"""Reproducible Hypothesis draws: the same (strategy, seed) gives the same examples."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st


def draw_examples(strategy: st.SearchStrategy, n: int, seed: int) -> list[Any]:
    """Up to ``n`` examples of ``strategy`` drawn by Hypothesis' own engine, seeded.

    Uses ``@given`` with ``@seed`` (the documented way to make Hypothesis reproducible), only the
    generate phase (no shrinking, no example database), and collects what it draws.
    """
    drawn: list[Any] = []

    @settings(
        max_examples=n,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn

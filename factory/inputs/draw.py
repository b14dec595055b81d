"""Reproducible Hypothesis draws: the same (strategy, seed, Hypothesis version) gives the same
examples, whatever else the process imported and however the package was installed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Draw from Hypothesis' own distribution only.

    Hypothesis (≥ 6.131) mixes into its draws, with a small chance, constants it finds in the
    *local* modules already imported (not site-packages, not tests). Our inputs would then depend
    on our own source code, on which modules the process happened to import, and on whether the
    package is installed editable: two runs with the same seed could differ. This hooks the
    private collection point (``providers._get_local_constants``); where a Hypothesis version has
    no such hook, it changes nothing (the Hypothesis version is recorded in every artifact).
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without the feature
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover
        yield
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()  # constants already merged for earlier draws
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


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

    with _without_local_constants():
        collect()
    return drawn

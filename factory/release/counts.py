"""What the card, the plots and the metrics report about a release: aggregations of the plan.

``plan`` is ``plan.plan_rows``' table (one row per input row, ``drop`` null when released, one
boolean column per config, ``plan.config_column``); ``programs`` is ``plan.decide_programs``' (one
row per program).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from factory.release.configs import ConfigSpec
from factory.release.plan import config_column
from factory.release.splits import SPLITS

RELEASED = pl.col("drop").is_null()


def drops(plan: pl.DataFrame) -> dict[str, int]:
    """Rows dropped, by reason."""
    return _counts(plan.filter(~RELEASED), "drop")


def config_rows(plan: pl.DataFrame, configs: list[ConfigSpec]) -> dict[str, dict[str, int]]:
    """Rows per config and split, for the configs that release any (splits without rows left out)."""
    rows = {}
    for config in configs:
        per_split = _counts(plan.filter(pl.col(config_column(config.name))), "split")
        if per_split:
            rows[config.name] = {s: per_split[s] for s in SPLITS if s in per_split}
    return rows


def tier_family(plan: pl.DataFrame, configs: list[ConfigSpec]) -> dict[tuple[Any, str], int]:
    """Released items by (tier, family), over the inputs whose rows are items (not, e.g., sft)."""
    uncounted = [c.source for c in configs if not c.counted]
    items = plan.filter(RELEASED & ~pl.col("input").is_in(uncounted))
    return {(t, f): n for t, f, n in items.group_by("tier", "family").len().iter_rows()}


def language_family(plan: pl.DataFrame, configs: list[ConfigSpec]) -> dict[tuple[str, str], int]:
    """Released items by (language, family), over the inputs whose rows are items."""
    uncounted = [c.source for c in configs if not c.counted]
    items = plan.filter(RELEASED & ~pl.col("input").is_in(uncounted))
    return {(lang, f): n for lang, f, n in items.group_by("language", "family").len().iter_rows()}


def trace_lengths(plan: pl.DataFrame) -> dict[int, int]:
    """Released cases by trace length, shortest first (a case's length: that of its last row)."""
    cases = plan.filter(RELEASED & _given("case_id") & pl.col("trace_length").is_not_null())
    lengths = cases.group_by("case_id").agg(pl.col("trace_length").last())
    return dict(sorted(_counts(lengths, "trace_length").items()))


def grammar_hashes(plan: pl.DataFrame) -> list[str]:
    """The grammar hashes of the released rows, sorted."""
    released = plan.filter(RELEASED & _given("grammar_hash"))
    return sorted(released.get_column("grammar_hash").unique())


def program_stats(programs: pl.DataFrame, benchmarks: list[str]) -> dict[str, Any]:
    """Programs in, kept and dropped by reason; kept ones by split; removed ones by benchmark and method."""
    fates = _counts(programs.with_columns(pl.col("drop").fill_null("kept")), "drop")
    kept = _counts(programs.filter(RELEASED), "split")
    removed: dict[str, dict[str, int]] = {name: {"ast": 0, "ngram": 0} for name in benchmarks}
    contaminated = programs.filter(pl.col("drop").str.starts_with("contaminated:"))
    for reason, method, n in contaminated.group_by("drop", "method").len().iter_rows():
        removed[reason.split(":", 1)[1]][method] += n
    return {
        "programs": {"in": programs.height, **dict(sorted(fates.items()))},
        "programs_by_split": {s: kept.get(s, 0) for s in SPLITS},
        "programs_removed": removed,
    }


def _counts(frame: pl.DataFrame, column: str) -> dict[Any, int]:
    return dict(frame.group_by(column).len().iter_rows())


def _given(column: str) -> pl.Expr:
    """Neither null nor empty."""
    return pl.col(column).is_not_null() & (pl.col(column) != "")

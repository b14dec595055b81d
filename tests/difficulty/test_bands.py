"""The difficulty band in polars: the same verdicts as the stage's per-row rule, for batches and
for re-banding the pass statistics a run wrote."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory.difficulty.bands import band, reband
from factory.errors import UserError


def _rule(passes: int, min_pass: int, max_pass: int) -> tuple[bool, str | None]:
    """The stage's rule, one task at a time."""
    kept = min_pass <= passes <= max_pass
    return kept, None if kept else ("too_easy" if passes > max_pass else "too_hard")


@given(st.lists(st.integers(0, 10), max_size=40), st.integers(0, 10), st.integers(0, 10))
@settings(max_examples=80, deadline=None)
def test_band_gives_the_per_row_rule(passes: list[int], min_pass: int, max_pass: int) -> None:
    frame = band(passes, min_pass, max_pass)
    assert frame.columns == ["passes", "in_band", "drop"]
    expected = [(p, *_rule(p, min_pass, max_pass)) for p in passes]
    assert frame.rows() == expected


def test_a_task_not_judged_has_no_band() -> None:
    assert band([None, 3], 1, 5).rows() == [(None, None, None), (3, True, None)]


def test_reband_recomputes_the_band_of_the_written_pass_stats(tmp_path: Path) -> None:
    stats = pl.DataFrame(
        {
            "task_id": ["a", "b", "c", "d"],
            "n": [10] * 4,
            "passes": [0, 2, 7, 10],
            "in_band": [False, True, True, False],
        }
    )
    (tmp_path / "pass_stats").mkdir()
    stats.write_parquet(tmp_path / "pass_stats" / "part-00000.parquet")
    again = reband(tmp_path / "pass_stats", 1, 9)
    assert again.get_column("in_band").to_list() == [False, True, True, False]  # the band it was
    narrow = reband(stats, 3, 8)
    assert narrow.select("task_id", "in_band", "drop").rows() == [
        ("a", False, "too_hard"),
        ("b", False, "too_hard"),
        ("c", True, None),
        ("d", False, "too_easy"),
    ]
    assert narrow.drop("in_band", "drop").equals(stats.drop("in_band"))  # nothing else changes


def test_reband_of_a_missing_folder_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        reband(tmp_path / "nowhere", 0, 1)

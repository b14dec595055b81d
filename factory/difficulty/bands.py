"""The difficulty band as polars expressions: which judged tasks a band keeps, and why the rest go.

A task is *in the band* when its ``passes`` (samples judged right, of ``n``) lie in
``[min_pass, max_pass]``; a task above the band is ``too_easy``, one below it ``too_hard``. The same
expressions band a batch the stage has just judged (``band``) and re-band the pass statistics a run
wrote (``reband``), so a new band needs no model call. A task without ``passes`` (not judged) has
neither a band nor a reason (null).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from factory.io import SHARD_GLOB, shard_paths


def in_band(min_pass: int, max_pass: int) -> pl.Expr:
    """``in_band``: ``min_pass <= passes <= max_pass``."""
    return pl.col("passes").is_between(min_pass, max_pass).alias("in_band")


def band_drop(min_pass: int, max_pass: int) -> pl.Expr:
    """``drop``: ``too_easy`` above the band, ``too_hard`` below it, null in it (or not judged)."""
    passes = pl.col("passes")
    return (
        pl.when(passes > max_pass)
        .then(pl.lit("too_easy"))
        .when(passes < min_pass)
        .then(pl.lit("too_hard"))
        .otherwise(pl.lit(None, pl.String))
        .alias("drop")
    )


def band(passes: Sequence[int | None], min_pass: int, max_pass: int) -> pl.DataFrame:
    """One row per task of ``passes``, in order: ``passes``, ``in_band`` and ``drop``."""
    frame = pl.DataFrame({"passes": list(passes)}, schema={"passes": pl.Int64})
    return frame.with_columns(in_band(min_pass, max_pass), band_drop(min_pass, max_pass))


def reband(pass_stats: pl.DataFrame | str | Path, min_pass: int, max_pass: int) -> pl.DataFrame:
    """The pass statistics (a frame, or the stage's ``pass_stats_dir``) with ``in_band`` for the band
    ``[min_pass, max_pass]`` and the ``drop`` reason of each task out of it."""
    if not isinstance(pass_stats, pl.DataFrame):
        shard_paths(pass_stats)  # a missing folder is a UserError naming it
        pass_stats = pl.read_parquet(Path(pass_stats) / SHARD_GLOB)
    return pass_stats.with_columns(in_band(min_pass, max_pass), band_drop(min_pass, max_pass))

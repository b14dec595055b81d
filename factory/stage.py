"""The stage contract and its one runner (docs/design.md §2).

A stage turns *units* (the rows of its input table, or the jobs it plans) into
:class:`Outcome` s, exactly one per unit and in order: the rows it writes for that unit, or the
reason the unit is dropped. :func:`run_stage` owns everything around that function: the output
shards (written atomically), progress, the accounting and the stats JSON. Its unit of account is
the stage's input unit, so ``in == out + dropped`` holds for every stage; a unit is *out* when it
is not dropped, whatever number of rows it wrote (an inputs-stage program gives several cases, a
tasks-stage case several items). Units a stage does not take (``accept``) are skipped, not counted:
the trace stage skips executions that are not ``ok``, which the execute stage counted.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from factory.io import ShardWriter
from factory.progress import progress
from factory.stats import StageStats

PROGRESS_STEP = 256  # outcomes between two progress updates


@dataclass
class Outcome:
    """What one unit became: ``rows`` to write (the main output) and ``side_rows`` (the second
    output, when the stage has one), and ``drop``, the reason it is dropped (None: it is kept).
    A dropped unit may still write rows: the execute stage records every case with its status."""

    rows: Sequence[dict[str, Any]] = ()
    drop: str | None = None
    tier: Any = None
    side_rows: Sequence[dict[str, Any]] = ()


@dataclass(frozen=True)
class Output:
    """A table a stage writes: its folder, schema and shard sizes."""

    folder: str | Path
    schema: pa.Schema
    rows_per_shard: int = 50_000
    group_rows: int = 2_000

    def writer(self) -> ShardWriter:
        return ShardWriter(self.folder, self.schema, self.rows_per_shard, self.group_rows)


@dataclass
class Tally:
    """What the runner counted, for a stage's extra statistics: units in and kept per tier, and
    the rows written to each output."""

    tiers_in: Counter = field(default_factory=Counter)
    tiers_out: Counter = field(default_factory=Counter)
    rows: int = 0
    side_rows: int = 0

    def by_tier(self, counts: Counter) -> dict[str, int]:
        """``counts`` keyed by the tier's text, in tier order."""
        return {str(t): counts[t] for t in sorted(counts)}


def chunks(units: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``units`` in lists of ``size`` (the last may be shorter); for stages that work in batches."""
    it = iter(units)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


#: The language of a row that names none: tables written before the ``language`` column were Python.
DEFAULT_LANGUAGE = "python"


def language_of(row: dict[str, Any]) -> str:
    """The registered name of a row's language (its ``language`` column, else Python)."""
    return row.get("language") or DEFAULT_LANGUAGE


def by_language(rows: Iterable[dict[str, Any]]) -> Iterator[tuple[str, Iterator[dict[str, Any]]]]:
    """The rows in order, as runs of consecutive rows of one language: a stage opens one language's
    workers per run (the synthesize stage writes each language's programs together, so a table
    has one run per language). Each run must be consumed before the next is asked for."""
    return itertools.groupby(rows, key=language_of)


def run_stage(
    name: str,
    units: Iterable[Any],
    outcomes: Callable[[Iterator[Any]], Iterator[Outcome]],
    output: Output,
    stats_path: str | Path,
    *,
    total: int | None,
    extra: Callable[[Tally], dict[str, Any]] = lambda tally: {},
    side_output: Output | None = None,
    accept: Callable[[Any], bool] | None = None,
    label: str | None = None,
) -> StageStats:
    """Run one stage: feed ``units`` (``total`` of them, for the progress bar) to ``outcomes``,
    write what comes back, count it, and write the stats (``extra(tally)`` adds the stage's own
    breakdowns) to ``stats_path``. On any error no output folder changes."""
    stats = StageStats(name)
    tally = Tally()
    with contextlib.ExitStack() as stack:
        writer = stack.enter_context(output.writer())
        side = stack.enter_context(side_output.writer()) if side_output is not None else None
        advance = stack.enter_context(progress(label or name, total))
        pending = 0

        def taken() -> Iterator[Any]:
            nonlocal pending
            for unit in units:
                if accept is None or accept(unit):
                    yield unit
                else:
                    pending += 1  # skipped: it moves the bar, it is not counted

        results = outcomes(taken())
        # A generator's close() runs its finally/with blocks: the stage's pool stops on any exit.
        stack.callback(getattr(results, "close", lambda: None))
        for outcome in results:
            stats.items_in += 1
            tally.tiers_in[outcome.tier] += 1
            writer.write_many(outcome.rows)
            if outcome.side_rows:
                assert side is not None, f"stage {name} gave side rows but has no side output"
                side.write_many(outcome.side_rows)
            if outcome.drop is None:
                stats.items_out += 1
                tally.tiers_out[outcome.tier] += 1
            else:
                stats.drop(outcome.drop)
            pending += 1
            if pending >= PROGRESS_STEP:
                advance(pending)
                pending = 0
        advance(pending)
    tally.rows = writer.rows  # the writers are closed: every row is counted
    tally.side_rows = side.rows if side is not None else 0
    stats.extra.update(extra(tally))
    stats.write(stats_path)
    return stats

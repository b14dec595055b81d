"""Per-stage accounting: items in, out, and dropped by reason.

Each stage writes two JSON files (:meth:`StageStats.write`):

* the full stats at the path it is given (``data/metrics/<stage>.json``): every breakdown (drops by
  reason, per tier, per family, provenance). The card, the assemble stage and the tests read these;
  in ``dvc.yaml`` they are plain outputs (``cache: false``, versioned in git);
* the headline numbers at :func:`summary_path` of it (``data/metrics/summary/<stage>.json``): ``in``,
  ``out``, ``dropped`` (the total) and ``yield`` (out / in). These are the stage's DVC metrics, so
  ``dvc metrics show`` is a table of four columns with a row per stage and ``dvc metrics diff``
  shows what moved.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from factory.io import provenance, write_json_atomic

SUMMARY_DIR = "summary"
SUMMARY_KEYS = ("in", "out", "dropped", "yield")


def summary_path(path: str | Path) -> Path:
    """Where :meth:`StageStats.write` puts the headline numbers of the full stats at ``path``:
    ``summary/<name>`` beside it (``data/metrics/x.json`` -> ``data/metrics/summary/x.json``)."""
    path = Path(path)
    return path.parent / SUMMARY_DIR / path.name


@dataclass
class StageStats:
    """Counts for one stage run. ``extra`` holds stage-specific breakdowns (e.g. yield per tier)."""

    stage: str
    items_in: int = 0
    items_out: int = 0
    dropped: Counter = field(default_factory=Counter)
    extra: dict[str, Any] = field(default_factory=dict)
    #: When the stage started (``time.monotonic``); the summary shows the elapsed time, the JSON
    #: files never do (same inputs, same bytes).
    started: float = field(default_factory=time.monotonic, repr=False, compare=False)

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] += n

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "in": self.items_in,
            "out": self.items_out,
            "dropped": dict(sorted(self.dropped.items())),
            "dropped_total": sum(self.dropped.values()),
            **self.extra,
            "provenance": provenance(),
        }

    def summary(self) -> dict[str, Any]:
        """The headline numbers (the DVC metrics): in, out, dropped in all, and yield = out / in
        (rounded to 4 places; absent when nothing came in)."""
        head: dict[str, Any] = {
            "in": self.items_in,
            "out": self.items_out,
            "dropped": sum(self.dropped.values()),
        }
        if self.items_in:
            head["yield"] = round(self.items_out / self.items_in, 4)
        return head

    def write(self, path: str | Path) -> None:
        """The full stats to ``path``, the headline numbers to :func:`summary_path` of it."""
        write_json_atomic(path, self.to_dict())
        write_json_atomic(summary_path(path), self.summary())

    def print_summary(self, console: Console | None = None) -> None:
        """One screen: in, out, dropped by reason, then ``extra["notice"]`` (if any) in bold yellow."""
        console = console or Console(stderr=True)
        elapsed = time.monotonic() - self.started
        table = Table(title=f"{self.stage}: {self.items_in:,} in → {self.items_out:,} out in {elapsed:.1f} s")
        table.add_column("dropped because", style="yellow")
        table.add_column("count", justify="right")
        table.add_column("share of in", justify="right")
        for reason, n in self.dropped.most_common(15):
            share = n / self.items_in if self.items_in else 0.0
            table.add_row(reason, f"{n:,}", f"{share:.1%}")
        if len(self.dropped) > 15:
            rest = sum(n for _, n in self.dropped.most_common()[15:])
            table.add_row(f"({len(self.dropped) - 15} more reasons)", f"{rest:,}", "")
        console.print(table)
        if "notice" in self.extra:
            console.print(f"[bold yellow]{self.extra['notice']}[/]")
